package ociimage

import (
	"cmp"
	"maps"
	"slices"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// plan says, for every entry the merged view keeps, what the Reader
// yields.
func (img *Image) plan() {
	s := img.tree
	s.plan = map[key]*planned{}
	owner := map[key]*node{} // the name a file's data is yielded under
	var links []*node
	walk(s.root, func(n *node) {
		switch {
		case n.at.layer < 0:
		case n.hdr.Type == archive.TypeDir && n.since != n.at:
			s.plan[n.since] = &planned{node: n, hdr: n.hdr}
		case n.hdr.Type == archive.TypeHardlink:
			links = append(links, n)
		default:
			s.plan[n.at] = &planned{node: n}
			owner[n.at] = n
		}
	})
	slices.SortFunc(links, func(a, b *node) int { return cmpKey(a.at, b.at) })
	for _, n := range links {
		if o := owner[n.link]; o != nil {
			s.plan[n.at] = &planned{node: n, hdr: relinked(n.hdr, o.name)}
			continue
		}
		owner[n.link] = n // the data's entry is gone: yielded under the first name left
		s.plan[n.link] = &planned{node: n, as: n.name}
	}
	s.order = slices.SortedFunc(maps.Keys(s.plan), cmpKey)
}

// relinked is a hard link's header pointing at name, as it is when that
// is where it pointed.
func relinked(h *archive.Entry, name string) *archive.Entry {
	if c, err := pathx.Clean(h.Linkname); err == nil && c == name {
		return nil
	}
	c := h.Clone()
	c.Linkname = name
	return c
}

func cmpKey(a, b key) int {
	if c := cmp.Compare(a.layer, b.layer); c != 0 {
		return c
	}
	return cmp.Compare(a.ord, b.ord)
}

// walk calls f on n and everything beneath it, in name order.
func walk(n *node, f func(*node)) {
	f(n)
	for _, base := range slices.Sorted(maps.Keys(n.children)) {
		walk(n.children[base], f)
	}
}

// LayerOf returns the layer that added the file at name (clean) in the
// merged view; nil for none (a path no layer has, or a directory only
// its contents imply).
func (img *Image) LayerOf(name string) *Layer {
	n := img.tree.lookup(name)
	if n == nil || n.at.layer < 0 {
		return nil
	}
	k := n.at
	if n.hdr.Type == archive.TypeDir {
		k = n.since
	}
	return img.Layers[k.layer]
}
