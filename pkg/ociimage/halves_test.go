package ociimage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// TestHalvesDiffer: a tarball whose manifest.json names one image and
// whose OCI layout (index.json) another is refused: skopeo's
// docker-archive reads the first, podman load and containerd the second.
// rootfs-trim read manifest.json and took nothing of a layout naming
// another image. The same for a layout directory with a manifest.json.
func TestHalvesDiffer(t *testing.T) {
	dir := t.TempDir()
	clean, evil := twoImages()
	a, b := filepath.Join(dir, "clean.tar"), filepath.Join(dir, "evil.tar")
	ocitest.WriteDocker25(a, ocitest.Image(clean, "linux/amd64"), "kic:clean")
	ocitest.WriteDocker25(b, ocitest.Image(evil, "linux/amd64"), "kic:evil")
	var hostile []tarMember
	for _, m := range readMembers(t, a) {
		if m.hdr.Name != "index.json" {
			hostile = append(hostile, m)
		}
	}
	for _, m := range readMembers(t, b) {
		if m.hdr.Name == "index.json" || strings.HasPrefix(m.hdr.Name, "blobs/") {
			hostile = append(hostile, m)
		}
	}
	name := filepath.Join(dir, "hostile.tar")
	writeMembers(t, name, hostile)
	if docker, ok := skopeoLayers(t, "docker-archive:"+name); ok {
		oci, _ := skopeoLayers(t, "oci-archive:"+name)
		if cmp.Equal(docker, oci) {
			t.Fatalf("skopeo reads one image from both halves: %q", docker)
		}
	}
	wantRefused(t, name, `manifest\.json and index\.json name different images: manifest\.json's image of config sha256:[0-9a-f]{64} is not the one index\.json names`)

	// A layout directory of the evil image, with a manifest.json naming
	// the clean one (its blobs beside the evil one's).
	layout := filepath.Join(dir, "layout")
	ocitest.WriteLayout(layout, ocitest.Image(evil, "linux/amd64"), "kic")
	for _, m := range readMembers(t, a) {
		if m.hdr.Name == "manifest.json" || strings.HasPrefix(m.hdr.Name, "blobs/sha256/") {
			if err := os.WriteFile(filepath.Join(layout, m.hdr.Name), m.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantRefused(t, layout, `manifest\.json and index\.json name different images`)

	// Both halves naming one image, as Docker 25+ writes them, is read.
	img, err := Open(a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if docker, ok := skopeoLayers(t, "docker-archive:"+a); ok {
		if d := cmp.Diff(docker, diffIDs(img)); d != "" {
			t.Errorf("layers (-skopeo +rootfs-trim):\n%s", d)
		}
		for _, ref := range []string{"docker-archive:" + a, "oci-archive:" + a} {
			if got := skopeoConfig(t, ref); got != img.ID() {
				t.Errorf("skopeo's config of %s %s, rootfs-trim's %s", ref, got, img.ID())
			}
		}
	}
}
