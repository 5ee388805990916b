package ociimage

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// The tests of the bounds docs/security.md states for images: the work of
// opening one is linear in its bytes, and a layer's bytes are capped.

// TestWhiteoutsLinear: a layer whose whiteouts name the same directory
// again and again, between entries of its own there, is merged in linear
// time. Each opaque marker walked all the directory held, making this
// layer cost some 10^9 steps.
func TestWhiteoutsLinear(t *testing.T) {
	const n = 20000
	lower := []ocitest.Entry{{Name: "d/", Type: tar.TypeDir}, {Name: "d/old", Data: "x"}}
	var upper []ocitest.Entry
	for i := range n {
		upper = append(upper, ocitest.Entry{Name: fmt.Sprintf("d/f%d", i)}, ocitest.Entry{Name: "d/.wh..wh..opq"}, ocitest.Entry{Name: "d/.wh.d"})
	}
	st := rawLayout(ocitest.Tar(lower), ocitest.Tar(upper))
	done := make(chan error, 1)
	go func() {
		img, err := openStore("whiteouts", Layout, st, Options{})
		if err == nil {
			err = drain(img)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("merging %d whiteouts of one directory took over 20 s", 2*n)
	}
}

// TestWhiteoutsKeepTheirLayer: the whiteouts of a layer still hide only
// what is below it, however often they name a directory.
func TestWhiteoutsKeepTheirLayer(t *testing.T) {
	lower := []ocitest.Entry{{Name: "d/", Type: tar.TypeDir}, {Name: "d/old", Data: "x"}, {Name: "d/s/", Type: tar.TypeDir}, {Name: "d/s/old", Data: "x"}}
	upper := []ocitest.Entry{{Name: "d/new", Data: "y"}, {Name: "d/.wh..wh..opq"}, {Name: "d/s/n", Data: "y"}, {Name: "d/.wh.s"}, {Name: "d/.wh..wh..opq"}, {Name: "d/t/n", Data: "y"}, {Name: "d/.wh.t"}}
	img, err := openStore("whiteouts", Layout, rawLayout(ocitest.Tar(lower), ocitest.Tar(upper)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	walk(img.tree.root, func(n *node) { got = append(got, n.name) })
	if want := ". d d/new d/s d/s/n d/t d/t/n"; strings.Join(got, " ") != want {
		t.Errorf("merged tree %q, want %q", strings.Join(got, " "), want)
	}
}

// TestMaxSizeCountsTheTail: what a layer holds after the tar's end
// counts against MaxSize, so a bomb behind the end-of-archive blocks is
// refused like one inside the tar. It was read to its end unbounded.
func TestMaxSizeCountsTheTail(t *testing.T) {
	layer := append(ocitest.Tar([]ocitest.Entry{{Name: "a", Data: "a"}}), make([]byte, 4<<20)...)
	_, err := openStore("tail", Layout, rawLayout(layer), Options{MaxSize: 1 << 20})
	if !errors.Is(err, archive.ErrTooLarge) || !strings.Contains(err.Error(), "layer 0 (sha256:") {
		t.Fatalf("got %v, want archive.ErrTooLarge naming layer 0", err)
	}
}

// TestNestedIndexReadOnce: indexes that name the same index many times
// are read once each. Each level multiplied the reads and the candidates:
// with eight names a level, 4680 reads of index blobs and 32768
// candidates; with sixteen, a million candidates.
func TestNestedIndexReadOnce(t *testing.T) {
	st := newMemStore()
	d := st.rawManifest(ocitest.Tar([]ocitest.Entry{{Name: "a", Data: "a"}}))
	var blobs []string
	for range 4 {
		var same []map[string]any
		for range 8 {
			same = append(same, d)
		}
		d = st.json(mtIndex, index(same...))
		blobs = append(blobs, "blobs/sha256/"+strings.TrimPrefix(d["digest"].(string), "sha256:"))
	}
	st.setIndex(index(d, d, d, d, d, d, d, d))
	// Every name leads to one manifest: one image (issue 38), opened.
	if _, err := openStore("fan-out", Layout, st, Options{}); err != nil {
		t.Errorf("got %v, want the one image the indexes name over and over", err)
	}
	for _, b := range blobs {
		// verifiedBlob reads it, then readSmall once more.
		if st.opens[b] > 2 {
			t.Errorf("index %s opened %d times, want at most 2", b, st.opens[b])
		}
	}
}

// TestDockerConfigReadOnce: a manifest.json naming one config in many
// entries reads it once to learn its platform. It was read, and hashed,
// once an entry: a 16 MiB config times entries of 20 bytes each.
func TestDockerConfigReadOnce(t *testing.T) {
	cfg := []byte(`{"os":"linux","architecture":"amd64","rootfs":{"type":"layers","diff_ids":[]}}`)
	name := digest.Bytes(cfg) + ".json"
	var ms []dockerManifest
	for range 1000 {
		ms = append(ms, dockerManifest{Config: name})
	}
	mj, err := json.Marshal(ms)
	if err != nil {
		t.Fatal(err)
	}
	st := newMemStore()
	st.files["manifest.json"], st.files[name] = mj, cfg
	_, err = openStore("many", Archive, st, Options{})
	if err == nil || !strings.Contains(err.Error(), "it holds 1000 images (linux/amd64 ×1000)") {
		t.Errorf("got %v, want the 1000 images", err)
	}
	if st.opens[name] > 1 {
		t.Errorf("config opened %d times, want 1", st.opens[name])
	}
}

// TestZstdNotInDockerManifest: Docker's schema 2 manifest has no zstd
// layer type, so a new zstd layer for an image of that manifest is
// refused before anything is written.
func TestZstdNotInDockerManifest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "docker")
	ocitest.WriteLayout(dir, ocitest.DockerImage([]ocitest.Step{{CreatedBy: "x", Entries: []ocitest.Entry{{Name: "a", Data: "a"}}}}, "linux/amd64"), "x")
	img, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	_, err = NewWriter(t.TempDir(), WriteOptions{Kind: Layout, Codec: compress.Zstd, Source: img})
	if err == nil || !strings.Contains(err.Error(), "Docker schema 2 manifest") {
		t.Errorf("got %v, want the Docker manifest refused", err)
	}
	if _, err := NewWriter(t.TempDir(), WriteOptions{Kind: Layout, Codec: compress.Gzip, Source: img}); err != nil {
		t.Errorf("gzip: %v", err)
	}
}
