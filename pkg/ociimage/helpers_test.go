package ociimage

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"regexp"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
)

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// memStore is an image's files in memory, counting how often each is
// opened: the fuzz targets run without a file system, and the bounds tests
// count the work.
type memStore struct {
	files map[string][]byte
	opens map[string]int
}

func newMemStore() *memStore {
	return &memStore{files: map[string][]byte{}, opens: map[string]int{}}
}

func (m *memStore) open(name string) (io.ReadCloser, int64, error) {
	b, ok := m.files[name]
	if !ok {
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	m.opens[name]++
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

func (m *memStore) has(name string) bool { _, ok := m.files[name]; return ok }
func (m *memStore) Close() error         { return nil }

// blob stores b under its digest and returns its descriptor.
func (m *memStore) blob(mediaType string, b []byte) map[string]any {
	h := digest.Bytes(b)
	m.files["blobs/sha256/"+h] = b
	return map[string]any{"mediaType": mediaType, "digest": "sha256:" + h, "size": len(b)}
}

func (m *memStore) json(mediaType string, v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return m.blob(mediaType, b)
}

const (
	mtManifest = "application/vnd.oci.image.manifest.v1+json"
	mtIndex    = "application/vnd.oci.image.index.v1+json"
)

// rawManifest stores an image of the uncompressed layers given (each
// layer's diff_id its digest) and returns its manifest's descriptor.
func (m *memStore) rawManifest(layers ...[]byte) map[string]any {
	var ids []string
	descs := []map[string]any{}
	for _, l := range layers {
		d := m.blob("application/vnd.oci.image.layer.v1.tar", l)
		ids = append(ids, d["digest"].(string))
		descs = append(descs, d)
	}
	cfg := m.json("application/vnd.oci.image.config.v1+json", map[string]any{"os": "linux", "architecture": "amd64", "rootfs": map[string]any{"type": "layers", "diff_ids": ids}})
	return m.json(mtManifest, map[string]any{"schemaVersion": 2, "mediaType": mtManifest, "config": cfg, "layers": descs})
}

// index is an image index naming manifests.
func index(manifests ...map[string]any) map[string]any {
	return map[string]any{"schemaVersion": 2, "mediaType": mtIndex, "manifests": manifests}
}

// setIndex writes index.json and oci-layout: the store is a layout.
func (m *memStore) setIndex(idx map[string]any) {
	b, err := json.Marshal(idx)
	if err != nil {
		panic(err)
	}
	m.files["index.json"] = b
	m.files["oci-layout"] = []byte(`{"imageLayoutVersion":"1.0.0"}`)
}

// rawLayout is a layout of one image of the uncompressed layers given.
func rawLayout(layers ...[]byte) *memStore {
	m := newMemStore()
	m.setIndex(index(m.rawManifest(layers...)))
	return m
}

// bytesFile is a tarball in memory, for newTarStore.
type bytesFile struct{ *bytes.Reader }

func (bytesFile) Close() error { return nil }

// drain reads img's merged view to the end, returning the first error.
func drain(img *Image) error {
	r := img.Reader()
	defer r.Close()
	for {
		if _, err := r.Next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return err
		}
	}
}
