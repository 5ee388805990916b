package ociimage

import (
	"archive/tar"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// TestManifestLate: a docker save tarball whose manifest.json comes after
// 65,536 members (all of them names docker writes) is an image, as skopeo
// reads it; the first 65,536 members used to decide, and it was read as a
// plain tar of blobs.
func TestManifestLate(t *testing.T) {
	dir := t.TempDir()
	clean, _ := twoImages()
	a := filepath.Join(dir, "a.tar")
	ocitest.WriteDockerArchive(a, ocitest.Image(clean, "linux/amd64"), "kic:clean")
	ms := readMembers(t, a)
	var late []tarMember
	for i := range 1<<16 + 10 {
		late = append(late, tarMember{tar.Header{Name: fmt.Sprintf("%064x/", i), Typeflag: tar.TypeDir, Mode: 0o755, ModTime: ocitest.MTime}, nil})
	}
	for _, m := range ms {
		if m.hdr.Name != "manifest.json" {
			late = append(late, m)
		}
	}
	late = append(late, file("manifest.json", memberData(t, ms, "manifest.json")))
	name := filepath.Join(dir, "late.tar")
	writeMembers(t, name, late)
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if !IsImage(name, fi) {
		t.Fatal("not an image")
	}
	img, err := Open(name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if layers, ok := skopeoLayers(t, "docker-archive:"+name); ok {
		if d := cmp.Diff(layers, diffIDs(img)); d != "" {
			t.Errorf("layers (-skopeo +rootfs-trim):\n%s", d)
		}
		if got := skopeoConfig(t, "docker-archive:"+name); got != img.ID() {
			t.Errorf("skopeo's config %s, rootfs-trim's %s", got, img.ID())
		}
	}
}

// TestDetect: an input is an image only when every name in it is one an
// image writer makes; a tree or a tar with an oci-layout or a
// manifest.json at its top beside its own files is the tree or archive it
// is, unless an image is there all the same, which is refused.
func TestDetect(t *testing.T) {
	dir := t.TempDir()
	clean, _ := twoImages()
	img := ocitest.Image(clean, "linux/amd64")
	layout, docker, d25 := filepath.Join(dir, "layout"), filepath.Join(dir, "d.tar"), filepath.Join(dir, "d25.tar")
	ocitest.WriteLayout(layout, img, "kic")
	ocitest.WriteDockerArchive(docker, img, "kic:clean")
	ocitest.WriteDocker25(d25, img, "kic:clean")
	mustWrite := func(name, data string) {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A Buildroot target with an oci-layout at its top.
	target := filepath.Join(dir, "target")
	mustWrite(filepath.Join(target, "etc/cni/net.d/00-evil.conflist"), "{}")
	mustWrite(filepath.Join(target, "oci-layout"), `{"imageLayoutVersion":"1.0.0"}`)
	// A layout with a tree's etc/ beside it: both.
	mixedDir := filepath.Join(dir, "mixed")
	if err := archivetest.CopyTree(layout, mixedDir); err != nil {
		t.Fatal(err)
	}
	mustWrite(filepath.Join(mixedDir, "etc/cni/net.d/00-evil.conflist"), "{}")
	tree := []tarMember{{tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755}, nil}, file("etc/cni/net.d/00-evil.conflist", []byte("{}"))}
	rootfsTar := filepath.Join(dir, "rootfs.tar")
	writeMembers(t, rootfsTar, append([]tarMember{file("manifest.json", []byte(`{"name":"an app's manifest"}`)), file("oci-layout", []byte("{}"))}, tree...))
	mixedTar := filepath.Join(dir, "mixed.tar")
	writeMembers(t, mixedTar, append(readMembers(t, docker), tree...))
	dotTar := filepath.Join(dir, "dot.tar")
	dot := []tarMember{{tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}, nil}}
	for _, m := range readMembers(t, d25) {
		m.hdr.Name = "./" + m.hdr.Name
		dot = append(dot, m)
	}
	writeMembers(t, dotTar, dot)
	for _, tc := range []struct {
		name, path string
		image      bool
		err        string
	}{
		{"layout", layout, true, ""},
		{"docker-archive", docker, true, ""},
		{"docker25", d25, true, ""},
		{"docker25 under ./", dotTar, true, ""},
		{"target with oci-layout", target, false, ""},
		{"rootfs tar with manifest.json", rootfsTar, false, ""},
		{"layout and tree", mixedDir, false, `: both an image and a tree: its index\.json names an image, and it holds "etc", which no image writer puts there$`},
		{"docker-archive and tree", mixedTar, false, `: both an image and a plain archive: its manifest\.json names an image, and it holds "etc/", which no image writer puts there$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fi, err := os.Stat(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := Detect(tc.path, fi)
			if ok != tc.image || (err == nil) != (tc.err == "") || err != nil && !regexpMatch(tc.err, err.Error()) {
				t.Errorf("Detect: %v, %v; want %v, %s", ok, err, tc.image, tc.err)
			}
			if got := IsImage(tc.path, fi); got != (tc.image || tc.err != "") {
				t.Errorf("IsImage: %v", got)
			}
			if tc.err != "" {
				wantRefused(t, tc.path, tc.err)
			}
		})
	}
}
