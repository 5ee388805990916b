package main

import (
	"archive/tar"
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// mkarchive FORMAT OUT SPEC: writes the entries SPEC lists, in its order,
// as a tar (Go's archive/tar) or newc (the project's writer) archive, for
// orders no tool makes from a tree: a directory, then a symlink of the
// same name. SPEC has one entry a line: "dir NAME", "file NAME TEXT...",
// "symlink NAME TARGET"; in newc "trailer" ends a member.
func mkarchive(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: mkarchive tar|newc OUT SPEC")
	}
	spec, err := os.Open(ts.MkAbs(args[2]))
	ts.Check(err)
	defer spec.Close()
	f, err := os.Create(ts.MkAbs(args[1]))
	ts.Check(err)
	defer f.Close()
	var add func(e *archive.Entry, data string) error
	var closeW func() error
	switch args[0] {
	case "tar":
		tw := tar.NewWriter(f)
		add, closeW = func(e *archive.Entry, data string) error { return addTar(tw, e, data) }, tw.Close
	case "newc":
		cw := archive.NewCpioWriter(f, archive.Newc)
		add = func(e *archive.Entry, data string) error {
			if err := cw.WriteHeader(e); err != nil {
				return err
			}
			_, err := io.WriteString(cw, data)
			return err
		}
		closeW = cw.Close
	default:
		ts.Fatalf("mkarchive: format %q: want tar or newc", args[0])
	}
	sc := bufio.NewScanner(spec)
	for line, ino := 1, uint64(1); sc.Scan(); line, ino = line+1, ino+1 {
		e, data, err := specEntry(sc.Text(), ino)
		if err == nil && e != nil {
			err = add(e, data)
		}
		if err != nil {
			ts.Fatalf("%s:%d: %v", args[2], line, err)
		}
	}
	ts.Check(sc.Err())
	ts.Check(closeW())
}

// specEntry is one line of mkarchive's SPEC; nil for a blank line.
func specEntry(line string, ino uint64) (*archive.Entry, string, error) {
	f := strings.Fields(line)
	if len(f) == 0 || strings.HasPrefix(f[0], "#") {
		return nil, "", nil
	}
	e := &archive.Entry{Mode: 0o644, Nlink: 1, Inode: ino, ModTime: time.Unix(1700000000, 0).UTC()}
	var data string
	switch {
	case f[0] == "trailer" && len(f) == 1:
		e.Type, e.Name, e.Mode, e.Inode, e.Nlink = archive.TypeTrailer, "TRAILER!!!", 0, 0, 1
	case f[0] == "dir" && len(f) == 2:
		e.Type, e.Name, e.Mode, e.Nlink = archive.TypeDir, f[1], 0o755, 2
	case f[0] == "file" && len(f) >= 2:
		e.Type, e.Name = archive.TypeRegular, f[1]
		if len(f) > 2 {
			data = strings.Join(f[2:], " ") + "\n"
		}
		e.Size = int64(len(data))
	case f[0] == "symlink" && len(f) == 3:
		e.Type, e.Name, e.Linkname, e.Mode = archive.TypeSymlink, f[1], f[2], 0o777
	default:
		return nil, "", fmt.Errorf("bad entry %q", line)
	}
	return e, data, nil
}

func addTar(tw *tar.Writer, e *archive.Entry, data string) error {
	if e.Type == archive.TypeTrailer {
		return nil
	}
	h := &tar.Header{Name: e.Name, Mode: int64(e.Mode), ModTime: e.ModTime, Size: e.Size, Linkname: e.Linkname}
	switch e.Type {
	case archive.TypeDir:
		h.Typeflag, h.Name = tar.TypeDir, e.Name+"/"
	case archive.TypeSymlink:
		h.Typeflag = tar.TypeSymlink
	default:
		h.Typeflag = tar.TypeReg
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := io.WriteString(tw, data)
	return err
}
