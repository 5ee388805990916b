package ociimage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// dockerManifest is one image of a docker save tarball's manifest.json
// (moby's image/tarexport: Config, RepoTags, Layers, file names in the
// tarball).
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// blobFile matches a file named by its digest: Docker 25+'s
// blobs/sha256/<hex>, and older releases' <hex>.json config.
var blobFile = regexp.MustCompile(`^(?:blobs/sha256/([0-9a-f]{64})|([0-9a-f]{64})\.json)$`)

// digestOfName is the digest a file's name states, "" for none.
func digestOfName(name string) string {
	m := blobFile.FindStringSubmatch(path.Clean("/" + name)[1:])
	if m == nil {
		return ""
	}
	return "sha256:" + m[1] + m[2]
}

// dockerCandidates lists the images of manifest.json, with the platform
// each one's config states.
func (img *Image) dockerCandidates() ([]candidate, error) {
	b, err := readSmall(img.store, "manifest.json")
	if err != nil {
		return nil, err
	}
	var ms []dockerManifest
	if err := json.Unmarshal(b, &ms); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	img.sole = len(ms) == 1
	var out []candidate
	// Each config is read once: a manifest.json naming one big config in
	// every entry would otherwise cost its size times the entries.
	configs := map[string]candidate{}
	for i := range ms {
		m := &ms[i]
		c, ok := configs[m.Config]
		if !ok {
			cfg, err := img.dockerConfig(m)
			if err != nil {
				return nil, err
			}
			var p struct {
				OS, Architecture, Variant string
			}
			if err := json.Unmarshal(cfg, &p); err != nil {
				return nil, fmt.Errorf("manifest.json: config %s: %w", names.Quote(m.Config), err)
			}
			c = candidate{platform: v1.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}, config: "sha256:" + digest.Bytes(cfg)}
			configs[m.Config] = c
		}
		c.docker = m
		out = append(out, c)
	}
	return out, nil
}

// dockerConfig reads a manifest.json entry's config, checked against the
// digest its name states.
func (img *Image) dockerConfig(m *dockerManifest) ([]byte, error) {
	name := path.Clean("/" + m.Config)[1:]
	b, err := readSmall(img.store, name)
	if err != nil {
		return nil, errMissing("manifest.json: config", m.Config, err)
	}
	if want := digestOfName(name); want != "" {
		if got := "sha256:" + digest.Bytes(b); got != want {
			return nil, fmt.Errorf("manifest.json: config %s: digest mismatch: its sha256 is %s", names.Quote(m.Config), got)
		}
	}
	return b, nil
}

// loadDocker reads the image of a manifest.json entry; layout is the
// images the OCI layout beside it names (sameImages).
func (img *Image) loadDocker(m *dockerManifest, layout []layoutImage) error {
	cfg, err := img.dockerConfig(m)
	if err != nil {
		return err
	}
	if err := img.parseConfig(cfg); err != nil {
		return err
	}
	img.repoTags = m.RepoTags
	for i, name := range m.Layers {
		name = path.Clean("/" + name)[1:]
		l := &Layer{Index: i, blob: name}
		if d := digestOfName(name); d != "" && strings.HasPrefix(name, "blobs/") {
			l.Digest, l.digestKnown = d, true
		}
		if rc, size, err := img.store.open(name); err == nil {
			l.size = size
			rc.Close()
		}
		img.Layers = append(img.Layers, l)
	}
	if err := img.checkLayers("manifest.json"); err != nil {
		return err
	}
	img.layoutManifest(layout)
	return nil
}

// layoutImage is an image the OCI layout beside manifest.json names: its
// manifest as read, and what makes it the image it is (key: its config's
// digest and its layers' members).
type layoutImage struct {
	candidate
	raw []byte
	m   *v1.Manifest
	key string
}

// sameImages reads the OCI layout a tarball or directory holds beside
// manifest.json (Docker 25+ writes both halves), and checks that it names
// the images manifest.json names, no more and no fewer: skopeo's
// docker-archive reads manifest.json, podman load index.json first
// (containers/common libimage/load.go Runtime.Load) and so does
// containerd's importer (core/images/archive/importer.go ImportIndex).
// It returns the layout's images; none when there is no index.json.
func (img *Image) sameImages(docker []candidate) ([]layoutImage, error) {
	if !img.store.has("index.json") {
		return nil, nil
	}
	files, sole := img.files, img.sole
	cands, err := img.indexCandidates("index.json", nil, 0, map[v1.Hash]bool{})
	cands = sameManifestOnce(cands) // two names of one image are one image
	img.files, img.sole = files, sole
	if err != nil {
		return nil, fmt.Errorf("the OCI layout beside manifest.json: %w", err)
	}
	var out []layoutImage
	inLayout := map[string]int{}
	for _, c := range cands {
		_, b, err := img.verifiedBlob("manifest "+c.manifest.Digest.String(), c.manifest)
		if err != nil {
			return nil, fmt.Errorf("the OCI layout beside manifest.json: %w", err)
		}
		m, err := v1.ParseManifest(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("the OCI layout beside manifest.json: manifest %s: %w", c.manifest.Digest, err)
		}
		li := layoutImage{c, b, m, m.Config.Digest.String()}
		for _, l := range m.Layers {
			li.key += " " + blobName(l.Digest)
		}
		inLayout[li.key]++
		out = append(out, li)
	}
	inDocker := map[string]int{}
	for _, c := range docker {
		key := c.config
		for _, l := range c.docker.Layers {
			key += " " + path.Clean("/" + l)[1:]
		}
		inDocker[key]++
	}
	for k, n := range inDocker {
		if inLayout[k] != n {
			return nil, fmt.Errorf("manifest.json and index.json name different images: manifest.json's image of config %s is not the one index.json names (podman load and containerd read index.json, skopeo manifest.json)", strings.Fields(k)[0])
		}
	}
	for k, n := range inLayout {
		if inDocker[k] != n {
			return nil, fmt.Errorf("manifest.json and index.json name different images: index.json's image of config %s is not the one manifest.json names (podman load and containerd read index.json, skopeo manifest.json)", strings.Fields(k)[0])
		}
	}
	return out, nil
}

// layoutManifest takes, from the OCI layout beside manifest.json, the
// manifest of this image, so that an output of it keeps that manifest's
// bytes and digest, and the descriptor's annotations (a ref name). Where
// there is none, an output makes one, as for an older tarball.
func (img *Image) layoutManifest(layout []layoutImage) {
	key := img.id
	for _, l := range img.Layers {
		key += " " + l.blob
	}
	for _, c := range layout {
		var raw map[string]json.RawMessage
		if c.key == key && json.Unmarshal(c.raw, &raw) == nil {
			img.manifest, img.rawManifest, img.manifestType, img.configType = raw, c.raw, c.manifest.MediaType, c.m.Config.MediaType
			if len(img.annotations) == 0 {
				img.annotations = c.annotations // its ref name, where it has one
			}
			for i, l := range c.m.Layers {
				img.Layers[i].mediaType = l.MediaType
			}
			return
		}
	}
}
