package ociimage

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
// hard links, names) sees whatever the fuzzer makes.
func FuzzLayers(f *testing.F) {
	f.Add(ocitest.Tar([]ocitest.Entry{{Name: "d/", Type: tar.TypeDir}, {Name: "d/a", Data: "a"}, {Name: "d/l", Type: tar.TypeLink, Linkname: "d/a"}}),
		ocitest.Tar([]ocitest.Entry{{Name: "d/.wh.a"}, {Name: "d/.wh..wh..opq"}, {Name: ".wh..."}, {Name: "d/m", Type: tar.TypeLink, Linkname: "d/l"}}))
	f.Add([]byte{}, []byte("not a tar"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		readStore(Layout, rawLayout(a, b))
	})
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
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := newTarStore(bytesFile{bytes.NewReader(data)})
		if err != nil {
			return
		}
		readStore(Archive, st)
	})
}

// TestMain caps the fuzzer's minimizing (archivetest.CapFuzzMinimizing):
// a tarball hardly ever survives a cut; and fixes the locale skopeo runs
// in.
func TestMain(m *testing.M) {
	archivetest.CapFuzzMinimizing()
	archivetest.SetToolEnv()
	os.Exit(m.Run())
}
