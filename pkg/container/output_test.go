package container

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// TestOutputDigest checks what the manifest records of an output, whether
// this process writes the file or an external compressor writes it
// directly: the digest and size of the bytes on disk.
func TestOutputDigest(t *testing.T) {
	src, err := archive.NewDirReader(makeRootfsTree(t), archive.DirReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	entries, data := readAll(t, src)
	tests := []struct {
		codec   compress.Codec
		backend compress.Backend
		tool    string // "" when written in process
	}{
		{compress.None, compress.Auto, ""},
		{compress.Gzip, compress.PureGo, ""},
		{compress.Gzip, compress.External, "pigz"},
		{compress.Xz, compress.External, "xz"},
		{compress.Zstd, compress.External, "zstd"},
		{compress.Lz4Legacy, compress.External, "lz4"},
	}
	for _, tt := range tests {
		t.Run(tt.codec.String()+"-"+tt.backend.String(), func(t *testing.T) {
			if tt.tool != "" {
				archivetest.RequireTool(t, tt.tool)
			}
			if got := compress.RunsTool(tt.codec, compress.WriterOptions{Backend: tt.backend}); got != (tt.tool != "") {
				t.Fatalf("RunsTool = %v", got)
			}
			path := filepath.Join(t.TempDir(), "out")
			o, err := createStream(path, archive.Format{Kind: archive.KindCpio, Codec: tt.codec}, OutputOptions{Compress: compress.WriterOptions{Backend: tt.backend}, Digest: true})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Abort()
			for _, e := range entries {
				if err := o.WriteHeader(e); err != nil {
					t.Fatal(err)
				}
				if _, err := io.WriteString(o, data[e.Name]); err != nil {
					t.Fatal(err)
				}
			}
			if err := o.Commit(); err != nil {
				t.Fatal(err)
			}
			if tt.tool != "" && !strings.Contains(o.Compressor, "external "+tt.tool) {
				t.Errorf("compressor %q, want external %s", o.Compressor, tt.tool)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if want := "sha256:" + hex.EncodeToString(sum[:]); o.Digest() != want {
				t.Errorf("Digest() = %s, file is %s", o.Digest(), want)
			}
			in, err := Open(path, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if in.Format.Codec != tt.codec {
				t.Errorf("read back as %v", in.Format.Codec)
			}
		})
	}
}

// A new directory given with a trailing slash, as a shell's completion
// writes it: `repack IN OUT/` once failed with `stat OUT/: no such file or
// directory`.
func TestCreateDirWithTrailingSlash(t *testing.T) {
	parent := t.TempDir()
	o, err := treeContainer{}.create(writing{path: filepath.Join(parent, "tree") + "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	if err := o.WriteHeader(&archive.Entry{Name: ".", Type: archive.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(parent, "tree")); err != nil || !fi.IsDir() {
		t.Fatalf("tree: %v, %v", fi, err)
	}
	left, _ := os.ReadDir(parent)
	if len(left) != 1 {
		t.Errorf("%d entries beside the tree, want none: %v", len(left)-1, left)
	}
}
