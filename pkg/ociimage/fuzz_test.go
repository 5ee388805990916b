package ociimage

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// readAll opens path and reads its merged view to the end: any error is
// fine, a panic or a hang is not.
func readAll(path string) {
	img, err := Open(path, Options{MaxSize: 1 << 20})
	if err != nil {
		return
	}
	defer img.Close()
	r := img.Reader()
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			return
		}
		io.Copy(io.Discard, r)
	}
}

// FuzzLayers: two layers of any bytes, in a layout whose digests and
// diff_ids match them, so that the merge (whiteouts, opaque directories,
// hard links, names) sees whatever the fuzzer makes.
func FuzzLayers(f *testing.F) {
	f.Add(ocitest.Tar([]ocitest.Entry{{Name: "d/", Type: tar.TypeDir}, {Name: "d/a", Data: "a"}, {Name: "d/l", Type: tar.TypeLink, Linkname: "d/a"}}),
		ocitest.Tar([]ocitest.Entry{{Name: "d/.wh.a"}, {Name: "d/.wh..wh..opq"}, {Name: ".wh..."}, {Name: "d/m", Type: tar.TypeLink, Linkname: "d/l"}}))
	f.Add([]byte{}, []byte("not a tar"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		dir := t.TempDir()
		writeRawLayout(t, dir, a, b)
		readAll(dir)
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
		p := filepath.Join(t.TempDir(), "img.tar")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		readAll(p)
	})
}

// writeRawLayout writes a layout of the uncompressed layers given.
func writeRawLayout(t *testing.T, dir string, layers ...[]byte) {
	blobs := filepath.Join(dir, "blobs", "sha256")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(b []byte) string {
		h := digest.Bytes(b)
		if err := os.WriteFile(filepath.Join(blobs, h), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return "sha256:" + h
	}
	var ids []string
	var descs []map[string]any
	for _, l := range layers {
		d := put(l)
		ids = append(ids, d)
		descs = append(descs, map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": d, "size": len(l)})
	}
	cfg, _ := json.Marshal(map[string]any{"os": "linux", "architecture": "amd64", "rootfs": map[string]any{"type": "layers", "diff_ids": ids}})
	man, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": put(cfg), "size": len(cfg)}, "layers": descs})
	idx, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []map[string]any{{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": put(man), "size": len(man)}}})
	for n, b := range map[string][]byte{"index.json": idx, "oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`)} {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
