package ociimage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// Kind is how an image is stored.
type Kind uint8

const (
	// Layout is an OCI image layout directory (oci-layout, index.json,
	// blobs/).
	Layout Kind = iota + 1
	// Archive is a tarball: docker save's manifest.json, the OCI layout
	// Docker 25+ puts beside it, or only that layout (oci-archive).
	Archive
)

// Names of the kinds, as --archive-format takes them.
const (
	LayoutName  = "oci"
	ArchiveName = "docker-archive"
)

func (k Kind) String() string { return map[Kind]string{Layout: LayoutName, Archive: ArchiveName}[k] }

// RefName is the annotation skopeo and umoci find an image in a layout by.
const RefName = "org.opencontainers.image.ref.name"

// Options says which image of a multi-platform input to read, and bounds
// what it may cost.
type Options struct {
	// Platform is os/arch[/variant]; "" takes the only image there is.
	Platform string
	// Ref picks, in an OCI layout, the image index.json names so (its
	// org.opencontainers.image.ref.name: the TAG of skopeo's oci:DIR:TAG,
	// what umoci tag writes); "" picks by Platform alone.
	Ref string
	// MaxSize caps the uncompressed bytes of each layer.
	MaxSize int64
	// Backend chooses the layers' decompressors.
	Backend compress.Backend
	// Keep says, of a regular file's clean name, whether the first pass
	// keeps its data for the Reader (the files a rule names, the dpkg
	// database), so that the layers are decompressed once; at most maxKept
	// bytes, nil keeps none.
	Keep func(name string) bool
}

// Layer is one layer of an image, bottom first.
type Layer struct {
	Index int `json:"index"`
	// Digest is the blob's (compressed) sha256; DiffID the uncompressed
	// tar's, from the config's rootfs.diff_ids.
	Digest    string `json:"digest"`
	DiffID    string `json:"diff_id"`
	CreatedBy string `json:"created_by,omitempty"`

	mediaType types.MediaType
	size      int64
	blob      string // its name in the store
	codec     compress.Codec
	// digestKnown is false for a legacy docker save layer (<id>/layer.tar),
	// whose file name is no digest: the first pass computes it.
	digestKnown bool
}

// Image is one image of a layout or a tarball, opened and scanned.
type Image struct {
	Path     string
	Kind     Kind
	Platform string
	Layers   []*Layer

	store store
	opt   Options
	// manifest and config as read, every field kept; manifest is nil for a
	// docker save tarball without a layout.
	manifest     map[string]json.RawMessage
	manifestType types.MediaType
	configType   types.MediaType
	config       map[string]json.RawMessage
	parsed       *v1.ConfigFile
	annotations  map[string]string // of the descriptor index.json names the image by
	refs         []string          // every ref name index.json gives the image (sameManifestOnce)
	repoTags     []string
	tree         *scan
	// emitted is what the Reader yielded, by its Format: what Write
	// compares an entry that comes back with.
	emitted        map[any]archive.Entry
	kept           int64 // bytes of data the first pass kept
	newestMTimeSec int64
	id             string
	// rawManifest and rawConfig are the bytes as read (rawManifest nil
	// with manifest); files names what of the store makes up the image
	// (index.json, oci-layout, the indexes, manifest and config, not the
	// layers); sole is true when the input holds only this image: nothing
	// but it named by index.json or manifest.json.
	rawManifest, rawConfig []byte
	files                  []string
	sole                   bool
}

// ID is the config's digest: the image ID docker and podman show.
func (img *Image) ID() string { return img.id }

// candidate is an image an index or manifest.json names.
type candidate struct {
	platform    v1.Platform
	manifest    v1.Descriptor
	annotations map[string]string
	refs        []string        // the ref names index.json gives it
	docker      *dockerManifest // a manifest.json entry
	config      string          // its config's digest, of a manifest.json entry
}

// Open opens the image at path and makes the first pass over its layers
// (Scan): what each layer hides, who owns what, every digest checked.
func Open(path string, opt Options) (*Image, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch ok, err := Detect(path, fi); {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("%s: not an image", path)
	}
	kind, st, err := openRawStore(path, fi)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sig := signature(path, fi, opt)
	if c := cached(sig); c != nil {
		c.store = st
		return c, nil
	}
	img, err := openStore(path, kind, st, opt)
	if err != nil {
		return nil, err
	}
	remember(sig, img)
	return img, nil
}

// openStore reads and scans the image in st, closing st when that fails.
func openStore(path string, kind Kind, st store, opt Options) (*Image, error) {
	img := &Image{Path: path, Kind: kind, store: st, opt: opt}
	err := img.load()
	if err == nil {
		err = img.scan()
	}
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

func (img *Image) Close() error { return img.store.Close() }

// load reads the index or manifest.json, chooses the image and reads its
// manifest and config.
func (img *Image) load() error {
	_, cands, err := img.candidates()
	if err != nil {
		return err
	}
	var layout []layoutImage
	if len(cands) > 0 && cands[0].docker != nil {
		if layout, err = img.sameImages(cands); err != nil {
			return err
		}
	}
	c, err := choose(cands, img.opt.Platform, img.opt.Ref)
	if err != nil {
		return err
	}
	img.Platform, img.annotations, img.refs = c.platform.String(), c.annotations, c.refs
	if c.docker != nil {
		return img.loadDocker(c.docker, layout)
	}
	return img.loadManifest(c.manifest)
}

// candidates lists the images of the input's manifest.json, or of its
// index.json where it has none, and says which it read.
func (img *Image) candidates() (string, []candidate, error) {
	img.sole = true
	switch {
	case img.store.has("manifest.json"):
		cands, err := img.dockerCandidates()
		return "manifest.json", cands, err
	case img.store.has("index.json"):
		if !img.store.has("oci-layout") {
			return "", nil, errors.New("index.json without oci-layout: not an OCI image layout")
		}
		img.files = append(img.files, "oci-layout")
		cands, err := img.indexCandidates("index.json", nil, 0, map[v1.Hash]bool{})
		return "index.json", sameManifestOnce(cands), err
	}
	return "", nil, errors.New("neither manifest.json nor index.json: not an image")
}

// indexCandidates lists the images an index names, descending into the
// indexes it names (a multi-platform image in a layout is an index in
// index.json). annotations are those of the descriptor in index.json.
// Each index is read once (seen): indexes naming the same index again and
// again would otherwise make work and candidates grow as its fan-out to
// the fifth power.
func (img *Image) indexCandidates(name string, annotations map[string]string, depth int, seen map[v1.Hash]bool) ([]candidate, error) {
	if depth > 4 {
		return nil, fmt.Errorf("%s: indexes nested more than 4 deep", name)
	}
	b, err := readSmall(img.store, name)
	if err != nil {
		return nil, err
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	img.files = append(img.files, name)
	img.sole = img.sole && len(idx.Manifests) == 1
	var out []candidate
	for _, d := range idx.Manifests {
		ann := annotations
		if depth == 0 {
			ann = d.Annotations
		}
		switch {
		case d.MediaType.IsIndex():
			if seen[d.Digest] {
				continue
			}
			seen[d.Digest] = true
			blob, _, err := img.verifiedBlob("index "+d.Digest.String(), d)
			if err != nil {
				return nil, err
			}
			sub, err := img.indexCandidates(blob, ann, depth+1, seen)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		case d.MediaType.IsImage():
			c := candidate{manifest: d, annotations: ann}
			if r := ann[RefName]; r != "" {
				c.refs = []string{r}
			}
			if d.Platform != nil {
				c.platform = *d.Platform
			}
			if c.platform.OS == "unknown" {
				continue // buildx's attestations
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// SplitRef reads skopeo's DIR:TAG spelling of one image of a layout: path
// names no file, and the part before its last colon is a directory that
// holds an oci-layout. ok is false for anything else.
func SplitRef(path string) (dir, ref string, ok bool) {
	if _, err := os.Lstat(path); err == nil {
		return "", "", false
	}
	i := strings.LastIndexByte(path, ':')
	if i <= 0 || i == len(path)-1 {
		return "", "", false
	}
	fi, err := os.Lstat(filepath.Join(path[:i], "oci-layout"))
	if err != nil || !fi.Mode().IsRegular() {
		return "", "", false
	}
	return path[:i], path[i+1:], true
}

// sameManifestOnce makes the index entries that name one manifest (two
// tags of one image, as `umoci tag` makes them) one candidate, with every
// ref name it has: the same image, not two to choose between.
func sameManifestOnce(cands []candidate) []candidate {
	var out []candidate
	at := map[v1.Hash]int{}
	for _, c := range cands {
		if i, ok := at[c.manifest.Digest]; ok && c.docker == nil {
			for _, r := range c.refs {
				if !slices.Contains(out[i].refs, r) {
					out[i].refs = append(out[i].refs, r)
				}
			}
			continue
		}
		at[c.manifest.Digest] = len(out)
		out = append(out, c)
	}
	return out
}

// choose picks the image named ref, if given, of platform want ("" for
// the only one).
func choose(cands []candidate, want, ref string) (candidate, error) {
	if ref != "" {
		named := slices.DeleteFunc(slices.Clone(cands), func(c candidate) bool { return !slices.Contains(c.refs, ref) })
		if len(named) == 0 {
			refs := map[string]bool{}
			for _, c := range cands {
				for _, r := range c.refs {
					refs[names.Quote(r)] = true
				}
			}
			have := "none"
			if len(refs) > 0 {
				have = strings.Join(slices.Sorted(maps.Keys(refs)), ", ")
			}
			return candidate{}, fmt.Errorf("no image named %s in index.json; its names: %s", names.Quote(ref), have)
		}
		cands = named
	}
	// Each platform once, with its count: an index may name thousands of
	// images, and the message need not grow with them.
	count := map[string]int{}
	for _, c := range cands {
		s := names.Quote(c.platform.String())
		if s == "" {
			s = "(no platform)"
		}
		count[s]++
	}
	var list []string
	for _, s := range slices.Sorted(maps.Keys(count)) {
		if count[s] > 1 {
			s = fmt.Sprintf("%s ×%d", s, count[s])
		}
		list = append(list, s)
	}
	have := strings.Join(list, ", ")
	if len(cands) == 0 {
		return candidate{}, errors.New("it names no image")
	}
	if want == "" {
		if len(cands) > 1 {
			return candidate{}, fmt.Errorf("it holds %d images (%s): choose one with --platform, or by name as DIR:TAG", len(cands), have)
		}
		return cands[0], nil
	}
	p, err := v1.ParsePlatform(want)
	if err != nil {
		return candidate{}, fmt.Errorf("--platform %q: %w", want, err)
	}
	match := slices.DeleteFunc(slices.Clone(cands), func(c candidate) bool { return !c.platform.Satisfies(*p) })
	switch len(match) {
	case 0:
		return candidate{}, fmt.Errorf("no image for platform %s; it holds %s", want, have)
	case 1:
		return match[0], nil
	}
	return candidate{}, fmt.Errorf("%d images for platform %s (%s): give the variant too", len(match), want, have)
}

// blobName is where a blob of digest d is in a layout.
func blobName(d v1.Hash) string { return "blobs/" + d.Algorithm + "/" + d.Hex }

// verifiedBlob reads the small blob d names, checked against its digest,
// and returns its name and bytes; what names the one asking.
func (img *Image) verifiedBlob(what string, d v1.Descriptor) (string, []byte, error) {
	if d.Digest.Algorithm != "sha256" {
		return "", nil, fmt.Errorf("%s: digest algorithm %q: only sha256 is read", what, d.Digest.Algorithm)
	}
	name := blobName(d.Digest)
	b, err := readSmall(img.store, name)
	if err != nil {
		return "", nil, errMissing(what, d.Digest.String(), err)
	}
	if got := "sha256:" + digest.Bytes(b); got != d.Digest.String() {
		return "", nil, fmt.Errorf("%s: digest mismatch: the blob's sha256 is %s", what, got)
	}
	return name, b, nil
}

// loadManifest reads an OCI or Docker v2 manifest and its config.
func (img *Image) loadManifest(d v1.Descriptor) error {
	what := "manifest " + d.Digest.String()
	_, b, err := img.verifiedBlob(what, d)
	if err != nil {
		return err
	}
	m, err := v1.ParseManifest(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := json.Unmarshal(b, &img.manifest); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	img.rawManifest = b
	img.files = append(img.files, blobName(d.Digest), blobName(m.Config.Digest))
	img.manifestType = d.MediaType
	img.configType = m.Config.MediaType
	_, cfg, err := img.verifiedBlob(what+": config "+m.Config.Digest.String(), m.Config)
	if err != nil {
		return err
	}
	if err := img.parseConfig(cfg); err != nil {
		return err
	}
	for i, l := range m.Layers {
		if l.Digest.Algorithm != "sha256" {
			return fmt.Errorf("%s: layer %d: digest algorithm %q: only sha256 is read", what, i, l.Digest.Algorithm)
		}
		img.Layers = append(img.Layers, &Layer{Index: i, Digest: l.Digest.String(), mediaType: l.MediaType, size: l.Size,
			blob: blobName(l.Digest), digestKnown: true})
	}
	return img.checkLayers(what)
}

// parseConfig keeps the config as read and what rootfs-trim needs of it.
func (img *Image) parseConfig(b []byte) error {
	if err := json.Unmarshal(b, &img.config); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	img.rawConfig = b
	cfg, err := v1.ParseConfigFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	img.parsed, img.id = cfg, "sha256:"+digest.Bytes(b)
	if img.Platform == "" && cfg.OS != "" {
		img.Platform = cfg.Platform().String()
	}
	return nil
}

// checkLayers matches the layers with the config's diff_ids and history,
// and checks that every layer's blob is there.
func (img *Image) checkLayers(what string) error {
	ids := img.parsed.RootFS.DiffIDs
	if len(ids) != len(img.Layers) {
		return fmt.Errorf("%s: %d layers, but the config has %d diff_ids", what, len(img.Layers), len(ids))
	}
	var history []v1.History
	for _, h := range img.parsed.History {
		if !h.EmptyLayer {
			history = append(history, h)
		}
	}
	for i, l := range img.Layers {
		l.DiffID = ids[i].String()
		if len(history) == len(img.Layers) {
			l.CreatedBy = history[i].CreatedBy
		}
		if !img.store.has(l.blob) {
			return fmt.Errorf("%s: layer %d: blob %s is missing", what, i, names.Quote(l.blobOrDigest()))
		}
	}
	return nil
}

func (l *Layer) blobOrDigest() string {
	if l.digestKnown {
		return l.Digest
	}
	return l.blob
}

// Codec is the layer's compression, as its first read found it.
func (l *Layer) Codec() compress.Codec { return l.codec }

// Note names the layer beside a finding: its index, the start of its
// digest and, on one line, the created_by that made it (the Dockerfile
// line).
func (l *Layer) Note() string {
	s := fmt.Sprintf("layer %d %s", l.Index, l.Digest[:min(len(l.Digest), len("sha256:")+12)])
	if l.CreatedBy != "" {
		s += ": " + strings.Join(strings.Fields(l.CreatedBy), " ")
	}
	return s
}

// String names the layer in messages: its index and digest, or its name
// in a docker save tarball, which the tarball chose (names.Quote).
func (l *Layer) String() string {
	return fmt.Sprintf("layer %d (%s)", l.Index, names.Quote(l.blobOrDigest()))
}
