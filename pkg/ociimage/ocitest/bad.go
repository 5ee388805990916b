package ocitest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BadKinds are the hostile images WriteBad makes, each a layout whose
// layer 1 (or the manifest naming it) is wrong in one way.
var BadKinds = []string{"digest", "diff-id", "whiteout-above-root", "hardlink-whitened", "not-tar", "missing-blob"}

// WriteBad writes the hostile layout kind at dir.
func WriteBad(dir, kind string) {
	base := Step{CreatedBy: "ADD base", Entries: []Entry{{Name: "etc/", Type: tar.TypeDir}, {Name: "etc/motd", Data: "hi\n"}}}
	second := Step{CreatedBy: "RUN step", Entries: []Entry{{Name: "etc/", Type: tar.TypeDir}, {Name: "etc/issue", Data: "kic\n"}}}
	switch kind {
	case "whiteout-above-root":
		second.Entries = append(second.Entries, Entry{Name: ".wh..."})
	case "hardlink-whitened":
		second.Entries = append(second.Entries, Entry{Name: "etc/.wh.motd"}, Entry{Name: "etc/motd2", Type: tar.TypeLink, Linkname: "etc/motd"})
	case "not-tar":
		second = Step{CreatedBy: "RUN step", Raw: []byte("this is not a tar, only text\n")}
	}
	WriteLayout(dir, Image([]Step{base, second}, "linux/amd64"), "bad")
	switch kind {
	case "digest":
		// The same tar, compressed again: its diff_id holds, its digest not.
		blob := LayerBlob(dir, 1)
		tarBytes := gunzip(blob)
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(tarBytes)
		zw.Close()
		must(os.WriteFile(layerPath(dir, 1), buf.Bytes(), 0o644))
	case "diff-id":
		RewriteConfig(dir, func(cfg map[string]any) {
			ids := cfg["rootfs"].(map[string]any)["diff_ids"].([]any)
			ids[1] = "sha256:" + fmt.Sprintf("%064x", 1)
		})
	case "missing-blob":
		must(os.Remove(layerPath(dir, 1)))
	}
}

func gunzip(b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	must(err)
	var out bytes.Buffer
	_, err = out.ReadFrom(zr)
	must(err)
	return out.Bytes()
}

// manifestOf reads the layout's one manifest and its name.
func manifestOf(dir string) (*v1.Manifest, string) {
	var idx v1.IndexManifest
	readJSON(filepath.Join(dir, "index.json"), &idx)
	name := filepath.Join(dir, "blobs", "sha256", idx.Manifests[0].Digest.Hex)
	var m v1.Manifest
	readJSON(name, &m)
	return &m, name
}

func layerPath(dir string, i int) string {
	m, _ := manifestOf(dir)
	return filepath.Join(dir, "blobs", "sha256", m.Layers[i].Digest.Hex)
}

// LayerBlob is the bytes of layer i of the layout at dir.
func LayerBlob(dir string, i int) []byte {
	b, err := os.ReadFile(layerPath(dir, i))
	must(err)
	return b
}

// RewriteConfig changes the config of the layout's one image and writes
// the config, manifest and index again, their digests right.
func RewriteConfig(dir string, change func(map[string]any)) {
	m, _ := manifestOf(dir)
	var cfg map[string]any
	readJSON(filepath.Join(dir, "blobs", "sha256", m.Config.Digest.Hex), &cfg)
	change(cfg)
	cb := mustJSON(cfg)
	m.Config.Digest, m.Config.Size = writeBlob(dir, cb), int64(len(cb))
	mb := mustJSON(m)
	var idx v1.IndexManifest
	readJSON(filepath.Join(dir, "index.json"), &idx)
	idx.Manifests[0].Digest, idx.Manifests[0].Size = writeBlob(dir, mb), int64(len(mb))
	must(os.WriteFile(filepath.Join(dir, "index.json"), mustJSON(idx), 0o644))
}

func writeBlob(dir string, b []byte) v1.Hash {
	h, _, err := v1.SHA256(bytes.NewReader(b))
	must(err)
	must(os.WriteFile(filepath.Join(dir, "blobs", "sha256", h.Hex), b, 0o644))
	return h
}

func readJSON(name string, v any) {
	b, err := os.ReadFile(name)
	must(err)
	must(json.Unmarshal(b, v))
}
