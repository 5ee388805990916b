package archive

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// makeRootfsTree builds the shared fixture tree; see archivetest.
func makeRootfsTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "target")
	if err := archivetest.MakeRootfsTree(root); err != nil {
		t.Fatal(err)
	}
	return root
}

// gnuCpio archives dir exactly as Buildroot's fs/cpio does.
func gnuCpio(t *testing.T, dir string, format string) []byte {
	t.Helper()
	requireTool(t, "cpio")
	cmd := exec.Command("sh", "-c", "find . | LC_ALL=C sort | cpio --quiet -o -H "+format+" --reproducible")
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cpio: %v: %s", err, stderr.String())
	}
	return out.Bytes()
}

// run runs a tool with stdin and returns its stdout, failing the test on error.
func run(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	requireTool(t, name)
	cmd := exec.Command(name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, stderr.String())
	}
	return out.Bytes()
}

// readAll reads every entry of r, with the data of regular files.
func readAll(t *testing.T, r Reader) ([]*Entry, map[string]string) {
	t.Helper()
	var entries []*Entry
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

// writeAll writes entries (data from the map) with w and closes it.
func writeAll(t *testing.T, w Writer, entries []*Entry, data map[string]string) {
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

// ignoreReadOnly drops the fields that describe where an entry was read
// from rather than what it is.
var ignoreReadOnly = cmpopts.IgnoreFields(Entry{}, "Offset", "Format")

func diffEntries(want, got []*Entry, opts ...cmp.Option) string {
	return cmp.Diff(want, got, append([]cmp.Option{ignoreReadOnly}, opts...)...)
}
