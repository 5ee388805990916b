// Package ocitest builds container images for the tests with
// go-containerregistry, an implementation of the image spec that is not
// rootfs-trim's own: a kicbase-like image of several layers, one per
// Dockerfile step, from the package fixtures (testdata/packages), with
// whiteouts, an opaque directory and a hard link whose first name a later
// layer removes; and the layouts and tarballs docker, podman and Docker
// 25+ write.
package ocitest

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/compression"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// MTime is every fixture entry's mtime.
var MTime = time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC)

// Entry is one member of a layer.
type Entry struct {
	Name     string
	Type     byte // tar.TypeReg when 0
	Mode     int64
	Data     string
	Linkname string
}

// Tar is the uncompressed tar of entries, in order.
func Tar(entries []Entry) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Mode: e.Mode, ModTime: MTime, Linkname: e.Linkname, Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.Data))
		}
		must(tw.WriteHeader(h))
		_, err := tw.Write([]byte(e.Data))
		must(err)
	}
	must(tw.Close())
	return buf.Bytes()
}

// Tree is the entries of the directory root, as an image build puts a
// package's files: sorted, parents first, owned by root.
func Tree(root string) []Entry {
	var out []Entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			out = append(out, Entry{Name: rel + "/", Type: tar.TypeDir})
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out = append(out, Entry{Name: rel, Type: tar.TypeSymlink, Linkname: t, Mode: 0o777})
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, _ := d.Info()
			out = append(out, Entry{Name: rel, Data: string(b), Mode: int64(fi.Mode().Perm())})
		}
		return nil
	})
	must(err)
	return out
}

// Step is one layer and the Dockerfile line that made it.
type Step struct {
	CreatedBy string
	Entries   []Entry
	// Raw, when set, is the layer's bytes instead (a layer that is not a
	// tar); compressed by go-containerregistry if not already gzip.
	Raw []byte
}

// Image builds an image of steps, for platform, with a config like
// kicbase's (ENV container=docker, the entrypoint, STOPSIGNAL, EXPOSE 22)
// and an empty_layer history entry between the first two steps. Its
// media types are OCI's, as buildx's OCI exporter writes (skopeo 1.9 and
// umoci find only those in a layout).
func Image(steps []Step, platform string) v1.Image {
	return image(steps, platform, true, false)
}

// DockerImage is Image with Docker's media types, as docker save's.
func DockerImage(steps []Step, platform string) v1.Image {
	return image(steps, platform, false, false)
}

// ZstdImage is Image with zstd layers (tar+zstd), as buildkit's
// compression=zstd and podman push --compression-format zstd make them.
func ZstdImage(steps []Step, platform string) v1.Image {
	return image(steps, platform, true, true)
}

func image(steps []Step, platform string, oci, zstd bool) v1.Image {
	img := empty.Image
	layerType := types.DockerLayer
	if oci {
		img = mutate.MediaType(mutate.ConfigMediaType(img, types.OCIConfigJSON), types.OCIManifestSchema1)
		layerType = types.OCILayer
	}
	opts := []tarball.LayerOption{tarball.WithMediaType(layerType)}
	if zstd {
		// go-containerregistry wants both: the media type alone would
		// still be gzip (tarball.WithCompression's comment).
		opts = []tarball.LayerOption{tarball.WithMediaType(types.OCILayerZStd), tarball.WithCompression(compression.ZStd)}
	}
	for i, s := range steps {
		b := s.Raw
		if b == nil {
			b = Tar(s.Entries)
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, opts...)
		must(err)
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{CreatedBy: s.CreatedBy, Created: v1.Time{Time: MTime}}})
		must(err)
		if i == 0 {
			img, err = mutate.Append(img, mutate.Addendum{History: v1.History{CreatedBy: "ENV container=docker", EmptyLayer: true, Created: v1.Time{Time: MTime}}})
			must(err)
		}
	}
	cf, err := img.ConfigFile()
	must(err)
	cf = cf.DeepCopy()
	p, err := v1.ParsePlatform(platform)
	must(err)
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: MTime}
	cf.Config.Env = []string{"container=docker", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	cf.Config.Entrypoint = []string{"/usr/local/bin/entrypoint", "/sbin/init"}
	cf.Config.StopSignal = "SIGRTMIN+3"
	cf.Config.ExposedPorts = map[string]struct{}{"22/tcp": {}}
	cf.Config.Labels = map[string]string{"org.opencontainers.image.title": "kicbase-like"}
	img, err = mutate.ConfigFile(img, cf)
	must(err)
	return img
}

// Kicbase is the kicbase-like image's steps, from the fixtures in
// packages (testdata/packages).
func Kicbase(packages string) []Step {
	base := []Entry{
		{Name: "etc/", Type: tar.TypeDir},
		{Name: "etc/os-release", Data: "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"},
		{Name: "etc/motd", Data: "welcome\n"},
		{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777},
		{Name: "tmp/junk", Data: "junk\n"},
		{Name: "usr/", Type: tar.TypeDir},
		{Name: "usr/bin/", Type: tar.TypeDir},
		{Name: "usr/bin/perl", Data: "#!perl\n", Mode: 0o755},
		{Name: "usr/bin/perl5.36.0", Type: tar.TypeLink, Linkname: "usr/bin/perl"},
		{Name: "var/", Type: tar.TypeDir},
		{Name: "var/cache/", Type: tar.TypeDir},
		{Name: "var/cache/apt/", Type: tar.TypeDir},
		{Name: "var/cache/apt/pkgcache.bin", Data: "cache\n"},
		{Name: "var/lib/", Type: tar.TypeDir},
		{Name: "var/lib/dpkg/", Type: tar.TypeDir},
		{Name: "var/lib/dpkg/info/", Type: tar.TypeDir},
		{Name: "var/lib/dpkg/info/base-files.list", Data: "/.\n/etc\n/etc/os-release\n/etc/motd\n"},
	}
	var runtimes []Entry
	for _, p := range []string{"debian-12/podman", "debian-12/containernetworking-plugins", "debian-12/golang-github-containers-common"} {
		runtimes = append(runtimes, Tree(filepath.Join(packages, p, "root"))...)
	}
	runtimes = dedupe(runtimes)
	return []Step{
		{CreatedBy: "/bin/sh -c #(nop) ADD file:debian-bookworm-slim in / ", Entries: base},
		{CreatedBy: "RUN /bin/sh -c clean-install podman containernetworking-plugins golang-github-containers-common # buildkit", Entries: runtimes},
		{CreatedBy: "RUN /bin/sh -c clean-install cri-o # buildkit", Entries: Tree(filepath.Join(packages, "upstream/cri-o-deb-v1.35.0/root"))},
		{CreatedBy: "RUN /bin/sh -c rm -rf /tmp/junk /etc/motd /var/cache/apt/* /usr/bin/perl && echo kic > /etc/kic-release # buildkit", Entries: []Entry{
			{Name: "etc/", Type: tar.TypeDir},
			{Name: "etc/.wh.motd"},
			{Name: "etc/kic-release", Data: "kic\n"},
			{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777},
			{Name: "tmp/.wh.junk"},
			{Name: "usr/bin/.wh.perl"},
			{Name: "var/cache/apt/", Type: tar.TypeDir},
			{Name: "var/cache/apt/.wh..wh..opq"},
		}},
	}
}

// dedupe keeps the first entry of each directory several fixtures share.
func dedupe(es []Entry) []Entry {
	seen := map[string]bool{}
	var out []Entry
	for _, e := range es {
		if e.Type == tar.TypeDir && seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		out = append(out, e)
	}
	return out
}

// WriteLayout writes img as a new OCI layout at dir, named ref
// (org.opencontainers.image.ref.name).
func WriteLayout(dir string, img v1.Image, ref string) {
	p, err := layout.Write(dir, empty.Index)
	must(err)
	must(p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})))
}

// WriteMulti writes a layout holding one index of an image per platform,
// as a multi-platform kicbase is.
func WriteMulti(dir string, steps []Step, ref string, platforms ...string) {
	idx := v1.ImageIndex(empty.Index)
	for _, pl := range platforms {
		p, err := v1.ParsePlatform(pl)
		must(err)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: Image(steps, pl), Descriptor: v1.Descriptor{Platform: p}})
	}
	lp, err := layout.Write(dir, empty.Index)
	must(err)
	must(lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})))
}

// WriteDockerArchive writes img as go-containerregistry's docker save
// tarball (manifest.json; layers named <hex>.tar.gz, config sha256:<hex>).
func WriteDockerArchive(file string, img v1.Image, tag string) {
	t, err := name.NewTag(tag)
	must(err)
	must(tarball.WriteToFile(file, t, img))
}

// WriteDocker25 writes img as Docker 25+'s docker save does: uncompressed
// layers as blobs/sha256/<hex>, an OCI layout (index.json, oci-layout)
// and manifest.json naming the same blobs.
func WriteDocker25(file string, img v1.Image, tag string) {
	cfg, err := img.RawConfigFile()
	must(err)
	layers, err := img.Layers()
	must(err)
	blobs := map[string][]byte{}
	add := func(b []byte) v1.Hash {
		h, _, err := v1.SHA256(bytes.NewReader(b))
		must(err)
		blobs["blobs/sha256/"+h.Hex] = b
		return h
	}
	cfgHash := add(cfg)
	man := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1,
		Config: v1.Descriptor{MediaType: types.OCIConfigJSON, Size: int64(len(cfg)), Digest: cfgHash}}
	var names []string
	for _, l := range layers {
		rc, err := l.Uncompressed()
		must(err)
		b, err := io.ReadAll(rc)
		must(err)
		h := add(b)
		man.Layers = append(man.Layers, v1.Descriptor{MediaType: types.OCIUncompressedLayer, Size: int64(len(b)), Digest: h})
		names = append(names, "blobs/sha256/"+h.Hex)
	}
	mb := mustJSON(man)
	mh := add(mb)
	index := mustJSON(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{{
		MediaType: types.OCIManifestSchema1, Size: int64(len(mb)), Digest: mh,
		Annotations: map[string]string{"io.containerd.image.name": "docker.io/library/" + tag, "org.opencontainers.image.ref.name": "test"}}}})
	files := map[string][]byte{"index.json": index, "oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"manifest.json": mustJSON([]map[string]any{{"Config": "blobs/sha256/" + cfgHash.Hex, "RepoTags": []string{tag}, "Layers": names}})}
	for k, v := range blobs {
		files[k] = v
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range slices.Sorted(maps.Keys(files)) {
		must(tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n])), ModTime: MTime}))
		_, err := tw.Write(files[n])
		must(err)
	}
	must(tw.Close())
	must(os.WriteFile(file, buf.Bytes(), 0o644))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	must(err)
	return b
}

func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("ocitest: %v", err))
	}
}

// Flat is one entry of an image flattened.
type Flat struct {
	Name     string // without a trailing slash
	Type     byte
	Mode     int64
	Linkname string
	Data     string
}

// Flatten is go-containerregistry's flattening of img (mutate.Extract):
// the oracle the tests hold rootfs-trim's merged view and output to.
func Flatten(img v1.Image) []Flat {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	var out []Flat
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		must(err)
		b, err := io.ReadAll(tr)
		must(err)
		out = append(out, Flat{Name: strings.TrimSuffix(h.Name, "/"), Type: h.Typeflag, Mode: h.Mode, Linkname: h.Linkname, Data: string(b)})
	}
}
