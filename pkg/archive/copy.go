package archive

import (
	"errors"
	"fmt"
	"io"
	"path"
	"slices"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// Action is what a copy does with one entry.
type Action uint8

const (
	Keep Action = iota
	Drop
	// Take drops the entry from the copy and hands its data to
	// CopyOptions.Take: for a transform that keeps what it takes out
	// (apply spools a relocated file, hashes a stripped one).
	Take
)

// CopyOptions configures Copy.
type CopyOptions struct {
	// Decide is asked once for every entry except trailers. Nil keeps all.
	Decide func(*Entry) (Action, error)
	// Take is given the data of each entry Decide takes, as soon as Decide
	// has said so, before the copy reads on; what it leaves unread is
	// skipped. The copy then goes on as for a dropped entry.
	Take func(e *Entry, data io.Reader) error
	// Dest is the kind of the destination: it decides how hard links are
	// expressed (cpio: shared inode, data on the last member; tar: data on
	// the first, then links by name).
	Dest Kind
	// Links must be set when a tar source is copied to cpio: cpio needs each
	// group's size in its first member, which a tar stream only reveals
	// later. See ScanLinks.
	Links *LinkScan
}

// Copy streams every entry of src into dst, dropping what Decide says.
//
// A cpio hard-link group is handled as one unit: its members are held back
// (headers only; the data rides on one member, in GNU cpio the last) until the
// group is complete, then written together with the data on a member that
// is kept. Dropping the member that carried the data therefore never leaves
// the others empty. Held-back members come out at the position of the
// group's last member; parents still precede children.
//
// A cpio-to-cpio copy with no Decide passes every entry through untouched,
// so an archive written by GNU cpio comes out byte for byte.
func Copy(dst Writer, src Reader, opt CopyOptions) error {
	c := &copier{dst: dst, src: src, opt: opt, groups: map[HardLinkKey]*linkGroup{}, keptNames: map[string]keptFile{}}
	c.regroup = opt.Decide != nil || !opt.Dest.IsCpio()
	return c.run()
}

type copier struct {
	dst     Writer
	src     Reader
	opt     CopyOptions
	regroup bool

	groups  map[HardLinkKey]*linkGroup
	pending []*linkGroup // in order of first appearance, for deterministic flushing

	// tar sources: names kept so far, to check a link's target, and the
	// inode numbering when going to cpio.
	keptNames map[string]keptFile
	nextInode uint64
	buf       []byte
}

// keptFile is what a later tar hard link needs of the entry it names.
type keptFile struct {
	typ                  Type
	mode                 uint32
	inode                uint64
	nlink                uint32
	rdevMajor, rdevMinor uint32
}

type linkGroup struct {
	key     HardLinkKey
	members []*Entry // the kept ones
	seen    uint32
	// out is the name the group's file went out under when its data came
	// before its last member (a tar made into newc carries the data on the
	// first member, as GNU cpio does with a tar): the members still to
	// come are written as links to it.
	out string
	// staged holds data that came with a dropped member while members
	// still to come may be kept.
	staged     *stage
	stagedSize int64
}

func (c *copier) run() error {
	for {
		e, err := c.src.Next()
		if err == io.EOF {
			return c.flushAll()
		}
		if err != nil {
			return err
		}
		if err := c.handle(e); err != nil {
			return err
		}
	}
}

func (c *copier) decide(e *Entry) (Action, error) {
	if c.opt.Decide == nil {
		return Keep, nil
	}
	act, err := c.opt.Decide(e)
	if err != nil || act != Take {
		return act, err
	}
	if err := c.opt.Take(e, c.src); err != nil {
		return 0, err
	}
	return Drop, nil
}

func (c *copier) handle(e *Entry) error {
	if e.Type == TypeTrailer {
		// A member boundary resets the kernel's hard-link table, so a group
		// never spans it: whatever is still pending is complete as it is.
		if err := c.flushAll(); err != nil {
			return err
		}
		clear(c.groups)
		if !c.opt.Dest.IsCpio() {
			return nil
		}
		return c.dst.WriteHeader(e)
	}
	if key, ok := e.LinkKey(); ok && c.regroup {
		return c.addToGroup(key, e)
	}
	act, err := c.decide(e)
	if err != nil {
		return err
	}
	// A tar source's hard links name their target by path.
	if e.Type == TypeHardlink || c.opt.Links != nil || tarHeaderOf(e) != nil {
		return c.handleTarStyle(e, act)
	}
	if act == Drop {
		return nil
	}
	return c.emit(e, c.src)
}

func (c *copier) emit(e *Entry, data io.Reader) error {
	if err := c.dst.WriteHeader(e); err != nil {
		return err
	}
	if e.Size > 0 && !Discards(c.dst) {
		if c.buf == nil {
			c.buf = make([]byte, 256<<10)
		}
		// Plain Reader and Writer: io.CopyN would otherwise hand the copy
		// to a ReadFrom with a small buffer of its own.
		n, err := io.CopyBuffer(struct{ io.Writer }{c.dst}, io.LimitReader(struct{ io.Reader }{data}, e.Size), c.buf)
		if err == nil && n < e.Size {
			err = io.EOF
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("entry %q: data ends after %d of %d bytes: %w", e.Name, n, e.Size, io.ErrUnexpectedEOF)
			}
			return err
		}
	}
	return nil
}

func (c *copier) addToGroup(key HardLinkKey, e *Entry) error {
	act, err := c.decide(e)
	if err != nil {
		return err
	}
	g := c.groups[key]
	if g == nil {
		g = &linkGroup{key: key}
		c.groups[key] = g
		c.pending = append(c.pending, g)
	}
	g.seen++
	if g.out != "" {
		return c.lateMember(g, e, act)
	}
	if act == Keep {
		g.members = append(g.members, e)
	}
	if e.Size > 0 || g.seen >= e.Nlink {
		return c.flushGroup(g, e)
	}
	return nil
}

func (c *copier) isTarDest() bool { return !c.opt.Dest.IsCpio() && c.opt.Dest != KindDir }

// lateMember writes a member of a group whose file has gone out already.
func (c *copier) lateMember(g *linkGroup, e *Entry, act Action) error {
	if act == Drop {
		return nil
	}
	m := e.Clone()
	if !c.isTarDest() {
		// As it came: the kernel, and DirWriter, link it by inode, and
		// write any data it carries into the shared file.
		return c.emit(m, c.src)
	}
	if e.Size > 0 {
		return fmt.Errorf("entry %q: a second member of a hard-link group with data; tar cannot hold that", e.Name)
	}
	m.Type, m.Linkname, m.Size = TypeHardlink, g.out, 0
	return c.dst.WriteHeader(m)
}

// flushGroup writes a group. carrier is the member whose data is next in
// src, or nil when no member had data or the group ends (a trailer, the
// end of the input) before its Nlink members were seen.
func (c *copier) flushGroup(g *linkGroup, carrier *Entry) error {
	complete := carrier == nil || g.seen >= carrier.Nlink
	var size int64
	var data io.Reader = NoData{}
	switch {
	case carrier != nil && carrier.Size > 0:
		size, data = carrier.Size, c.src
	case g.staged != nil:
		defer g.staged.Close()
		r, err := g.staged.Reader()
		if err != nil {
			return err
		}
		size, data = g.stagedSize, r
	}
	var kept []*Entry
	for _, m := range g.members {
		kept = append(kept, m.Clone())
	}
	if len(kept) == 0 && !complete && size > 0 && g.staged == nil {
		// The data came with a dropped member; members still to come may
		// be kept and need it.
		g.staged = newStage()
		n, err := io.Copy(g.staged, io.LimitReader(struct{ io.Reader }{data}, size))
		if err == nil && n < size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("entry %q: %w", carrier.Name, err)
		}
		g.stagedSize = size
		return nil
	}
	c.pending = slices.DeleteFunc(c.pending, func(p *linkGroup) bool { return p == g })
	if complete || len(kept) == 0 {
		delete(c.groups, g.key)
	}
	if len(kept) == 0 {
		return nil // the data, unread, is skipped by the next Next
	}
	g.members = nil
	touched := complete && len(kept) != int(g.seen)
	// cpio: the last member carries the data; tar: the first, and the
	// rest are links to it.
	tarDest := c.isTarDest()
	holder := kept[len(kept)-1]
	if tarDest {
		holder, touched = kept[0], true
	}
	for _, m := range kept {
		if touched {
			m.Nlink = uint32(len(kept))
		}
		m.Size = 0
		if m == holder {
			m.Size, g.out = size, m.Name
			if err := c.emit(m, data); err != nil {
				return err
			}
			continue
		}
		if tarDest {
			m.Type, m.Linkname = TypeHardlink, holder.Name
		}
		if err := c.dst.WriteHeader(m); err != nil {
			return err
		}
	}
	return nil
}

func (c *copier) flushAll() error {
	for len(c.pending) > 0 {
		if err := c.flushGroup(c.pending[0], nil); err != nil {
			return err
		}
	}
	return nil
}

// handleTarStyle copies entries of a source whose hard links are by name.
//
// Every kept name is remembered, with what a link to it needs: a tar
// stream gives a link's target only by name, earlier in the stream.
func (c *copier) handleTarStyle(e *Entry, act Action) error {
	clean, err := pathx.Clean(e.Name)
	if err != nil {
		return fmt.Errorf("entry %q: %w", e.Name, err)
	}
	if e.Type == TypeHardlink {
		target, err := pathx.Clean(e.Linkname)
		if err != nil {
			return fmt.Errorf("hard link %q: target: %w", e.Name, err)
		}
		t, ok := c.keptNames[target]
		if act == Drop {
			return nil
		}
		if !ok {
			return fmt.Errorf("hard link %q: target %q is not in the output (missing from the input, or dropped)", e.Name, e.Linkname)
		}
		if what := map[Type]string{TypeDir: "a directory", TypeSymlink: "a symlink"}[t.typ]; what != "" {
			return fmt.Errorf("hard link %q: target %q is %s; refusing it", e.Name, e.Linkname, what)
		}
		if c.opt.Dest.IsCpio() {
			// A member of the target's group, as GNU cpio writes one: its
			// type, mode and inode; the data went out with the target.
			m := e.Clone()
			m.Type, m.Linkname, m.Size = t.typ, "", 0
			m.Mode = t.mode
			m.Inode, m.Nlink = t.inode, t.nlink
			m.RdevMajor, m.RdevMinor = t.rdevMajor, t.rdevMinor
			return c.dst.WriteHeader(m)
		}
		return c.dst.WriteHeader(e)
	}
	if act == Drop {
		return nil
	}
	out := e
	if c.opt.Dest.IsCpio() && c.opt.Links != nil {
		out = e.Clone()
		c.nextInode++
		out.Inode = c.nextInode
		out.Nlink = 1
		switch e.Type {
		case TypeDir:
			out.Nlink = 2 + c.opt.Links.subdirs[clean]
		case TypeRegular, TypeChar, TypeBlock, TypeFifo:
			if n := c.opt.Links.links[clean]; n > 0 {
				out.Nlink = uint32(n) + 1
			}
		}
	}
	c.keptNames[clean] = keptFile{typ: out.Type, mode: out.Mode, inode: out.Inode, nlink: out.Nlink,
		rdevMajor: out.RdevMajor, rdevMinor: out.RdevMinor}
	return c.emit(out, c.src)
}

// NoData is the data of an entry that has none: every Read is io.EOF.
type NoData struct{}

func (NoData) Read([]byte) (int, error) { return 0, io.EOF }

// LinkScan is what a first pass over a tar stream learns for cpio output:
// how many kept hard links name each file, and how many subdirectories each
// directory has (a directory's link count).
type LinkScan struct {
	links   map[string]int
	subdirs map[string]uint32
}

// ScanLinks reads the headers of a tar-style source and counts, for every
// file, the hard links to it.
func ScanLinks(src Reader) (*LinkScan, error) {
	s := &LinkScan{links: map[string]int{}, subdirs: map[string]uint32{}}
	for {
		e, err := src.Next()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		name, err := pathx.Clean(e.Name)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", e.Name, err)
		}
		switch e.Type {
		case TypeHardlink:
			target, err := pathx.Clean(e.Linkname)
			if err != nil {
				return nil, fmt.Errorf("hard link %q: target: %w", e.Name, err)
			}
			s.links[target]++
		case TypeDir:
			if name != "." {
				s.subdirs[path.Dir(name)]++
			}
		}
	}
}
