package ociimage

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// WriteOptions says what image Write makes.
type WriteOptions struct {
	Kind Kind
	// Squash writes one layer of the whole filesystem instead of the
	// input's layers and one of the changes.
	Squash bool
	// CreatedBy is the new history entry's created_by.
	CreatedBy string
	// Epoch is the new layer's whiteouts' mtime, and the config's and the
	// history entry's created; nil: the newest mtime of the input.
	Epoch *time.Time
	// Codec compresses the new layer: gzip, zstd or none.
	Codec compress.Codec
	// Source is the image the entries come from (its Reader); nil makes
	// a new image of one layer, for linux on Platform.
	Source   *Image
	Platform string
}

// Writer takes the entries of the filesystem an image is to have and,
// on Close, writes the image into Dir: a layout there, or the tarball
// Result names.
type Writer struct {
	opt WriteOptions
	dir string

	full *layerWriter // squash, or a new image: every entry
	// Against the source: what was written at all, and what changed
	// (spooled).
	written map[string]archive.Type
	changed []*pending
	spool   *os.File
	spoolAt int64
	discard bool
	newest  int64
	result  string
	id      string
}

// ID is the written image's config digest, once closed.
func (w *Writer) ID() string { return w.id }

// pending is a changed entry, its data in the spool.
type pending struct {
	e         *archive.Entry
	name      string
	off, size int64
}

// NewWriter starts an image in dir, an empty directory (the output's
// temporary, which the caller renames into place).
func NewWriter(dir string, opt WriteOptions) (*Writer, error) {
	if opt.Kind == 0 {
		return nil, errors.New("no image kind")
	}
	if opt.Codec == compress.Zstd && opt.Source != nil && opt.Source.manifestType == types.DockerManifestSchema2 {
		// Docker's manifest has no zstd layer type.
		return nil, errors.New("a zstd layer in a Docker schema 2 manifest: write it with --compress gzip or none")
	}
	if !opt.Codec.IsLayer() { // before the entries come
		return nil, fmt.Errorf("a new layer is written with %s or no compression, not %s", compress.LayerCodecs(), opt.Codec)
	}
	w := &Writer{opt: opt, dir: dir}
	var err error
	if opt.Source == nil || opt.Squash {
		w.full, err = newLayer(dir, opt.Codec)
		return w, err
	}
	w.written = map[string]archive.Type{}
	w.spool, err = os.CreateTemp(dir, ".changes-")
	return w, err
}

func (w *Writer) WriteHeader(e *archive.Entry) error {
	w.newest = max(w.newest, e.ModTime.Unix())
	if w.full != nil {
		return w.full.WriteHeader(e)
	}
	name, err := pathx.Clean(e.Name)
	if err != nil {
		return err
	}
	w.written[name] = e.Type
	em, ok := w.opt.Source.emitted[e.Format]
	if w.discard = ok && sameEntry(&em, e); w.discard {
		return nil
	}
	w.changed = append(w.changed, &pending{e: e.Clone(), name: name, off: w.spoolAt})
	return nil
}

// sameEntry says whether b is a as the Reader yielded it.
func sameEntry(a, b *archive.Entry) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Mode == b.Mode && a.UID == b.UID && a.GID == b.GID &&
		a.ModTime.Equal(b.ModTime) && a.Size == b.Size && a.Linkname == b.Linkname &&
		a.RdevMajor == b.RdevMajor && a.RdevMinor == b.RdevMinor
}

// Discards says whether the entry just given is one of the source's as
// the Reader yielded it, whose data is in a layer the image keeps: the
// data need not be read (archive.Discarder).
func (w *Writer) Discards() bool { return w.full == nil && w.discard }

func (w *Writer) Write(p []byte) (int, error) {
	if w.full != nil {
		return w.full.Write(p)
	}
	if w.discard {
		return len(p), nil
	}
	n, err := w.spool.Write(p)
	w.spoolAt += int64(n)
	w.changed[len(w.changed)-1].size += int64(n)
	return n, err
}

// Result is the file the image is in: Dir itself for a layout.
func (w *Writer) Result() string { return w.result }

// Close writes the image. When nothing changed against the source, it
// is the source: no new layer, its manifest and config as they were, and
// a copy of the input's own bytes when it is of the output's kind and
// holds only this image (docs/formats.md, "Images").
func (w *Writer) Close() error {
	var l *Layer
	var err error
	if w.full != nil {
		l, err = w.full.finish()
	} else {
		var same bool
		if same, err = w.noChange(); same {
			w.spool.Close()
			os.Remove(w.spool.Name())
			if src := w.opt.Source; src.sole && src.Kind == w.opt.Kind {
				return w.copySource()
			}
		} else if err == nil {
			l, err = w.changesLayer()
		}
	}
	if err != nil {
		return err
	}
	return w.assemble(l)
}

// noChange says whether the entries written are the source's: nothing to
// white out, and each one that did not come back as the Reader yielded it
// the source's entry at its path all the same, header and data (apply on
// its own output writes its files again, byte for byte).
func (w *Writer) noChange() (bool, error) {
	if len(w.whiteouts()) > 0 {
		return false, nil
	}
	for _, p := range w.changed {
		if same, err := w.sameAsSource(p); err != nil || !same {
			return false, err
		}
	}
	return true, nil
}

// sameAsSource says whether p is the source's entry at its path.
func (w *Writer) sameAsSource(p *pending) (bool, error) {
	src := w.opt.Source
	n := src.tree.lookup(p.name)
	if n == nil || n.hdr == nil {
		return false, nil
	}
	h := *n.hdr
	h.Name = p.e.Name
	if !sameEntry(&h, p.e) {
		return false, nil
	}
	if p.size == 0 && h.Size == 0 || h.Type == archive.TypeDir {
		return true, nil
	}
	if pl := src.tree.plan[n.at]; h.Type != archive.TypeRegular || pl == nil || pl.node != n || pl.as != "" || pl.hdr != nil {
		return false, nil // its data is under another name: not worth the search
	}
	return src.sameData(n.at, io.NewSectionReader(w.spool, p.off, p.size))
}

// epoch is the time of what the new layer adds.
func (w *Writer) epoch() time.Time {
	if w.opt.Epoch != nil {
		return w.opt.Epoch.UTC()
	}
	newest := w.newest
	if s := w.opt.Source; s != nil && s.newestMTimeSec > newest {
		newest = s.newestMTimeSec
	}
	return time.Unix(newest, 0).UTC()
}

// changesLayer writes the layer of what changed against the source:
// a whiteout for each path it has that was not written (the topmost of
// them), and each entry that is new or not as it was, sorted by name.
func (w *Writer) changesLayer() (*Layer, error) {
	defer func() { w.spool.Close(); os.Remove(w.spool.Name()) }()
	items := w.changed
	for _, name := range w.whiteouts() {
		dir, base := path.Split(name)
		items = append(items, &pending{name: dir + whiteoutPrefix + base, e: &archive.Entry{Type: archive.TypeRegular,
			Mode: 0o644, ModTime: w.epoch()}})
	}
	slices.SortStableFunc(items, func(a, b *pending) int { return cmp.Compare(a.name, b.name) })
	lw, err := newLayer(w.dir, w.opt.Codec)
	if err != nil {
		return nil, err
	}
	for _, p := range items {
		e := p.e
		e.Name = p.name
		if e.Type == archive.TypeDir {
			e.Name += "/"
		}
		err := lw.WriteHeader(e)
		if err == nil {
			_, err = io.Copy(lw, io.NewSectionReader(w.spool, p.off, p.size))
		}
		if err != nil {
			lw.abort()
			return nil, err
		}
	}
	return lw.finish()
}

// whiteouts are the source's paths that were not written, the topmost of
// each subtree only.
func (w *Writer) whiteouts() []string {
	var out []string
	var visit func(n *node)
	visit = func(n *node) {
		for _, base := range slices.Sorted(maps.Keys(n.children)) {
			c := n.children[base]
			t, ok := w.written[c.name]
			switch {
			case ok && t == archive.TypeDir && c.isDir():
				visit(c)
			case ok:
				// Replaced by another kind of file: it hides what was there.
			case c.at.layer < 0:
				visit(c)
			default:
				out = append(out, c.name)
			}
		}
	}
	visit(w.opt.Source.tree.root)
	return out
}

// Abort removes what Write made in its directory.
func (w *Writer) Abort() {
	if w.full != nil {
		w.full.abort()
	}
	if w.spool != nil {
		w.spool.Close()
		os.Remove(w.spool.Name())
	}
}
