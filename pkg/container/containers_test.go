package container

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
)

// outputFormats is every format an output can have: each archive kind
// (archive.Kind's values, up to the first without a name) raw and
// compressed, and a tree. The codecs are TestEveryCodecHandled's.
func outputFormats() []archive.Format {
	var out []archive.Format
	for k := archive.Kind(1); !strings.HasPrefix(k.String(), "kind("); k++ {
		if k == archive.KindDir {
			out = append(out, archive.Format{Kind: k})
			continue
		}
		for _, c := range []compress.Codec{compress.None, compress.Gzip} {
			out = append(out, archive.Format{Kind: k, Codec: c})
		}
	}
	// An image: its layers are tar, its new layer gzip or not.
	for _, img := range []string{ociimage.LayoutName, ociimage.ArchiveName} {
		for _, c := range []compress.Codec{compress.None, compress.Gzip} {
			out = append(out, archive.Format{Kind: archive.KindTar, Codec: c, Image: img})
		}
	}
	// An initrd in an ISO image, as minikube ships it.
	return append(out, archive.Format{Kind: archive.KindCpio, Codec: compress.Gzip, Container: ContainerISO})
}

// sourceFor is what an output of format f is written from: the tree, or
// for an ISO image, minikube's BIOS image around the tree's initrd.
func sourceFor(t *testing.T, f archive.Format, tree string) string {
	if f.Container == "" {
		return tree
	}
	return isoOf(t, isotest.BIOS, f, tree)
}

// isoOf is minikube's image of kind around tree's initrd, of format f.
func isoOf(t *testing.T, kind isotest.Kind, f archive.Format, tree string) string {
	dir := t.TempDir()
	initrd := filepath.Join(dir, "initrd")
	inner := f
	inner.Container = ""
	_, err := Rewrite(tree, initrd, RewriteOptions{Format: func(archive.Format) (archive.Format, error) { return inner, nil }})
	mustDo(t, err)
	kernel := filepath.Join(dir, "kernel")
	mustDo(t, os.WriteFile(kernel, []byte("a kernel"), 0o644))
	iso := filepath.Join(dir, "in.iso")
	isotest.Build(t, kind, kernel, initrd, iso, nil)
	return iso
}

// listEntries opens path and lists its entries: name, type and mode, then
// the files' contents, sorted (which of a file's hard links holds its data
// is the format's choice).
func listEntries(t *testing.T, path string) []string {
	t.Helper()
	in, err := Open(path, OpenOptions{})
	mustDo(t, err)
	defer in.Close()
	entries, data := readAll(t, in)
	var out, contents []string
	for _, e := range entries {
		typ := e.Type
		switch typ {
		case archive.TypeTrailer:
			continue
		case archive.TypeHardlink:
			typ = archive.TypeRegular
		}
		out = append(out, fmt.Sprintf("%s %v %o", strings.TrimPrefix(e.Name, "./"), typ, e.Mode))
		if d := data[e.Name]; d != "" {
			contents = append(contents, d)
		}
	}
	sort.Strings(contents)
	return append(out, contents...)
}

// TestEveryContainerHandled: every container's row is complete and in
// docs/formats.md; every output format is written by exactly one row, and
// what it wrote is recognised by the same row, reads back as the tree it
// was written from, and is rewritten by Rewrite: a copy of itself when
// nothing changed.
func TestEveryContainerHandled(t *testing.T) {
	doc := docTable(t, "| container |")
	if len(doc) != len(containers) {
		t.Errorf("docs/formats.md's containers table has %d rows, containers %d", len(doc), len(containers))
	}
	for _, row := range containers {
		if row.Is == nil || row.Open == nil || row.Writes == nil || row.Create == nil {
			t.Errorf("container %q: a column is unset: %+v", row.Name, row)
		}
		if cells := doc[row.Name]; len(cells) != 5 || slicesHasEmpty(cells) {
			t.Errorf("container %q: its row in docs/formats.md is %q, want 5 cells", row.Name, cells)
		}
	}
	src := makeRootfsTree(t)
	want := listEntries(t, src)
	dir := t.TempDir()
	for _, f := range outputFormats() {
		name := strings.NewReplacer(" ", "", ",", "-", "(", "", ")", "").Replace(f.String())
		t.Run(name, func(t *testing.T) {
			var writers []string
			for _, row := range containers {
				if row.Writes(f) {
					writers = append(writers, row.Name)
				}
			}
			if len(writers) != 1 {
				t.Fatalf("written by %q, want one container", writers)
			}
			out := filepath.Join(dir, name)
			res, err := Rewrite(sourceFor(t, f, src), out, RewriteOptions{Format: func(archive.Format) (archive.Format, error) { return f, nil }})
			mustDo(t, err)
			if !res.Committed || res.Out != f {
				t.Errorf("Rewrite: %+v", res)
			}
			fi, err := os.Stat(out)
			mustDo(t, err)
			if row, ok := containerOf(out, fi); !ok || row.Name != writers[0] {
				t.Errorf("read as container %q, written as %q", row.Name, writers[0])
			}
			if d := cmp.Diff(want, listEntries(t, out)); d != "" {
				t.Errorf("entries (-tree +%s):\n%s", name, d)
			}
			if f.Kind == archive.KindDir {
				return
			}
			again := out + ".again"
			res, err = Rewrite(out, again, RewriteOptions{Reuse: true, ExpectSame: true})
			mustDo(t, err)
			if res.Out != res.In || res.Out.Kind != f.Kind || res.Out.Codec != f.Codec {
				t.Errorf("rewritten as it was: %+v", res)
			}
			if d := cmp.Diff(want, listEntries(t, again)); d != "" {
				t.Errorf("entries rewritten (-tree +%s):\n%s", name, d)
			}
			a, _ := os.ReadFile(out)
			b, _ := os.ReadFile(again)
			if f.Kind.IsCpio() && !bytes.Equal(a, b) {
				// What this tool writes as cpio it rewrites byte for byte.
				t.Errorf("rewritten unchanged: %d bytes, not the %d of the file", len(b), len(a))
			}
		})
	}
}

func slicesHasEmpty(cells []string) bool {
	for _, c := range cells {
		if c == "" {
			return true
		}
	}
	return false
}
