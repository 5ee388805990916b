package archive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/internal/fsat"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// DirReader reads a directory tree as entries, in the order and with the
// conventions of Buildroot's `find . | LC_ALL=C sort | cpio -o -H newc`.
type DirReader struct {
	root    *os.Root
	path    string
	entries []*dirItem // in the order Next returns them
	i       int        // index of the entry Next returns next

	// The entry whose data Read returns. The caller owns the *Entry it was
	// given and may change it, so what Read needs is copied here.
	curName   string
	curID     fileID
	remaining int64
	file      *os.File // opened lazily by the first Read

	namesOnly bool
	unstated  bool     // namesOnly: the current entry has not been through Stat
	top       *os.File // the root directory, during the walk

	// rootDev is the root's st_dev: the walk stays on that filesystem.
	rootDev uint64
}

// errOtherFS is what opening a mount point for listing gives.
var errOtherFS = errors.New("another filesystem is mounted here")

// DirReaderOptions configures NewDirReader.
type DirReaderOptions struct {
	// NamesOnly lists the tree without an lstat per entry: Next returns
	// Name and Type alone, from the directory listings, and Stat fills in
	// the rest of an entry on demand. Inode and Nlink stay 0, since
	// hard-link groups are not worked out. For callers that look closely
	// at a few entries of a large tree: applying rules to a Buildroot
	// target in place costs a third as much.
	NamesOnly bool
}

// fileID is where a file lives on the host: st_dev and st_ino.
type fileID struct{ dev, ino uint64 }

// dirItem is one entry of the walk. The whole tree is held until it is
// sorted, so items are small and flat, allocated a directory at a time,
// with no *Entry each (176 bytes and an allocation of its own): that way
// a tree of 10^6 entries took 390 MB to list. Next makes the Entry.
type dirItem struct {
	name, linkname string
	id             fileID
	// size is a regular file's size, and a device's number (unix.Mkdev)
	// for char and block devices, which have none.
	size      int64
	mtimeSec  int64
	mtimeNsec int32
	mode      uint32 // st_mode: type and permission bits
	uid, gid  uint32
	nlink     uint32
	inode     uint32 // as cpioOrder numbers it, from 0
	// xattrs are the extended attributes, nil when none (most files).
	xattrs map[string]string
	// blocks is st_blocks: a regular file with fewer than its size may
	// have holes.
	blocks int64
}

func (it *dirItem) typ() Type {
	t, _ := typeFromUnixMode(it.mode)
	return t
}

// entry is the Entry of an item that went through lstat.
func (it *dirItem) entry() *Entry {
	e := &Entry{
		Name:     it.name,
		Type:     it.typ(),
		Mode:     it.mode & PermMask,
		UID:      int(it.uid),
		GID:      int(it.gid),
		ModTime:  time.Unix(it.mtimeSec, int64(it.mtimeNsec)),
		Linkname: it.linkname,
		Inode:    uint64(it.inode),
		Nlink:    it.nlink,
		Offset:   -1,
		Xattrs:   it.xattrs,
	}
	switch e.Type {
	case TypeRegular:
		e.Size = it.size
	case TypeChar, TypeBlock:
		e.RdevMajor, e.RdevMinor = unix.Major(uint64(it.size)), unix.Minor(uint64(it.size))
	}
	return e
}

// linkable reports whether the item may belong to a hard-link group, as
// Entry.LinkKey decides it.
func (it *dirItem) linkable() bool { return it.typ().info().links && it.nlink >= 2 }

// NewDirReader lists the tree under root without following symlinks, as
// Buildroot's `find . | LC_ALL=C sort | cpio -o -H newc --reproducible`
// (GNU cpio 2.13) would archive it:
//
//   - names come bytewise sorted by full path ("a-c" before "a/b"), "." first,
//     without a "./" prefix ("etc", "etc/f");
//   - inode numbers are assigned from 0 in that sorted order and
//     DevMajor/DevMinor are 0, so nothing depends on the host filesystem;
//   - a group of hard-linked regular files is held back to the position of
//     its last member, the earlier members come first in reverse order with
//     Size 0, and the last member carries the data. Nlink is the number of
//     members in the tree, not st_nlink: a link from outside does not make a
//     group (there GNU cpio differs, and defers such files to the end).
//
// The whole tree is walked and sorted up front, since groups need their last
// member known before the first is emitted. Offset is -1.
//
// The reader holds a directory handle (and at most one file) until Next
// returns io.EOF or Close is called.
func NewDirReader(root string, opt DirReaderOptions) (*DirReader, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	d := &DirReader{root: r, path: root, namesOnly: opt.NamesOnly}
	if err := d.scan(); err != nil {
		r.Close()
		return nil, err
	}
	return d, nil
}

// scan walks the tree, sorts it and fills in the hard-link fields.
func (d *DirReader) scan() error {
	top, err := d.root.Open(".")
	if err != nil {
		return fmt.Errorf("%s: %w", d.path, err)
	}
	defer top.Close()
	rootItem, err := d.statAt(top, ".", ".")
	if err != nil {
		return err
	}
	if rootItem.typ() != TypeDir {
		return fmt.Errorf("%s: not a directory", d.path)
	}
	d.rootDev = rootItem.id.dev
	d.top = top
	chunks, n, err := d.walkAll()
	d.top = nil
	if err != nil {
		return err
	}
	items := make([]*dirItem, 0, n+1)
	items = append(items, &rootItem)
	for _, c := range chunks {
		for i := range c {
			items = append(items, &c[i])
		}
	}
	// Go compares strings bytewise, which is LC_ALL=C sort order: "a-c"
	// sorts before "a/b" because '-' < '/'. A parent is a prefix of its
	// children, so it always comes first. The root stays first.
	slices.SortFunc(items[1:], func(a, b *dirItem) int { return strings.Compare(a.name, b.name) })
	if !d.namesOnly {
		items = cpioOrder(items)
	}
	d.entries = items
	return nil
}

// cpioOrder numbers the items and puts hard-link groups where GNU cpio
// writes them, so that archiving the entries gives Buildroot's image.
func cpioOrder(items []*dirItem) []*dirItem {
	// Only members inside the tree count: a file linked from outside is a
	// plain file here.
	type group struct {
		members  []*dirItem
		n        int
		inode    uint32
		numbered bool
	}
	groups := map[fileID]*group{}
	for _, it := range items {
		if it.linkable() {
			g := groups[it.id]
			if g == nil {
				g = &group{}
				groups[it.id] = g
			}
			g.n++
		}
	}
	// In place: an item goes out at its own position or later, never
	// before it is read.
	out := items[:0]
	var inode uint32
	for _, it := range items {
		var g *group
		if it.linkable() {
			g = groups[it.id]
		}
		if g == nil || g.n < 2 {
			if it.typ() != TypeDir {
				it.nlink = 1
			}
			it.inode = inode
			inode++
			out = append(out, it)
			continue
		}
		// GNU cpio numbers a file when it first sees it, in input order.
		if !g.numbered {
			g.inode, g.numbered = inode, true
			inode++
		}
		it.inode, it.nlink = g.inode, uint32(g.n)
		if it.typ() != TypeRegular {
			// Nothing to carry: GNU cpio writes linked fifos and devices
			// where they are.
			out = append(out, it)
			continue
		}
		g.members = append(g.members, it)
		if len(g.members) < g.n {
			continue
		}
		// The last member: GNU cpio now writes the held-back members,
		// most recent first, without data, then this one with it.
		for k := len(g.members) - 2; k >= 0; k-- {
			g.members[k].size = 0
			out = append(out, g.members[k])
		}
		out = append(out, it)
	}
	return out
}

// walkAll lists the tree below the root. Directories are read on several
// goroutines: an lstat per entry is most of the cost of applying rules to
// a Buildroot target in place, and it scales with cores (make bench:
// apply-dir). The result is sorted later, so the order of the walk does
// not matter; when several directories fail, the error reported is that of
// the first in sorted order, whatever finished first.
func (d *DirReader) walkAll() (chunks [][]dirItem, n int, err error) {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		errDir  string
		walkErr error
	)
	sem := make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
	var visit func(dir string)
	visit = func(dir string) {
		defer wg.Done()
		sem <- struct{}{}
		got, subdirs, err := d.readDir(dir)
		<-sem
		mu.Lock()
		if len(got) > 0 {
			chunks = append(chunks, got)
			n += len(got)
		}
		if err != nil && (walkErr == nil || dir < errDir) {
			errDir, walkErr = dir, err
		}
		mu.Unlock()
		wg.Add(len(subdirs))
		for _, sub := range subdirs {
			go visit(sub)
		}
	}
	wg.Add(1)
	visit(".")
	wg.Wait()
	return chunks, n, walkErr
}

// openat2Missing is set once openat2(2) turns out to be unavailable
// (kernels before 5.6, or a seccomp filter): os.Root's own resolution is
// used from then on.
var openat2Missing atomic.Bool

// openDir opens dir, a directory found by the walk, for listing. os.Root
// resolves a name one component at a time, two system calls per level;
// openat2 confined beneath the root and refusing every symlink does it in
// one, as safely: the walk only descends into what were real directories.
// A mount point gives errOtherFS: RESOLVE_NO_XDEV refuses to cross one
// (bind mounts of the same filesystem included); without openat2, a
// st_dev other than the root's does.
func (d *DirReader) openDir(dir string) (*os.File, error) {
	if openat2Missing.Load() || dir == "." {
		return d.openDirRoot(dir)
	}
	var fd int
	err := fsat.WithFd(d.top, func(rootFd int) error {
		var err error
		for {
			fd, err = unix.Openat2(rootFd, dir, &unix.OpenHow{
				Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
				Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
			})
			if err != unix.EINTR && err != unix.EAGAIN {
				return err
			}
		}
	})
	switch err {
	case nil:
		return os.NewFile(uintptr(fd), dir), nil
	case unix.EXDEV:
		return nil, errOtherFS
	case unix.ENOSYS, unix.EPERM:
		openat2Missing.Store(true)
		return d.openDirRoot(dir)
	}
	return nil, err
}

// openDirRoot is openDir through os.Root.
func (d *DirReader) openDirRoot(dir string) (*os.File, error) {
	f, err := d.root.Open(dir)
	if err != nil || dir == "." {
		return f, err
	}
	var st unix.Stat_t
	if err := fsat.WithFd(f, func(fd int) error { return unix.Fstat(fd, &st) }); err != nil {
		f.Close()
		return nil, err
	}
	if uint64(st.Dev) != d.rootDev {
		f.Close()
		return nil, errOtherFS
	}
	return f, nil
}

// readDir lists dir (a cleaned name) and returns its entries, lstat'ed
// unless NamesOnly, with the names of its subdirectories. The directory is
// closed before they are visited, so that a deep tree does not hold a
// descriptor per level.
func (d *DirReader) readDir(dir string) ([]dirItem, []string, error) {
	f, err := d.openDir(dir)
	if err == errOtherFS {
		// Another filesystem is mounted on dir: its own entry is listed,
		// not what the mounted filesystem holds. On a live root (`apply /`
		// as the last RUN of a Dockerfile) /proc, /sys, /dev and bind
		// mounts are not the image.
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", d.display(dir), err)
	}
	items, subdirs, err := d.listDir(f, dir)
	if cerr := f.Close(); err == nil && cerr != nil {
		return nil, nil, fmt.Errorf("%s: %w", d.display(dir), cerr)
	}
	return items, subdirs, err
}

func (d *DirReader) listDir(f *os.File, dir string) ([]dirItem, []string, error) {
	var names []string
	var types []Type // NamesOnly: from d_type, 0 where unknown
	bufp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bufp)
	buf := *bufp
	err := fsat.WithFd(f, func(fd int) error {
		for {
			n, err := unix.Getdents(fd, buf)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return &os.PathError{Op: "getdents", Path: d.display(dir), Err: err}
			}
			if n <= 0 {
				return nil
			}
			for b := buf[:n]; len(b) > 0; {
				name, dt, rest, ok := parseDirent(b)
				if !ok {
					return fmt.Errorf("%s: malformed directory entry from getdents", d.display(dir))
				}
				b = rest
				if name == "." || name == ".." {
					continue
				}
				names = append(names, name)
				if d.namesOnly {
					var t Type // 0: DT_UNKNOWN, or no d_type at all
					if dt <= 0xf {
						t = modeTypes[dt]
					}
					types = append(types, t)
				}
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	if !d.namesOnly {
		// Sorted so that the first error within a directory is
		// deterministic.
		slices.Sort(names)
	}
	items := make([]dirItem, 0, len(names))
	var subdirs []string
	for i, n := range names {
		name := n
		if dir != "." {
			name = dir + "/" + n
		}
		var it dirItem
		if d.namesOnly && types[i] != 0 {
			it = dirItem{name: name, mode: (&Entry{Type: types[i]}).UnixMode()}
		} else {
			// An lstat per entry, or where the filesystem left d_type
			// unknown.
			var err error
			if it, err = d.statAt(f, n, name); err != nil {
				return nil, nil, err
			}
			if d.namesOnly {
				it = dirItem{name: name, mode: it.mode &^ PermMask}
			}
		}
		items = append(items, it)
		if it.typ() == TypeDir {
			subdirs = append(subdirs, name)
		}
	}
	return items, subdirs, nil
}

// direntBufs recycles getdents buffers: a fresh one per directory was
// most of the garbage of listing a tree.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// parseDirent splits the first linux_dirent64 off b: d_ino (8 bytes),
// d_off (8), d_reclen (2), d_type (1), then the NUL-terminated name.
func parseDirent(b []byte) (name string, typ uint8, rest []byte, ok bool) {
	const nameOff = 19
	if len(b) < nameOff {
		return "", 0, nil, false
	}
	reclen := int(binary.NativeEndian.Uint16(b[16:18]))
	if reclen < nameOff || reclen > len(b) {
		return "", 0, nil, false
	}
	raw := b[nameOff:reclen]
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		raw = raw[:i]
	}
	return string(raw), b[18], b[reclen:], true
}

// Stat fills in e, the entry Next returned last, from an lstat, and makes
// its data readable. Only NamesOnly readers need it; on others it does
// nothing.
func (d *DirReader) Stat(e *Entry) error {
	if !d.unstated || e.Name != d.curName {
		return nil
	}
	if d.root == nil {
		return fmt.Errorf("%s: reader is closed", d.display(e.Name))
	}
	// Through the parent, opened under the root: an lstat of the whole
	// name from the root's descriptor would follow a symlink swapped into
	// a parent since the walk.
	dir, err := d.root.Open(path.Dir(e.Name))
	if err != nil {
		return fmt.Errorf("%s: %w", d.display(e.Name), err)
	}
	defer dir.Close()
	it, err := d.statAt(dir, path.Base(e.Name), e.Name)
	if err != nil {
		return err
	}
	if it.typ() != e.Type {
		return fmt.Errorf("%s: changed from %s to %s while reading the tree", d.display(e.Name), e.Type, it.typ())
	}
	if e.Type != TypeDir {
		it.nlink = 1
	}
	*e = *it.entry()
	d.unstated = false
	d.curID, d.remaining = it.id, e.Size
	return d.holes(e, &it)
}

// statAt lstats base in the directory dir and builds the item for name.
func (d *DirReader) statAt(dir *os.File, base, name string) (dirItem, error) {
	var st unix.Stat_t
	var target string
	var xattrs map[string]string
	err := fsat.WithFd(dir, func(fd int) error {
		if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &os.PathError{Op: "lstat", Path: name, Err: err}
		}
		// As GNU tar --xattrs archives them (xattrs.c,
		// xattrs_xattrs_get): every attribute, security.capability,
		// POSIX ACLs (system.posix_acl_*) and SELinux labels included.
		var err error
		if xattrs, err = fsat.ListXattrs(fd, base, name, &st); err != nil {
			return err
		}
		if uint32(st.Mode)&unix.S_IFMT != unix.S_IFLNK {
			return nil
		}
		buf := make([]byte, pathx.PathMax+1)
		n, err := unix.Readlinkat(fd, base, buf)
		if err != nil {
			return &os.PathError{Op: "readlink", Path: name, Err: err}
		}
		target = string(buf[:n])
		return nil
	})
	if err != nil {
		return dirItem{}, fmt.Errorf("%s: %w", d.display(name), err)
	}
	t, ok := typeFromUnixMode(uint32(st.Mode))
	if !ok {
		return dirItem{}, fmt.Errorf("%s: unknown file type %#o", d.display(name), uint32(st.Mode)&unix.S_IFMT)
	}
	it := dirItem{
		name:      name,
		linkname:  target,
		id:        fileID{uint64(st.Dev), uint64(st.Ino)},
		mtimeSec:  int64(st.Mtim.Sec),
		mtimeNsec: int32(st.Mtim.Nsec),
		mode:      uint32(st.Mode) & (unix.S_IFMT | PermMask),
		uid:       st.Uid,
		gid:       st.Gid,
		nlink:     1,
		xattrs:    xattrs,
	}
	switch t {
	case TypeRegular:
		it.size, it.blocks = st.Size, st.Blocks
	case TypeChar, TypeBlock:
		it.size = int64(st.Rdev)
	}
	if t != TypeSymlink {
		// For files, fifos and devices kept for grouping; scan replaces
		// it by the count in the tree.
		it.nlink = uint32(st.Nlink)
	}
	return it, nil
}

// display is how a name appears in errors: the path on the host.
func (d *DirReader) display(name string) string {
	if name == "." {
		return d.path
	}
	return path.Join(d.path, name)
}

// Next returns the next entry; io.EOF after the last, which also releases
// the directory handle.
func (d *DirReader) Next() (*Entry, error) {
	if err := d.closeFile(); err != nil {
		return nil, err
	}
	d.curName, d.remaining = "", 0
	if d.i >= len(d.entries) {
		d.Close()
		return nil, io.EOF
	}
	it := d.entries[d.i]
	d.entries[d.i] = nil // the caller owns the entry now
	d.i++
	d.curName, d.unstated = it.name, d.namesOnly
	if d.namesOnly {
		return &Entry{Name: it.name, Type: it.typ(), Offset: -1}, nil // Stat reads the rest
	}
	e := it.entry()
	d.curID, d.remaining = it.id, e.Size
	if err := d.holes(e, it); err != nil {
		return nil, err
	}
	return e, nil
}

// holes gives e, the current entry, the map of its data when the file
// has holes, as a sparse tar entry's (TarSparse, Format "tree"), so that
// a tar writer writes it sparse (PAX 1.0) rather than its holes as zeros.
// The map comes from SEEK_DATA and SEEK_HOLE, as GNU tar --sparse finds it
// (sparse.c, sparse_scan_file_seek); only a file with fewer blocks than
// its size is asked.
func (d *DirReader) holes(e *Entry, it *dirItem) error {
	if e.Type != TypeRegular || e.Size == 0 || it.blocks*512 >= e.Size {
		return nil
	}
	if err := d.open(); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			// Not readable here (list as a user): its data cannot be
			// copied either, which Read says if it is asked to.
			return nil
		}
		return err
	}
	// The stretches of data, and an empty one at the size when the file
	// ends in a hole, as GNU tar has it so that an extracted file gets its
	// length.
	var m []SparseSegment
	var stored int64
	err := fsat.WithFd(d.file, func(fd int) error {
		for off := int64(0); off < e.Size; {
			data, err := unix.Seek(fd, off, unix.SEEK_DATA)
			if err == unix.ENXIO || err == nil && data >= e.Size {
				break // only hole from here
			}
			if err != nil {
				return err
			}
			hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
			if err != nil {
				return err
			}
			hole = min(hole, e.Size)
			m = append(m, SparseSegment{Offset: data, Length: hole - data})
			stored, off = stored+hole-data, hole
		}
		return nil
	})
	if err == nil {
		_, err = d.file.Seek(0, io.SeekStart)
	}
	if err != nil {
		return fmt.Errorf("%s: finding its holes: %w", d.display(e.Name), err)
	}
	if stored == e.Size {
		return nil // no holes after all (a compressed filesystem)
	}
	if len(m) == 0 || m[len(m)-1].Offset+m[len(m)-1].Length < e.Size {
		m = append(m, SparseSegment{Offset: e.Size})
	}
	e.Format = &TarFormat{Sparse: &TarSparse{Format: "tree", Stored: stored, Map: m}}
	return nil
}

// Read reads the data of the current entry, opening the file on first use.
func (d *DirReader) Read(p []byte) (int, error) {
	if d.unstated && d.curName != "" {
		return 0, fmt.Errorf("%s: data read before Stat", d.display(d.curName))
	}
	if d.remaining <= 0 {
		return 0, io.EOF
	}
	if d.file == nil {
		if err := d.open(); err != nil {
			return 0, err
		}
	}
	if int64(len(p)) > d.remaining {
		p = p[:d.remaining]
	}
	n, err := d.file.Read(p)
	d.remaining -= int64(n)
	if err == io.EOF {
		if d.remaining > 0 {
			return n, fmt.Errorf("%s: file shrank while reading, %d bytes missing: %w", d.display(d.curName), d.remaining, io.ErrUnexpectedEOF)
		}
		err = nil
	}
	if err != nil {
		return n, fmt.Errorf("%s: %w", d.display(d.curName), err)
	}
	if d.remaining == 0 {
		// Release the descriptor as soon as the data is done.
		if err := d.closeFile(); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (d *DirReader) open() error {
	if d.root == nil {
		return fmt.Errorf("%s: reader is closed", d.display(d.curName))
	}
	f, err := d.root.Open(d.curName)
	if err != nil {
		return fmt.Errorf("%s: %w", d.display(d.curName), err)
	}
	// The walk saw a regular file; make sure that is still what we read (a
	// swap for a symlink or a device would otherwise go unnoticed).
	var st unix.Stat_t
	err = fsat.WithFd(f, func(fd int) error { return unix.Fstat(fd, &st) })
	if err == nil && (uint64(st.Dev) != d.curID.dev || uint64(st.Ino) != d.curID.ino) {
		err = errors.New("file was replaced while reading the tree")
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", d.display(d.curName), err)
	}
	d.file = f
	return nil
}

func (d *DirReader) closeFile() error {
	if d.file == nil {
		return nil
	}
	err := d.file.Close()
	d.file = nil
	if err != nil {
		return fmt.Errorf("%s: %w", d.display(d.curName), err)
	}
	return nil
}

// Close releases the open file and the directory handle. Reading to
// io.EOF does the same; Close is for a reader abandoned half way.
func (d *DirReader) Close() error {
	err := d.closeFile()
	if d.root != nil {
		if cerr := d.root.Close(); err == nil {
			err = cerr
		}
		d.root = nil
	}
	d.entries = nil
	return err
}
