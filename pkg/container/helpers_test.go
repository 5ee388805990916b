package container

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// The helpers of pkg/archive's tests that the tests moved here with the
// file around the archive use; archive's own are in its internal test
// package, which this one cannot import.

func makeRootfsTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "target")
	if err := archivetest.MakeRootfsTree(root); err != nil {
		t.Fatal(err)
	}
	return root
}

func readAll(t *testing.T, r archive.Reader) ([]*archive.Entry, map[string]string) {
	t.Helper()
	var entries []*archive.Entry
	data := map[string]string{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return entries, data
		}
		if err != nil {
			t.Fatalf("reading: %v", err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("reading %s: %v", e.Name, err)
		}
		if len(b) > 0 {
			data[e.Name] = string(b)
		}
		entries = append(entries, e)
	}
}

func writeAll(t *testing.T, w archive.Writer, entries []*archive.Entry, data map[string]string) {
	t.Helper()
	for _, e := range entries {
		if err := w.WriteHeader(e); err != nil {
			t.Fatalf("header %s: %v", e.Name, err)
		}
		if e.Size > 0 {
			if _, err := io.WriteString(w, data[e.Name]); err != nil {
				t.Fatalf("data %s: %v", e.Name, err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// sampleEntries: a few entries of the types a rootfs has, with data.
func sampleEntries() ([]*archive.Entry, map[string]string) {
	mt := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	e := func(name string, typ archive.Type, mode uint32, size int64) *archive.Entry {
		return &archive.Entry{Name: name, Type: typ, Mode: mode, ModTime: mt, Size: size, Nlink: 1}
	}
	entries := []*archive.Entry{
		e(".", archive.TypeDir, 0o755, 0),
		e("dev", archive.TypeDir, 0o755, 0),
		{Name: "dev/console", Type: archive.TypeChar, Mode: 0o622, ModTime: mt, Nlink: 1, RdevMajor: 5, RdevMinor: 1},
		e("usr", archive.TypeDir, 0o755, 0),
		e("usr/bin", archive.TypeDir, 0o755, 0),
		e("usr/bin/passwd", archive.TypeRegular, 0o4755, 11),
		e("usr/bin/busybox", archive.TypeRegular, 0o755, 3),
		{Name: "usr/bin/sh", Type: archive.TypeSymlink, Mode: 0o777, ModTime: mt, Nlink: 1, Linkname: "busybox"},
	}
	data := map[string]string{"usr/bin/passwd": "setuid root", "usr/bin/busybox": "box"}
	return entries, data
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The tool helpers the archive and container tests share.
var (
	requireGNUTar = archivetest.RequireGNUTar
	runIn         = archivetest.RunIn
	holeyFile     = archivetest.HoleyFile
)
