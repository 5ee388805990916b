package ociimage

import (
	"archive/tar"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// TestDockerDirHoldsNoLayer: a `docker save` tarball (docker 25: an OCI
// layout with manifest.json beside it) unpacked into a
// directory is read through manifest.json; finding each layer's size
// must not leave the layer open (one descriptor per layer, held for as
// long as the image is).
func TestDockerDirHoldsNoLayer(t *testing.T) {
	const layers = 8
	var steps []ocitest.Step
	for i := range layers {
		steps = append(steps, ocitest.Step{CreatedBy: fmt.Sprint("RUN ", i), Entries: []ocitest.Entry{{Name: fmt.Sprint("f", i), Data: fmt.Sprint(i)}}})
	}
	dir := t.TempDir()
	archive := filepath.Join(dir, "d.tar")
	ocitest.WriteDocker25(archive, ocitest.Image(steps, "linux/amd64"), "x:y")
	unpacked := filepath.Join(dir, "saved")
	for _, m := range readMembers(t, archive) {
		name := filepath.Join(unpacked, m.hdr.Name)
		if m.hdr.Typeflag != tar.TypeReg {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, m.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		return len(ents)
	}
	// A leaked *os.File is closed by the collector at some point: no
	// collection may hide one here.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := fds()
	img, err := Open(unpacked, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if len(img.Layers) != layers {
		t.Fatalf("%d layers, want %d", len(img.Layers), layers)
	}
	// The store's root is the one descriptor the open image holds.
	if held := fds() - before; held > 1 {
		t.Errorf("the open image holds %d descriptors, want 1 (a layer left open?)", held)
	}
}
