package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// fuzzOptions bound what one input may cost; PureGo keeps every exec in
// process (an external xz per layer would be most of the time).
var fuzzOptions = Options{MaxSize: 1 << 20, Backend: compress.PureGo}

// readStore opens the image in st and reads its merged view to the end:
// any error is fine, a panic or a hang is not. The fuzz targets stay in
// memory: with a directory and files per input, each exec cost
// milliseconds and the fuzzer's minimizing of one new input ran for a
// minute without a report, which looked like a hang.
func readStore(kind Kind, st store) {
	img, err := openStore("fuzz", kind, st, fuzzOptions)
	if err != nil {
		return
	}
	defer img.Close()
	drain(img)
}

// FuzzLayers: two layers of any bytes, in a layout whose digests and
// diff_ids match them, so that the merge (whiteouts, opaque directories,
// hard links, names) sees whatever the fuzzer makes; and Files, which
// gives the owners records, yields what the Reader yields.
func FuzzLayers(f *testing.F) {
	f.Add(ocitest.Tar([]ocitest.Entry{{Name: "d/", Type: tar.TypeDir}, {Name: "d/a", Data: "a"}, {Name: "d/l", Type: tar.TypeLink, Linkname: "d/a"}}),
		ocitest.Tar([]ocitest.Entry{{Name: "d/.wh.a"}, {Name: "d/.wh..wh..opq"}, {Name: ".wh..."}, {Name: "d/m", Type: tar.TypeLink, Linkname: "d/l"}}))
	f.Add([]byte{}, []byte("not a tar"))
	// An owners list a later layer adds, one it hides, a hard link to
	// dpkg's status whose first name is gone.
	f.Add(ocitest.Tar([]ocitest.Entry{{Name: "o/", Type: tar.TypeDir}, {Name: "o/a.list", Data: "/x\n"}, {Name: "o/b.list", Data: "/y\n"},
		{Name: "s", Data: "Package: a\n"}, {Name: "o/status", Type: tar.TypeLink, Linkname: "s"}}),
		ocitest.Tar([]ocitest.Entry{{Name: "o/.wh.a.list"}, {Name: "o/c.list", Data: "/z\n"}, {Name: ".wh.s"}}))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		img, err := openStore("fuzz", Layout, rawLayout(a, b), fuzzOptions)
		if err != nil {
			return
		}
		defer img.Close()
		filesAsReader(t, img)
	})
}

// filesAsReader checks that Files of every name is the Reader's merged
// view, entry for entry and byte for byte, or that both fail.
func filesAsReader(t *testing.T, img *Image) {
	t.Helper()
	type flat struct {
		Name, Linkname string
		Type           archive.Type
		Size           int64
		Data           string
	}
	files, ferr := img.Files(func(string) bool { return true }, 1<<30)
	var want []flat
	var rerr error
	r := img.Reader()
	defer r.Close()
	for rerr == nil {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if rerr = err; err != nil {
			break
		}
		b, err := io.ReadAll(r)
		if rerr = err; err == nil {
			want = append(want, flat{e.Name, e.Linkname, e.Type, e.Size, string(b)})
		}
	}
	if (ferr == nil) != (rerr == nil) {
		t.Fatalf("Files: %v; the Reader: %v", ferr, rerr)
	}
	if ferr != nil {
		return
	}
	var got []flat
	for _, f := range files {
		got = append(got, flat{f.Entry.Name, f.Entry.Linkname, f.Entry.Type, f.Entry.Size, string(f.Data)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Files (-Reader +Files):\n%s", diff)
	}
}

// FuzzTarball: any bytes as a docker save tarball.
func FuzzTarball(f *testing.F) {
	dir := f.TempDir()
	steps := []ocitest.Step{{CreatedBy: "x", Entries: []ocitest.Entry{{Name: "etc/", Type: tar.TypeDir}, {Name: "etc/.wh.x"}, {Name: "etc/a", Data: "a"}}}}
	ocitest.WriteDocker25(filepath.Join(dir, "d25.tar"), ocitest.Image(steps, "linux/amd64"), "x:y")
	ocitest.WriteDockerArchive(filepath.Join(dir, "d.tar"), ocitest.Image(steps, "linux/amd64"), "x:y")
	for _, n := range []string{"d25.tar", "d.tar"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// The hostile tarballs of issue 37: a member twice, a layer through a
	// symlink, a link to a link.
	b, err := os.ReadFile(filepath.Join(dir, "d25.tar"))
	if err != nil {
		f.Fatal(err)
	}
	twice := append(tarOf(f, []tarMember{file("manifest.json", []byte("[]"))}), b...)
	f.Add(twice)
	f.Add(tarOf(f, []tarMember{
		file("manifest.json", []byte(`[{"Config":"c.json","Layers":["a/layer.tar","b/layer.tar"]}]`)),
		file("c.json", []byte(`{"rootfs":{"diff_ids":["sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef","sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"]}}`)),
		file("a/layer.tar", make([]byte, 1024)),
		{tar.Header{Name: "b/layer.tar", Typeflag: tar.TypeSymlink, Linkname: "../a/layer.tar"}, nil},
		{tar.Header{Name: "c/layer.tar", Typeflag: tar.TypeSymlink, Linkname: "../b/layer.tar"}, nil},
	}))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Detect's buffered reader lists what archive/tar lists from the
		// bytes themselves.
		if a, b := tarNames(bytes.NewReader(data)), tarNames(&bufSeeker{f: bytes.NewReader(data), buf: make([]byte, 700)}); a != b {
			t.Fatalf("through bufSeeker %q, from the bytes %q", b, a)
		}
		st, err := newTarStore(bytesFile{bytes.NewReader(data)})
		if err != nil {
			return
		}
		readStore(Archive, st)
	})
}

// tarNames lists the members archive/tar reads from r, and its error.
func tarNames(r io.Reader) string {
	tr := tar.NewReader(r)
	var b strings.Builder
	for {
		h, err := tr.Next()
		if err != nil {
			fmt.Fprintf(&b, "(%v)", err)
			return b.String()
		}
		fmt.Fprintf(&b, "%q %c %d %q\n", h.Name, h.Typeflag, h.Size, h.Linkname)
	}
}

// tarOf is the tarball of members.
func tarOf(t testing.TB, members []tarMember) []byte {
	name := filepath.Join(t.TempDir(), "t.tar")
	writeMembers(t, name, members)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMain caps the fuzzer's minimizing (archivetest.CapFuzzMinimizing):
// a tarball hardly ever survives a cut; and fixes the locale skopeo runs
// in.
func TestMain(m *testing.M) {
	archivetest.CapFuzzMinimizing()
	archivetest.SetToolEnv()
	os.Exit(m.Run())
}
