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
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
)

// Sample is an input a container's row supplies to the table tests, made
// from a tree: Path is one this container reads, Want what to ask of a
// rewrite for an output this container writes, at a name ending in Ext.
type Sample struct {
	Name string
	Row  string // set by RowSamples
	Path string
	Want Want
	Ext  string
}

// sampler is what every row of containers supplies, in its own _test.go
// file (a method on its type): TestEveryContainerHandled fails for a row
// without one.
type sampler interface {
	samples(t *testing.T, tree string) []Sample
}

// rewriteTo writes tree as want asks, at a file named name in a new
// directory.
func rewriteTo(t *testing.T, tree, name string, want Want) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	_, err := Rewrite(tree, out, RewriteOptions{Want: want})
	mustDo(t, err)
	return out
}

func (streamContainer) samples(t *testing.T, tree string) []Sample {
	var out []Sample
	for _, w := range []Want{{Format: "newc", Codec: "zstd"}, {Format: "tar", Codec: "none"}, {Format: "tar", Codec: "gzip"}} {
		name := w.Format + "-" + w.Codec
		out = append(out, Sample{Name: name, Path: rewriteTo(t, tree, name, w), Want: w})
	}
	return out
}

func (segmentsContainer) samples(t *testing.T, tree string) []Sample {
	var out []Sample
	for _, w := range []Want{{Format: "newc", Codec: "none"}, {Format: "crc", Codec: "none"}, {Format: "newc", Codec: "gzip"}, {Format: "crc", Codec: "gzip"}} {
		name := w.Format + "-" + w.Codec
		out = append(out, Sample{Name: name, Path: rewriteTo(t, tree, name, w), Want: w})
	}
	return out
}

func (treeContainer) samples(_ *testing.T, tree string) []Sample {
	return []Sample{{Name: "dir", Path: tree, Want: Want{Format: "dir"}}}
}

func (imageContainer) samples(t *testing.T, tree string) []Sample {
	var out []Sample
	for _, w := range []Want{{Format: "oci", Codec: "none"}, {Format: "oci", Codec: "gzip"}, {Format: "docker-archive", Codec: "none"}, {Format: "docker-archive", Codec: "gzip"}} {
		name := w.Format + "-" + w.Codec
		out = append(out, Sample{Name: name, Path: rewriteTo(t, tree, name, w), Want: w})
	}
	return out
}

// samples: minikube's BIOS image around the tree's initrd.
func (isoContainer) samples(t *testing.T, tree string) []Sample {
	return []Sample{{Name: "newc-gzip", Path: isoOf(t, isotest.BIOS, Want{Format: "newc", Codec: "gzip"}, tree), Ext: ".iso"}}
}

// isoOf is minikube's image of kind around tree's initrd, written as
// want asks.
func isoOf(t *testing.T, kind isotest.Kind, want Want, tree string) string {
	initrd := rewriteTo(t, tree, "initrd", want)
	dir := t.TempDir()
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

// TestEveryContainerHandled: every container's row has its row in
// docs/formats.md and supplies samples; each sample is read as its row's
// (TestContainerOrder holds which row takes it), reads back as the
// tree it was made from, and is rewritten by Rewrite into an output of
// the same container, which reads back the same, and is rewritten again
// as a copy of itself when nothing changed.
func TestEveryContainerHandled(t *testing.T) {
	doc := docTable(t, "| container |")
	if len(doc) != len(containers) {
		t.Errorf("docs/formats.md's containers table has %d rows, containers %d", len(doc), len(containers))
	}
	for _, c := range containers {
		if cells := doc[c.Name()]; len(cells) != 5 || slicesHasEmpty(cells) {
			t.Errorf("container %q: its row in docs/formats.md is %q, want 5 cells", c.Name(), cells)
		}
	}
	withTarInTar(t) // a row of the tests' own, which docs/formats.md has not
	src := makeRootfsTree(t)
	want := listEntries(t, src)
	for _, c := range containers {
		s, ok := c.(sampler)
		if !ok {
			t.Errorf("container %q supplies no samples", c.Name())
			continue
		}
		for _, sample := range s.samples(t, src) {
			t.Run(c.Name()+"/"+sample.Name, func(t *testing.T) {
				checkSample(t, c, sample, want)
			})
		}
	}
}

// checkSample: sample is c's, reads back as want, and is rewritten into
// an output of c that reads back as want too.
func checkSample(t *testing.T, c Container, sample Sample, want []string) {
	t.Helper()
	isC := func(path string) {
		t.Helper()
		in, err := Open(path, OpenOptions{})
		mustDo(t, err)
		in.Close()
		if got := in.Format.Container; got.Name() != c.Name() {
			t.Errorf("%s: read as %s, want %s", filepath.Base(path), got.Name(), c.Name())
		}
	}
	isC(sample.Path)
	if d := cmp.Diff(want, listEntries(t, sample.Path)); d != "" {
		t.Errorf("entries (-tree +sample):\n%s", d)
	}
	out := filepath.Join(t.TempDir(), "out"+sample.Ext)
	res, err := Rewrite(sample.Path, out, RewriteOptions{Want: sample.Want})
	mustDo(t, err)
	if !res.Committed {
		t.Errorf("Rewrite: %+v", res)
	}
	isC(out)
	if d := cmp.Diff(want, listEntries(t, out)); d != "" {
		t.Errorf("entries (-tree +output):\n%s", d)
	}
	if res.Out.Kind == archive.KindDir {
		return
	}
	again := filepath.Join(t.TempDir(), "again"+sample.Ext)
	res2, err := Rewrite(out, again, RewriteOptions{Reuse: true, ExpectSame: true})
	mustDo(t, err)
	if res2.Out != res2.In || res2.Out.Kind != res.Out.Kind || res2.Out.Codec != res.Out.Codec {
		t.Errorf("rewritten as it was: %+v", res2)
	}
	if d := cmp.Diff(want, listEntries(t, again)); d != "" {
		t.Errorf("entries rewritten (-tree +again):\n%s", d)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(again)
	if res.Out.Kind.IsCpio() && !bytes.Equal(a, b) {
		// What this tool writes as cpio it rewrites byte for byte.
		t.Errorf("rewritten unchanged: %d bytes, not the %d of the file", len(b), len(a))
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

// TestContainerOrder: an input two rows could take goes to the one the
// order of containers puts first, and that is the one that reads it and
// says whether its unknown owners are worth a note (OwnersUnknown): an
// image tarball is a tar file too, an image layout a tree, an ISO image
// and an initrd regular files any stream reader would try.
func TestContainerOrder(t *testing.T) {
	tree := makeRootfsTree(t)
	plainTar := rewriteTo(t, tree, "plain.tar", Want{Format: "tar", Codec: "none"})
	for _, tc := range []struct {
		name  string
		path  string
		first Container // the row that takes it
		also  Container // a later row that would take it too
	}{
		{"docker-archive-vs-tar", rewriteTo(t, tree, "image.tar", Want{Format: "docker-archive", Codec: "none"}), imageContainer{}, streamContainer{}},
		{"oci-layout-vs-tree", rewriteTo(t, tree, "layout", Want{Format: "oci", Codec: "gzip"}), imageContainer{}, treeContainer{}},
		{"iso-vs-stream", isoOf(t, isotest.BIOS, Want{Format: "newc", Codec: "gzip"}, tree), isoContainer{}, streamContainer{}},
		{"raw-cpio-segments-vs-stream", rewriteTo(t, tree, "initrd.cpio", Want{Format: "newc", Codec: "none"}), segmentsContainer{}, streamContainer{}},
		{"plain-tar-is-a-stream", plainTar, streamContainer{}, nil},
		{"tree-is-a-tree", tree, treeContainer{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fi, err := os.Stat(tc.path)
			mustDo(t, err)
			if got, ok := containerOf(tc.path, fi); !ok || got != tc.first {
				t.Errorf("taken by %v, want %s", got, tc.first.Name())
			}
			if got, want := OwnersUnknown(tc.path), tc.first.ownersUnknown(); got != want {
				t.Errorf("OwnersUnknown: %q, want its container's %q", got, want)
			}
			if tc.also != nil && !tc.also.Is(tc.path, fi) {
				t.Errorf("%s would not take it: the order is not what decides", tc.also.Name())
			}
			in, err := Open(tc.path, OpenOptions{})
			mustDo(t, err)
			defer in.Close()
			if in.Format.Container.Name() != tc.first.Name() {
				t.Errorf("read as %s, want %s", in.Format.Container.Name(), tc.first.Name())
			}
		})
	}
}
