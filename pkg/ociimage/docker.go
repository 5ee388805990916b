package ociimage

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
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

// sniffTarball says whether the tar file at name has manifest.json or
// oci-layout among its first members (docker and podman write them first
// or last; a small image's are all read quickly, and the index is needed
// anyway to open it).
func sniffTarball(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for i := 0; i < 1<<16; i++ {
		h, err := tr.Next()
		if err != nil {
			return false
		}
		switch path.Clean("/" + h.Name)[1:] {
		case "manifest.json", "oci-layout":
			return h.Typeflag == tar.TypeReg
		}
	}
	return false
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
	platforms := map[string]v1.Platform{}
	for i := range ms {
		m := &ms[i]
		p, ok := platforms[m.Config]
		if !ok {
			cfg, err := img.dockerConfig(m)
			if err != nil {
				return nil, err
			}
			var c struct {
				OS, Architecture, Variant string
			}
			if err := json.Unmarshal(cfg, &c); err != nil {
				return nil, fmt.Errorf("manifest.json: config %s: %w", names.Quote(m.Config), err)
			}
			p = v1.Platform{OS: c.OS, Architecture: c.Architecture, Variant: c.Variant}
			platforms[m.Config] = p
		}
		out = append(out, candidate{platform: p, docker: m})
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

// loadDocker reads the image of a manifest.json entry.
func (img *Image) loadDocker(m *dockerManifest) error {
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
		if _, size, err := img.store.open(name); err == nil {
			l.size = size
		}
		img.Layers = append(img.Layers, l)
	}
	if err := img.checkLayers("manifest.json"); err != nil {
		return err
	}
	img.layoutManifest()
	return nil
}

// layoutManifest takes, from the OCI layout a Docker 25+ tarball holds
// beside manifest.json, the manifest of this image (its config and
// layers), so that an output of it keeps that manifest's bytes and
// digest, and the descriptor's annotations (a ref name). Where there is none, or it is not readable, an output makes
// one, as for an older tarball.
func (img *Image) layoutManifest() {
	if !img.store.has("index.json") || !img.store.has("oci-layout") {
		return
	}
	cands, err := img.indexCandidates("index.json", nil, 0, map[v1.Hash]bool{})
	if err != nil {
		return
	}
	for _, c := range cands {
		b, err := img.readVerified("manifest", c.manifest)
		if err != nil {
			continue
		}
		m, err := v1.ParseManifest(bytes.NewReader(b))
		if err != nil || "sha256:"+m.Config.Digest.Hex != img.id || len(m.Layers) != len(img.Layers) {
			continue
		}
		same := true
		for i, l := range m.Layers {
			same = same && l.Digest.String() == img.Layers[i].Digest
		}
		var raw map[string]json.RawMessage
		if same && json.Unmarshal(b, &raw) == nil {
			img.manifest, img.rawManifest, img.manifestType, img.configType = raw, b, c.manifest.MediaType, m.Config.MediaType
			if len(img.annotations) == 0 {
				img.annotations = c.annotations // its ref name, where it has one
			}
			for i, l := range m.Layers {
				img.Layers[i].mediaType = l.MediaType
			}
			return
		}
	}
}

// readAllLimited reads r to its end, at most max bytes.
func readAllLimited(r io.Reader, max int64) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	return b, int64(len(b)) > max, err
}
