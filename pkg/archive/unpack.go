package archive

import (
	"errors"
	"fmt"
	"hash/maphash"
	"path"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// An entry's literal name is not always where its consumer puts it: in
// "x/" (dir), "x -> etc/cni/net.d" (symlink), "x/00-evil.conflist", the
// kernel's unpacker replaces the empty directory with the link and creates
// the file through it, in etc/cni/net.d. A Resolver follows a stream entry
// by entry and says where each one lands, so that the policy is matched
// there (pkg/trim), in the input and again in what apply writes.

// Landing is where an entry ends up once its consumer has unpacked it and
// every entry before it.
type Landing struct {
	// Path is the cleaned path the entry is made at; "" when the consumer
	// makes nothing of it (a parent is missing or is no directory, a
	// directory that is not empty is in the way, a symlink loop).
	Path string
	// Via are the symlinks followed on the way, in order ("x ->
	// etc/cni/net.d"), each at the path where it is.
	Via []string
	// File numbers the regular file the entry is now a name of, 0 for
	// anything else: every name of a hard-link group has the same, and so
	// does a later regular file at one of those names in a cpio stream,
	// which the kernel writes in place (do_name: clean_path keeps a
	// regular file under a regular entry, filp_open opens it O_TRUNC),
	// so that every name of the group has the later content.
	File uint32
	// Data: the entry's data is the file's content from here on. The
	// kernel truncates the file for every regular entry but a later
	// member of its hard-link group, which writes its data, if any, over
	// the group's.
	Data bool
}

// ErrAmbiguousParent refuses a tar entry beneath a path that is, at that
// point of the stream, a symlink or no directory: GNU tar 1.34 follows an
// in-archive relative link and puts the entry beneath its target (it fails
// "Not a directory" for an absolute or ".." one, and keeps a symlink to a
// directory when a directory entry of that name comes later), bsdtar
// refuses "Cannot extract through symlink". No one place is where it lands.
var ErrAmbiguousParent = errors.New("tar extractors disagree on where it lands (GNU tar may follow the link, bsdtar refuses): refused")

// Resolver says, entry by entry in stream order, where an archive's
// consumer puts each entry. Feed it every entry, trailers included, of
// every member of a stream (the segments of one initrd, in the order the
// kernel unpacks them): it keeps what the consumer has made so far.
type Resolver struct {
	tree KernelTree
	// tar, when set, refuses what tar extractors disagree on (see
	// ErrAmbiguousParent): the state of each path that is not a directory
	// at this point of the stream, a symlink staying one under a later
	// directory entry (GNU tar keeps a symlink to a directory).
	tar map[pathKey]Type
}

// NewResolver returns the resolver for an input of kind k. cpio and trees
// are resolved as the kernel unpacks a newc archive (a tree has one thing
// at each path, so its entries land at their names); tar is refused
// where its extractors disagree and is otherwise resolved the same way;
// an unknown kind (0) gets both.
func NewResolver(k Kind) *Resolver {
	r := &Resolver{tree: *NewKernelTree()}
	if !k.IsCpio() && k != KindDir {
		r.tar = map[pathKey]Type{}
	}
	// tar extractors unlink a file before they write one of its name
	// (GNU tar's default; libarchive's on EEXIST): a new file, apart
	// from the earlier one's other names.
	r.tree.unlinkFirst = r.tar != nil && k != 0
	return r
}

// Resolve returns where e lands. It fails only for a tar entry that tar
// extractors would put in different places.
func (r *Resolver) Resolve(e *Entry) (Landing, error) {
	if r.tar != nil && e.Type != TypeTrailer {
		if err := r.checkTar(e); err != nil {
			return Landing{}, err
		}
	}
	return r.tree.Add(e), nil
}

// Canonical is where the path target, read from directory dir (a
// symlink's target: absolute from the root, relative from the link's
// directory), leads now, every symlink on the way and at its end followed
// as path lookup follows them; what does not exist yet is taken as it is
// written.
func (r *Resolver) Canonical(dir, target string) string {
	var via []string
	if p, ok := r.tree.walk(dir, target, true, &via); ok {
		return p
	}
	// A target that loops is taken as it is written.
	if !strings.HasPrefix(target, "/") {
		target = dir + "/" + target
	}
	if p := strings.TrimPrefix(path.Clean("/"+target), "/"); p != "" {
		return p
	}
	return "."
}

// Lstat says what is at the clean path p now, as lstat(2) would in the
// unpacked tree: its type and, for a symlink, its target.
func (r *Resolver) Lstat(p string) (Type, string, bool) {
	n, ok := r.tree.node(p)
	return n.typ, n.target, ok
}

func (r *Resolver) checkTar(e *Entry) error {
	name, err := pathx.Clean(e.Name)
	if err != nil {
		return err
	}
	for i := 0; i < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		if t, ok := r.tar[r.tree.key(name[:i])]; ok {
			what := "a " + t.String()
			if n, _ := r.tree.node(name[:i]); t == TypeSymlink && n.typ == TypeSymlink {
				what = "a symlink (" + names.Quote(name[:i]) + " -> " + names.Quote(n.target) + ")"
			}
			return fmt.Errorf("%s above it is %s at this point of the stream: %w", names.Quote(name[:i]), what, ErrAmbiguousParent)
		}
	}
	switch k := r.tree.key(name); {
	case e.Type != TypeDir:
		r.tar[k] = e.Type
	case r.tar[k] != TypeSymlink:
		delete(r.tar, k)
	}
	return nil
}

// maxSymlinks is the kernel's MAXSYMLINKS (include/linux/namei.h): path
// lookup fails with ELOOP after following that many.
const maxSymlinks = 40

// KernelTree is what the kernel's initramfs unpacker (init/initramfs.c)
// has made of the entries fed to it so far, and where each one went. It
// models, from the kernel's source:
//
//   - do_name and do_symlink call clean_path first, which removes what is
//     at the name (lstat, not followed) when its type differs from the
//     entry's (a symlink's "type" is 0 there, so anything is removed
//     before a link): a directory by rmdir, which fails unless it is
//     empty, anything else by unlink. What stays makes the entry fail:
//     mkdir over a directory keeps it, open(O_CREAT) on a directory fails
//     EISDIR, symlink and mknod fail EEXIST.
//   - every name is then opened with its parents resolved through the
//     symlinks already made, absolute targets from the root and ".." as
//     the kernel walks them, never above the root; a missing parent or
//     one that is not a directory makes nothing (the entry is skipped).
//   - maybe_link and find_link: a regular file or a device with nlink >= 2
//     whose (dev, inode, type) came earlier in the same member is made by
//     link(2) to the earlier name, whatever that name now is (a symlink
//     included: link does not follow it), after clean_path removes what is
//     at the new name; do_name's TRAILER!!! branch (free_hash) forgets the
//     groups.
//   - a regular entry at the name of a regular file (of this member or an
//     earlier one) is written in place: clean_path keeps it, do_name opens
//     it with O_TRUNC, fchown, fchmod, truncate and the data go to that
//     inode, so every other name it has shows the later file (Landing.File).
//
// One KernelTree may be fed the members of several segments, in the
// order the kernel unpacks them: the tree stays, only the hard-link groups
// reset at each trailer.
type KernelTree struct {
	// nodes are by the path where each is, "." the root, keyed by two
	// seeded hashes of it: a table with no pointers costs the garbage
	// collector nothing to scan, and an archive of 10^6 entries has two
	// (the input's, and the output check's) of 24 bytes a slot. Names
	// cannot be chosen to collide without the seeds, and 128 bits leave
	// chance collisions out of reach.
	nodes   map[pathKey]kstat
	targets map[pathKey]string // the symlinks'
	seeds   [2]maphash.Seed
	links   map[HardLinkKey]string
	files   uint32 // regular files made so far: the last one's number
	// unlinkFirst: a regular entry over a regular file makes a new file,
	// as tar extractors do, rather than writing the kernel's in place.
	unlinkFirst bool
	// names, when set (tests), keeps each node's path.
	names map[pathKey]string
}

type pathKey [2]uint64

type kstat struct {
	typ Type
	// n is a directory's count of entries, or a regular file's number
	// (Landing.File): one field for the two keeps a slot at 24 bytes.
	n uint32
}

type knode struct {
	typ    Type
	kids   uint32 // a directory's entries
	file   uint32 // a regular file's number
	target string // a symlink's
}

// NewKernelTree returns the tree of an empty rootfs.
func NewKernelTree() *KernelTree {
	t := &KernelTree{nodes: map[pathKey]kstat{}, targets: map[pathKey]string{}, seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	t.nodes[t.key(".")] = kstat{typ: TypeDir}
	return t
}

func (t *KernelTree) key(p string) pathKey {
	return pathKey{maphash.String(t.seeds[0], p), maphash.String(t.seeds[1], p)}
}

// node is what is at the clean path p.
func (t *KernelTree) node(p string) (knode, bool) {
	k := t.key(p)
	st, ok := t.nodes[k]
	n := knode{typ: st.typ}
	switch st.typ {
	case TypeDir:
		n.kids = st.n
	case TypeRegular:
		n.file = st.n
	case TypeSymlink:
		n.target = t.targets[k]
	}
	return n, ok
}

// Add unpacks e as the kernel does and returns where it landed. A name
// that pathx.Clean refuses lands nowhere.
func (t *KernelTree) Add(e *Entry) Landing {
	if e.Type == TypeTrailer {
		t.links = nil
		return Landing{}
	}
	name, err := pathx.Clean(e.Name)
	if err != nil {
		return Landing{}
	}
	if name == "." {
		if e.Type == TypeDir {
			return Landing{Path: "."}
		}
		return Landing{}
	}
	// Every node's parent is a directory node (nothing is added beneath
	// anything else, and a directory with entries is never removed), so a
	// parent that is a directory node is where the name leads: the walk is
	// for the names that meet a symlink or nothing.
	parent, full := path.Dir(name), name
	var via []string
	pk := t.key(parent)
	if n, ok := t.nodes[pk]; ok && n.typ == TypeDir {
		if file, ok := t.addNew(e, name, pk, n); ok {
			return Landing{Path: name, File: file, Data: file != 0}
		}
	} else {
		dir, ok := t.walk(".", parent, false, &via)
		if !ok {
			return Landing{}
		}
		full = join(dir, path.Base(name))
	}
	if file, linked, ok := t.make(e, name, full); ok {
		return Landing{Path: full, Via: via, File: file, Data: e.Type == TypeRegular && (!linked || e.Size > 0)}
	}
	return Landing{}
}

// addNew is Add's common case, in as few table operations as it takes: a
// name that is new in its directory (pk, whose node is parent), made as
// it is, with its file's number (0 but for a regular file). It reports
// false, having changed nothing, for anything else.
func (t *KernelTree) addNew(e *Entry, name string, pk pathKey, parent kstat) (uint32, bool) {
	if e.Type != TypeDir && (!e.Type.info().links || e.Nlink > 1) {
		return 0, false
	}
	k := t.key(name)
	if _, ok := t.nodes[k]; ok {
		return 0, false
	}
	st := kstat{typ: e.Type}
	if e.Type == TypeRegular {
		st.n = t.newFile()
	}
	t.nodes[k] = st
	parent.n++
	t.nodes[pk] = parent
	if t.names != nil {
		t.names[k] = name
	}
	return st.n, true
}

// newFile numbers a regular file made anew.
func (t *KernelTree) newFile() uint32 {
	t.files++
	return t.files
}

// make does for e at full what do_name, do_symlink and maybe_link do, and
// reports whether e is there afterwards, the number of the file it is a
// name of (a regular one), and whether it was linked to an earlier
// member of its group.
func (t *KernelTree) make(e *Entry, name, full string) (file uint32, linked, ok bool) {
	cur, exists := t.node(full)
	if e.Type == TypeSymlink {
		// clean_path(collected, 0): whatever is there goes, if it can.
		if !t.remove(full) || e.Linkname == "" {
			return 0, false, false
		}
		t.add(full, knode{typ: TypeSymlink, target: e.Linkname})
		return 0, false, true
	}
	if exists && cur.typ != e.Type {
		t.remove(full)
	}
	if old, ok := t.earlier(e, name); ok {
		file, ok := t.link(old, full)
		return file, true, ok
	}
	cur, exists = t.node(full)
	switch e.Type {
	case TypeRegular, TypeChar, TypeBlock, TypeFifo, TypeSocket:
		if exists {
			// open(O_TRUNC) of a file keeps it, and writes it in place;
			// EISDIR, or mknod's EEXIST.
			if cur.typ != e.Type {
				return 0, false, false
			}
			if e.Type == TypeRegular && t.unlinkFirst {
				cur.file = t.newFile()
				t.nodes[t.key(full)] = kstat{typ: TypeRegular, n: cur.file}
			}
			return cur.file, false, true
		}
		n := knode{typ: e.Type}
		if e.Type == TypeRegular {
			n.file = t.newFile()
		}
		t.add(full, n)
		return n.file, false, true
	case TypeDir:
		if !exists {
			t.add(full, knode{typ: TypeDir})
		}
	default:
		return 0, false, false
	}
	return 0, false, true
}

// earlier returns the name e is a hard link to: a tar hard link's
// target, or the first member of its cpio group in this member of the
// archive (which it then becomes for the later ones).
func (t *KernelTree) earlier(e *Entry, name string) (string, bool) {
	if e.Type == TypeHardlink {
		old, err := pathx.Clean(e.Linkname)
		return old, err == nil
	}
	k, ok := e.LinkKey()
	if !ok {
		return "", false
	}
	if old, ok := t.links[k]; ok {
		return old, true
	}
	if t.links == nil {
		t.links = map[HardLinkKey]string{}
	}
	t.links[k] = name
	return "", false
}

// link is maybe_link's clean_path(collected, 0) and link(old, full): the
// new name is what old is now (not followed), the same file, unless old
// is gone or a directory, or a directory that is not empty stays at full.
func (t *KernelTree) link(old, full string) (uint32, bool) {
	if !t.remove(full) {
		return 0, false
	}
	var via []string
	dir, ok := t.walk(".", path.Dir(old), false, &via)
	if !ok {
		return 0, false
	}
	n, ok := t.node(join(dir, path.Base(old)))
	if !ok || n.typ == TypeDir {
		return 0, false
	}
	t.add(full, knode{typ: n.typ, target: n.target, file: n.file})
	return n.file, true
}

// remove is clean_path's rmdir or unlink; it reports whether full is free.
func (t *KernelTree) remove(full string) bool {
	k := t.key(full)
	n, ok := t.nodes[k]
	if !ok {
		return true
	}
	if n.typ == TypeDir && n.n > 0 {
		return false
	}
	delete(t.nodes, k)
	delete(t.targets, k)
	if t.names != nil {
		delete(t.names, k)
	}
	t.count(path.Dir(full), -1)
	return true
}

func (t *KernelTree) add(full string, n knode) {
	k := t.key(full)
	t.nodes[k] = kstat{typ: n.typ, n: n.file}
	if n.typ == TypeSymlink {
		t.targets[k] = n.target
	}
	if t.names != nil {
		t.names[k] = full
	}
	t.count(path.Dir(full), 1)
}

// count adds delta, 1 or -1, to the count of entries of the directory dir.
func (t *KernelTree) count(dir string, delta int) {
	k := t.key(dir)
	if n, ok := t.nodes[k]; ok {
		n.n += uint32(delta)
		t.nodes[k] = n
	}
}

// walk resolves p from directory base as path lookup does, following
// every symlink on the way, and the last component too when followLast
// (else p must lead to a directory). It returns the canonical path, or
// false for ENOENT, ENOTDIR or ELOOP. With lax, a missing component and
// what follows it are taken as written instead of failing.
func (t *KernelTree) walk(base, p string, lax bool, via *[]string) (string, bool) {
	cur := base
	if strings.HasPrefix(p, "/") {
		cur = "."
	}
	rest := p
	followed := 0
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := join(cur, comp)
		n, ok := t.node(next)
		switch {
		case !ok && lax:
			cur = next
		case !ok:
			return "", false
		case n.typ == TypeDir:
			cur = next
		case n.typ == TypeSymlink:
			if followed++; followed > maxSymlinks {
				return "", false
			}
			*via = append(*via, next+" -> "+n.target)
			if strings.HasPrefix(n.target, "/") {
				cur = "."
			}
			if rest != "" {
				rest = n.target + "/" + rest
			} else {
				rest = n.target
			}
		default:
			if lax {
				cur = next
				continue
			}
			return "", false
		}
	}
	return cur, true
}

// join is path.Join for a clean directory and one component.
func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
