package ociimage

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// blob is one file of the image written: its digest, its name when it is
// not blobs/sha256/<hex>, and where its bytes come from (a scratch file of
// the writer's, a JSON document, or the source's store).
type blob struct {
	digest string
	name   string
	size   int64
	file   string // a file in the writer's directory, moved into place
	data   []byte // a JSON document
	from   *Layer // a source layer, copied and checked
	src    *Image
}

// assemble writes the image around the new layer l; nil for none, the
// source's config and manifest kept as they were.
func (w *Writer) assemble(l *Layer) error {
	src := w.opt.Source
	var layers []*Layer
	if src != nil && !w.opt.Squash {
		layers = append(layers, src.Layers...)
	}
	var cfg, man []byte
	var err error
	if l == nil {
		cfg, man = src.rawConfig, src.rawManifest
	} else {
		layers = append(layers, l)
		if cfg, err = w.config(layers); err != nil {
			return err
		}
	}
	cfgBlob := jsonBlob(cfg)
	w.id = cfgBlob.digest
	if man == nil {
		if man, err = w.manifest(layers, cfgBlob); err != nil {
			return err
		}
	}
	manBlob := jsonBlob(man)
	blobs := []blob{}
	seen := map[string]bool{}
	for _, sl := range layers {
		// Layers of one digest (empty layers, two steps that made the
		// same change) are one blob: a layout has one file of a name, and
		// a tarball with a member twice is refused (tarStore).
		if seen[sl.Digest] {
			if sl == l {
				os.Remove(l.blob)
			}
			continue
		}
		seen[sl.Digest] = true
		if sl == l {
			blobs = append(blobs, blob{digest: l.Digest, size: l.size, file: l.blob})
		} else {
			blobs = append(blobs, blob{digest: sl.Digest, size: sl.size, from: sl, src: src})
		}
	}
	blobs = append(blobs, cfgBlob, manBlob)
	index := w.index(manBlob)
	if w.opt.Kind == Archive {
		return w.writeTarball(blobs, index, layers, cfgBlob)
	}
	return w.writeLayout(blobs, index)
}

func jsonBlob(b []byte) blob {
	return blob{digest: "sha256:" + digest.Bytes(b), size: int64(len(b)), data: b}
}

// config is the source's config with the new rootfs, history and created
// (every other field kept as it was), or a new one.
func (w *Writer) config(layers []*Layer) ([]byte, error) {
	cfg := map[string]json.RawMessage{}
	src := w.opt.Source
	if src != nil {
		maps.Copy(cfg, src.config)
	} else {
		p, err := v1.ParsePlatform(w.platform())
		if err != nil {
			return nil, err
		}
		cfg["os"], cfg["architecture"] = mustJSON(p.OS), mustJSON(p.Architecture)
		if p.Variant != "" {
			cfg["variant"] = mustJSON(p.Variant)
		}
		cfg["config"] = json.RawMessage(`{}`)
	}
	var ids []string
	for _, l := range layers {
		ids = append(ids, l.DiffID)
	}
	cfg["rootfs"] = mustJSON(map[string]any{"type": "layers", "diff_ids": ids})
	var history []map[string]any
	if h, ok := cfg["history"]; ok {
		if err := json.Unmarshal(h, &history); err != nil {
			return nil, fmt.Errorf("config history: %w", err)
		}
	}
	if w.opt.Squash {
		for _, h := range history {
			h["empty_layer"] = true
		}
	}
	created := w.epoch().Format(time.RFC3339)
	history = append(history, map[string]any{"created": created, "created_by": w.opt.CreatedBy, "comment": "rootfs-trim"})
	cfg["history"], cfg["created"] = mustJSON(history), mustJSON(created)
	return json.Marshal(cfg)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only values of this file's own making
	}
	return b
}

// layerType is a layer's media type in a manifest of type man.
func layerType(l *Layer, man types.MediaType) types.MediaType {
	if l.mediaType != "" {
		return l.mediaType
	}
	docker := man == types.DockerManifestSchema2
	switch {
	case l.codec == compress.Gzip && docker:
		return types.DockerLayer
	case l.codec == compress.Gzip:
		return types.OCILayer
	case l.codec == compress.Zstd:
		return types.OCILayerZStd
	case docker:
		return types.DockerUncompressedLayer
	}
	return types.OCIUncompressedLayer
}

// manifest is the source's manifest with the new config and layers, or
// a new OCI manifest.
func (w *Writer) manifest(layers []*Layer, cfg blob) ([]byte, error) {
	m := map[string]json.RawMessage{}
	mt, ct := types.OCIManifestSchema1, types.OCIConfigJSON
	if src := w.opt.Source; src != nil && src.manifest != nil {
		maps.Copy(m, src.manifest)
		mt, ct = src.manifestType, src.configType
	}
	if _, ok := m["schemaVersion"]; !ok {
		m["schemaVersion"] = mustJSON(2)
	}
	m["mediaType"] = mustJSON(mt)
	m["config"] = mustJSON(v1.Descriptor{MediaType: ct, Size: cfg.size, Digest: mustHash(cfg.digest)})
	var descs []v1.Descriptor
	for _, l := range layers {
		descs = append(descs, v1.Descriptor{MediaType: layerType(l, mt), Size: l.size, Digest: mustHash(l.Digest)})
	}
	m["layers"] = mustJSON(descs)
	return json.Marshal(m)
}

func mustHash(s string) v1.Hash {
	h, err := v1.NewHash(s)
	if err != nil {
		panic(err) // digests of this package's own computing
	}
	return h
}

// index is the layout's index.json: the one image, with the annotations
// the source's index gave it (its ref names), or names from the tarball's
// RepoTags.
func (w *Writer) index(man blob) []byte {
	src := w.opt.Source
	ann := map[string]string{}
	mt := types.OCIManifestSchema1
	if src != nil {
		maps.Copy(ann, src.annotations)
		if len(ann) == 0 && len(src.repoTags) > 0 {
			ann["io.containerd.image.name"] = src.repoTags[0]
			if i := strings.LastIndex(src.repoTags[0], ":"); i >= 0 && !strings.Contains(src.repoTags[0][i:], "/") {
				ann[RefName] = src.repoTags[0][i+1:]
			}
		}
		if src.manifest != nil {
			mt = src.manifestType
		}
	}
	d := v1.Descriptor{MediaType: mt, Size: man.size, Digest: mustHash(man.digest)}
	if len(ann) > 0 {
		d.Annotations = ann
	}
	if p, err := v1.ParsePlatform(w.platform()); err == nil && p.OS != "" {
		d.Platform = p
	}
	ds := []v1.Descriptor{d}
	if src != nil && len(src.refs) > 1 {
		// The image had several names (umoci tag): each stays, one
		// descriptor each, as index.json had them.
		ds = ds[:0]
		for _, r := range src.refs {
			named := d
			named.Annotations = maps.Clone(ann)
			named.Annotations[RefName] = r
			ds = append(ds, named)
		}
	}
	return mustJSON(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: ds})
}

func (w *Writer) platform() string {
	if w.opt.Source != nil {
		return w.opt.Source.Platform
	}
	if w.opt.Platform != "" {
		return w.opt.Platform
	}
	return "linux/" + runtime.GOARCH
}

const ociLayout = `{"imageLayoutVersion":"1.0.0"}`

func (b blob) pathOf() string {
	if b.name != "" {
		return b.name
	}
	return "blobs/sha256/" + b.digest[len("sha256:"):]
}

func named(name string, data []byte) blob {
	return blob{name: name, data: data, size: int64(len(data))}
}

// writeLayout writes the layout into the writer's directory: blobs, with
// an oci-layout and index (the layout's own, already among the blobs, when
// index is nil).
func (w *Writer) writeLayout(blobs []blob, index []byte) error {
	if err := os.MkdirAll(filepath.Join(w.dir, "blobs", "sha256"), 0o755); err != nil {
		return err
	}
	if index != nil {
		blobs = append(blobs, named("oci-layout", []byte(ociLayout)), named("index.json", index))
	}
	for _, b := range blobs {
		if err := b.writeFile(filepath.Join(w.dir, filepath.FromSlash(b.pathOf()))); err != nil {
			return err
		}
	}
	w.result = w.dir
	return os.Chmod(w.dir, 0o755)
}

// copySource writes the source image as it is: a copy of its tarball,
// or of the layout's files that make it up (not the other blobs a layout
// may hold). Every layer is checked against its digest on the way.
func (w *Writer) copySource() error {
	src := w.opt.Source
	w.id = src.id
	if t, ok := src.store.(*tarStore); ok {
		return w.tarball(func(f *os.File) error {
			end, err := t.f.Seek(0, io.SeekEnd)
			if err == nil {
				_, err = io.Copy(f, io.NewSectionReader(t.f, 0, end))
			}
			if err != nil {
				return fmt.Errorf("%s: %w", src.Path, err)
			}
			return nil
		})
	}
	var blobs []blob
	for _, name := range src.files {
		b, err := readSmall(src.store, name)
		if err != nil {
			return fmt.Errorf("%s: %w", src.Path, err)
		}
		if h, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && digest.Bytes(b) != h {
			return fmt.Errorf("%s: %s changed while it was read", src.Path, names.Quote(name))
		}
		blobs = append(blobs, named(name, b))
	}
	for _, l := range src.Layers {
		blobs = append(blobs, blob{digest: l.Digest, size: l.size, from: l, src: src})
	}
	return w.writeLayout(blobs, nil)
}

func (b blob) writeFile(name string) error {
	switch {
	case b.file != "":
		if err := os.Rename(b.file, name); err != nil {
			return err
		}
		return os.Chmod(name, 0o644)
	case b.data != nil:
		return os.WriteFile(name, b.data, 0o644)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := b.copyTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copyTo copies b's bytes to w: a source layer's blob checked on the way
// against what the image says it is.
func (b blob) copyTo(w io.Writer) error {
	switch {
	case b.data != nil:
		_, err := w.Write(b.data)
		return err
	case b.file != "":
		f, err := os.Open(b.file)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	}
	rc, _, err := b.src.store.open(b.from.blob)
	if err != nil {
		return errMissing(b.from.String(), b.from.blobOrDigest(), err)
	}
	defer rc.Close()
	h := digest.New()
	n, err := io.Copy(io.MultiWriter(w, h), rc)
	if err != nil {
		return fmt.Errorf("%s: %w", b.from, err)
	}
	if got := "sha256:" + digest.Sum(h); got != b.digest || n != b.size {
		return fmt.Errorf("%s: changed while it was read: its sha256 is now %s", b.from, got)
	}
	return nil
}

// tarball writes the image's tarball, with fill, in the writer's
// directory.
func (w *Writer) tarball(fill func(f *os.File) error) error {
	f, err := os.CreateTemp(w.dir, ".image-")
	if err != nil {
		return err
	}
	defer f.Close()
	if err := fill(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	w.result = f.Name()
	return f.Close()
}

// writeTarball writes a docker-archive tarball as Docker 25+ does: the
// blobs, an OCI layout's index.json and oci-layout, and manifest.json.
func (w *Writer) writeTarball(blobs []blob, index []byte, layers []*Layer, cfg blob) error {
	var names []string
	for _, l := range layers {
		names = append(names, "blobs/sha256/"+l.Digest[len("sha256:"):])
	}
	var tags []string
	if src := w.opt.Source; src != nil {
		tags = src.repoTags
		if tags == nil && src.annotations["io.containerd.image.name"] != "" {
			tags = []string{src.annotations["io.containerd.image.name"]}
		}
	}
	manifest := mustJSON([]map[string]any{{"Config": "blobs/sha256/" + cfg.digest[len("sha256:"):], "RepoTags": tags, "Layers": names}})
	blobs = append(blobs, named("index.json", index), named("manifest.json", manifest), named("oci-layout", []byte(ociLayout)))
	mtime := w.epoch()
	return w.tarball(func(f *os.File) error {
		tw := tar.NewWriter(f)
		for _, d := range []string{"blobs/", "blobs/sha256/"} {
			if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		for _, b := range blobs {
			err := tw.WriteHeader(&tar.Header{Name: b.pathOf(), Typeflag: tar.TypeReg, Mode: 0o644, Size: b.size, ModTime: mtime, Format: tar.FormatPAX})
			if err == nil {
				err = b.copyTo(tw)
			}
			if b.file != "" {
				os.Remove(b.file) // a scratch file goes once copied
			}
			if err != nil {
				return err
			}
		}
		return tw.Close()
	})
}
