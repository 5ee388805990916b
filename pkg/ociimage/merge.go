package ociimage

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// The whiteout names of image-spec layer.md: .wh.NAME hides NAME of the
// layers below; .wh..wh..opq hides everything below in its directory.
const (
	whiteoutPrefix = ".wh."
	opaqueMarker   = ".wh..wh..opq"
)

// key names one entry of the image: its layer and its place there.
type key struct{ layer, ord int }

// node is one path of the merged filesystem as the layers so far make it.
type node struct {
	name     string // clean
	children map[string]*node
	// at is the entry that is this path now; -1, -1 for a directory no
	// layer has an entry for (a parent tar extractors make).
	at  key
	hdr *archive.Entry // at's header, data-less
	// since is, for a directory, its first entry since it last was
	// replaced or hidden: where the merged view puts it.
	since key
	// link is, for a hard link, the entry holding its data when the link
	// was made, and linkHdr that entry's header (the Reader yields it
	// under the link's name when the entry itself is gone).
	link    key
	linkHdr *archive.Entry
	// clean is layer+1 once nothing beneath n is from below layer: a node
	// made in that layer, or one a whiteout of that layer pruned. Pruning
	// stops there, so that a layer's whiteouts cost no more than the tree
	// they prune once, however many of them name the same directory.
	clean int
}

func (n *node) isDir() bool { return n.hdr == nil || n.hdr.Type == archive.TypeDir }

// scan is the pass's result: the merged tree and what the Reader yields
// for each entry.
type scan struct {
	root *node
	// gone names the paths a whiteout hid, and the layer it is in.
	gone map[string]int
	// plan says what the merged view makes of each entry it keeps, and
	// order lists its keys in layer order: what the Reader yields.
	plan  map[key]*planned
	order []key
	// data is what the first pass kept of the files Options.Keep names.
	data map[key][]byte
}

// planned is what the Reader does with one entry: yield it as it
// is, or with another header (a directory's last one), or under another
// name (the data of a hard link whose first name is gone).
type planned struct {
	node *node
	hdr  *archive.Entry // nil: as read
	as   string         // for a link's data: the name it is yielded under
}

func newNode(name string, layer int) *node {
	return &node{name: name, at: key{-1, -1}, since: key{-1, -1}, link: key{-1, -1}, clean: layer + 1}
}

// scan makes the first pass: every layer's entries applied in order, the
// data Options.Keep names kept.
func (img *Image) scan() error {
	s := &scan{root: newNode(".", -1), gone: map[string]int{}, data: map[key][]byte{}}
	for _, l := range img.Layers {
		if err := img.scanLayer(s, l); err != nil {
			return err
		}
	}
	img.tree = s
	img.plan()
	return nil
}

func (img *Image) scanLayer(s *scan, l *Layer) error {
	ls, err := img.openLayer(l)
	if err != nil {
		return err
	}
	for ord := 0; ; ord++ {
		e, err := ls.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			ls.close()
			return fmt.Errorf("%s: %w", l, err)
		}
		k := key{l.Index, ord}
		if err := s.apply(e, k); err != nil {
			ls.close()
			return fmt.Errorf("%s: entry %q: %w", l, e.Name, err)
		}
		img.newestMTimeSec = max(img.newestMTimeSec, e.ModTime.Unix())
		if err := img.keepData(s, e, k, ls); err != nil {
			ls.close()
			return fmt.Errorf("%s: %s: %w", l, names.Quote(e.Name), err)
		}
	}
	return ls.finish()
}

// maxKept bounds the data the first pass keeps (Options.Keep): far more
// than the files a rule set names in a real image, a few kilobytes each.
// Past it, what the caller reads is read again from its layer.
const maxKept = 64 << 20

// keepData keeps the data of e, entry k, when Options.Keep names it.
func (img *Image) keepData(s *scan, e *archive.Entry, k key, r io.Reader) error {
	if img.opt.Keep == nil || e.Type != archive.TypeRegular || e.Size <= 0 || e.Size > maxKept-img.kept {
		return nil
	}
	name, err := pathx.Clean(e.Name)
	if err != nil || !img.opt.Keep(name) {
		return nil
	}
	b := make([]byte, e.Size)
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	s.data[k] = b
	img.kept += e.Size
	return nil
}

// apply changes the tree as extracting e, entry k, does.
func (s *scan) apply(e *archive.Entry, k key) error {
	name, err := pathx.Clean(e.Name)
	if err != nil {
		return err
	}
	dir, base := path.Dir(name), path.Base(name)
	if base == opaqueMarker {
		if p := s.lookup(dir); p != nil && p.isDir() && p.clean != k.layer+1 {
			for _, c := range p.children {
				s.hide(p, c, k.layer)
			}
			p.clean = k.layer + 1
		}
		return nil
	}
	if hidden, ok := strings.CutPrefix(base, whiteoutPrefix); ok {
		if hidden == "" || hidden == "." || hidden == ".." {
			return fmt.Errorf("a whiteout of %q: above the root", path.Join(dir, hidden))
		}
		if strings.HasPrefix(hidden, whiteoutPrefix) {
			return nil // aufs's own metadata (.wh..wh.plnk): nothing in the merged view
		}
		if p := s.lookup(dir); p != nil && p.isDir() {
			if c := p.children[hidden]; c != nil {
				s.hide(p, c, k.layer)
			}
		}
		return nil
	}
	parent, err := s.parentOf(dir, k.layer)
	if err != nil {
		return err
	}
	return s.put(parent, name, base, e, k)
}

// put makes e, entry k, the file at name.
func (s *scan) put(parent *node, name, base string, e *archive.Entry, k key) error {
	var n *node
	if name == "." {
		n = s.root
	} else {
		n = parent.children[base]
	}
	if e.Type == archive.TypeHardlink {
		target, err := pathx.Clean(e.Linkname)
		if err != nil {
			return err
		}
		t := s.lookup(target)
		if t == nil || t.isDir() || t.at.layer < 0 {
			if l, ok := s.gone[target]; ok {
				return fmt.Errorf("a hard link to %q, which the whiteout in layer %d removed", e.Linkname, l)
			}
			return fmt.Errorf("a hard link to %q, which is not there at this point", e.Linkname)
		}
		defer func(t *node) {
			if t.hdr.Type == archive.TypeHardlink {
				n.link, n.linkHdr = t.link, t.linkHdr
			} else {
				n.link, n.linkHdr = t.at, t.hdr
			}
		}(t)
	}
	if n == nil || n.isDir() != (e.Type == archive.TypeDir) || e.Type != archive.TypeDir {
		// A new path, or one of another kind, or a file replaced: what was
		// there, and beneath it, goes.
		if n == nil || n != s.root {
			n = newNode(name, k.layer)
			if parent.children == nil {
				parent.children = map[string]*node{}
			}
			parent.children[base] = n
		}
		n.since = k
	}
	n.at, n.hdr = k, e.Clone()
	if n.since.layer < 0 {
		n.since = k
	}
	return nil
}

// parentOf returns the directory dir, making the ones no entry made yet
// (tar extractors make a missing parent). A parent that is not a
// directory is refused: extractors disagree on what a symlink there means.
// layer is the layer of the entry beneath dir.
func (s *scan) parentOf(dir string, layer int) (*node, error) {
	n := s.root
	if dir == "." {
		return n, nil
	}
	for _, c := range strings.Split(dir, "/") {
		next := n.children[c]
		if next == nil {
			next = newNode(path.Join(n.name, c), layer)
			if n.children == nil {
				n.children = map[string]*node{}
			}
			n.children[c] = next
		} else if !next.isDir() {
			return nil, fmt.Errorf("%s above it is a %s in the layers so far, not a directory", names.Quote(next.name), next.hdr.Type)
		}
		n = next
	}
	return n, nil
}

func (s *scan) lookup(name string) *node {
	n := s.root
	if name == "." {
		return n
	}
	for _, c := range strings.Split(name, "/") {
		if n = n.children[c]; n == nil {
			return nil
		}
	}
	return n
}

// hide removes what the layers below layer hold at c, a child of p: the
// entries layer itself made stay (a whiteout applies to the layers below
// only, wherever it stands in its own layer).
func (s *scan) hide(p, c *node, layer int) {
	s.gone[c.name] = layer
	if !keepOf(c, layer) {
		delete(p.children, path.Base(c.name))
	}
}

// keepOf prunes n of what comes from below layer, and says whether
// anything of n is left.
func keepOf(n *node, layer int) bool {
	if n.clean != layer+1 {
		for base, c := range n.children {
			if !keepOf(c, layer) {
				delete(n.children, base)
			}
		}
		n.clean = layer + 1
	}
	if n.at.layer == layer {
		return true
	}
	if len(n.children) > 0 && n.isDir() {
		// Its entry came from below and is gone; what this layer put
		// beneath it keeps a directory there, which no entry describes.
		n.at, n.since, n.hdr = key{-1, -1}, key{-1, -1}, nil
		return true
	}
	return false
}
