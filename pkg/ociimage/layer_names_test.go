package ociimage

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// TestLayerNameSources: a layer is read by the tar reader of plain tar
// inputs, so a layer entry whose name sources disagree (GNU tar, and the
// runtimes' unpackers built on archive/tar or libarchive, would not agree
// on the file) is refused when the image is opened, naming the layer.
func TestLayerNameSources(t *testing.T) {
	for _, h := range archivetest.HostileTars() {
		t.Run(h.Name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "layout")
			ocitest.WriteLayout(dir, ocitest.Image([]ocitest.Step{{CreatedBy: "ADD hostile.tar /", Raw: h.Tar}}, "linux/amd64"), "hostile")
			img, err := Open(dir, Options{})
			if err == nil {
				img.Close()
				t.Fatal("opened, want the layer refused")
			}
			if !strings.Contains(err.Error(), "refusing it") {
				t.Errorf("err = %v, want the entry refused", err)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
}
