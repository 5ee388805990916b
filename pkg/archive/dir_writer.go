package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/internal/fsat"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// DirWriterOptions configures NewDirWriter.
type DirWriterOptions struct {
	// CreateParents creates missing parent directories (0755, owned by the
	// caller). By default a missing parent is an error, because the kernel
	// silently drops such an entry when it unpacks an initramfs.
	CreateParents bool
	// MaxData bounds the bytes of file data written to disk, holes not
	// counted; 0 leaves them unbounded (the reader's budget, --max-size,
	// bounds what comes in, holes included).
	MaxData int64
}

// DirWriter unpacks entries into a directory tree. Every path is resolved
// through an os.Root, so a symlink written earlier (x -> /etc) can never make
// a later entry (x/passwd) land outside the tree.
type DirWriter struct {
	root   *os.Root
	tree   *fsat.Tree // the same root, for what is done by descriptor
	opts   DirWriterOptions
	owners bool // apply UID/GID
	mknod  bool // may create device nodes

	// The entry being written. Regular files get their owner, mode and
	// mtime only once their data is complete: writing clears setuid, and
	// changes the mtime.
	cur       *Entry // clone; nil when there is none
	curName   string // cleaned
	file      *os.File
	remaining int64
	// pos is where the next data goes in file; end is where its last
	// write ended: zero runs are left as holes, and a file that ends in
	// one is extended to its size when it is finished.
	pos, end int64
	// data counts the bytes written to disk, for MaxData.
	data int64

	links   map[HardLinkKey]linkedFile // cpio hard-link group -> its file
	dirs    []*dirMeta                 // in order of first appearance
	dirByNm map[string]*dirMeta
	closed  bool
}

// linkedFile is the file of a cpio hard-link group on disk: the name of its
// first member and the inode that got. A later member is linked by that
// name, then checked to be that inode: a later entry may have put
// something else at the name (a symlink out of the tree, a device), and a
// member linked to it would have its mode and data applied there.
type linkedFile struct {
	name string
	id   fileID
}

// dirMeta is what is applied to a directory at Close, after its children.
type dirMeta struct {
	name    string
	mode    uint32
	modTime time.Time
}

// NewDirWriter returns a Writer that creates the entries under root, which
// must be an existing directory.
func NewDirWriter(root string, opts DirWriterOptions) (*DirWriter, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	euid := os.Geteuid()
	return &DirWriter{
		root:    r,
		tree:    fsat.New(r, fsat.Options{}),
		opts:    opts,
		owners:  euid == 0, // a user cannot give files away
		mknod:   euid == 0,
		links:   map[HardLinkKey]linkedFile{},
		dirByNm: map[string]*dirMeta{},
	}, nil
}

// WriteHeader creates the entry, except a socket (a device needs root).
// TypeTrailer entries are ignored except that they end the scope of cpio
// hard-link groups, as in the kernel.
func (w *DirWriter) WriteHeader(e *Entry) error {
	if w.closed {
		return fmt.Errorf("entry %q: writer is closed", e.Name)
	}
	if err := w.finish(); err != nil {
		return err
	}
	if e.Type == TypeTrailer {
		clear(w.links)
		return nil
	}
	name, err := pathx.Clean(e.Name)
	if err != nil {
		return fmt.Errorf("entry %q: %w", e.Name, err)
	}
	if err := w.create(name, e); err != nil {
		// Nothing of a failed entry is finished later.
		if w.file != nil {
			w.file.Close()
		}
		w.cur, w.file = nil, nil
		return fmt.Errorf("entry %q: %w", e.Name, err)
	}
	return nil
}

func (w *DirWriter) create(name string, e *Entry) error {
	// Data of anything but a regular file has no place on disk; accept it
	// (as the Writer contract says Size bytes follow) and drop it.
	w.cur, w.curName, w.remaining = e.Clone(), name, e.Size
	w.pos, w.end = 0, 0

	if k := tarACL(tarHeaderOf(e)); k != "" {
		// GNU tar --acls and bsdtar keep ACLs as text, which would have to
		// be translated for the kernel; refused rather than dropped.
		return fmt.Errorf("its POSIX ACL (PAX record %q) cannot be written to a tree; refusing it", k)
	}
	switch e.Type {
	case TypeSocket:
		// A socket cannot be meaningfully created from an archive.
		return nil
	case TypeChar, TypeBlock:
		if !w.mknod {
			return errors.New("creating a device node needs root (or skip devices)")
		}
	case TypeRegular, TypeDir, TypeSymlink, TypeHardlink, TypeFifo:
	default:
		return fmt.Errorf("cannot create entry of %s", e.Type)
	}

	if name == "." {
		if e.Type != TypeDir {
			return fmt.Errorf("the root can only be a directory, not a %s", e.Type)
		}
		return w.dir(name, e, true)
	}
	if err := w.checkParent(path.Dir(name)); err != nil {
		return err
	}
	exists, err := w.clearPath(name, e.Type == TypeDir)
	if err != nil {
		return err
	}
	key, linked := e.LinkKey()
	if first, ok := w.links[key]; linked && ok {
		return w.laterMember(first, name, e)
	}

	switch e.Type {
	case TypeDir:
		return w.dir(name, e, exists)
	case TypeRegular:
		return w.regular(name, e)
	case TypeHardlink:
		target, err := pathx.Clean(e.Linkname)
		if err != nil {
			return fmt.Errorf("hard link target: %w", err)
		}
		fi, err := w.root.Lstat(target)
		if err != nil {
			return fmt.Errorf("hard link target: %w", err)
		}
		if !fi.Mode().IsRegular() && fi.Mode().Type()&(fs.ModeDevice|fs.ModeNamedPipe) == 0 {
			what, ok := map[fs.FileMode]string{fs.ModeDir: "directory", fs.ModeSymlink: "symlink", fs.ModeSocket: "socket"}[fi.Mode().Type()]
			if !ok {
				what = "special file"
			}
			return fmt.Errorf("hard link target %q is a %s, not a file", e.Linkname, what)
		}
		// A link shares the target's inode: its own owner, mode and mtime
		// (tar stores copies) must not be applied over the target's.
		return w.root.Link(target, name)
	case TypeSymlink:
		if e.Linkname == "" {
			return errors.New("symlink has no target")
		}
		// The target is stored, never followed: os.Root resolves later
		// names without leaving the tree.
		if err := w.root.Symlink(e.Linkname, name); err != nil {
			return err
		}
		_, err := w.applyMeta(name, e)
		return err
	default: // char, block, fifo
		// The mode is fixed by applyMeta; umask and setuid do not matter
		// here.
		if err := w.tree.Mknod(name, e.UnixMode(), unix.Mkdev(e.RdevMajor, e.RdevMinor)); err != nil {
			return err
		}
		id, err := w.applyMeta(name, e)
		if err == nil && linked {
			w.links[key] = linkedFile{name, id}
		}
		return err
	}
}

// laterMember links name to the file of its hard-link group and checks
// that it got that very file, of e's type. A regular member that carries
// the group's data is left open for it; the others get their metadata
// now, or from finish.
func (w *DirWriter) laterMember(first linkedFile, name string, e *Entry) error {
	if err := w.root.Link(first.name, name); err != nil {
		return err
	}
	err := w.onEntry(name, e.Type, func(_ *fsat.At, id fileID) error {
		if id != first.id {
			return errReplaced
		}
		return nil
	})
	if err != nil {
		w.root.Remove(name)
		return fmt.Errorf("hard link to %q: %w", first.name, err)
	}
	if e.Type != TypeRegular {
		_, err := w.applyMeta(name, e)
		return err
	}
	if e.Size == 0 {
		return nil // metadata is applied by finish
	}
	// This member carries the group's data into the shared file, which
	// may already have its final, read-only mode.
	return w.onEntry(name, TypeRegular, func(at *fsat.At, _ fileID) error {
		if err := fsat.Chmod(at.Fd, 0o600); err != nil {
			return &os.PathError{Op: "chmod", Path: name, Err: err}
		}
		// O_NOFOLLOW, and the inode checked again once open: the data
		// goes into the group's file or nowhere.
		f, err := fsat.OpenWrite(at, name)
		if errors.Is(err, fsat.ErrReplaced) {
			return errReplaced
		}
		if err != nil {
			return err
		}
		if err := f.Truncate(0); err != nil {
			f.Close()
			return err
		}
		w.file = f
		return nil
	})
}

// errReplaced: a later entry took the name of a hard-link group's first
// member, so that linking to the name would reach another file.
var errReplaced = errors.New("a later entry replaced the group's file at that name")

// checkParent makes sure the parent of an entry exists and is a directory.
// Stat follows symlinks, but os.Root only inside the tree: a parent that is
// a symlink leading out (absolute, or with too many "..") is an error here.
func (w *DirWriter) checkParent(parent string) error {
	if parent == "." {
		return nil
	}
	fi, err := w.root.Stat(parent)
	if errors.Is(err, fs.ErrNotExist) {
		if !w.opts.CreateParents {
			return fmt.Errorf("parent directory %q does not exist (the kernel would drop this entry)", parent)
		}
		return w.root.MkdirAll(parent, 0o755)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("parent %q is not a directory", parent)
	}
	return nil
}

// clearPath removes what is at name so that it can be created anew, and
// reports whether a directory that is to stay is there. Lstat and Remove do
// not follow a symlink at name: the link itself is replaced.
func (w *DirWriter) clearPath(name string, wantDir bool) (exists bool, err error) {
	fi, err := w.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if fi.IsDir() {
		if wantDir {
			return true, nil
		}
		return false, fmt.Errorf("a directory is in the way")
	}
	return false, w.root.Remove(name)
}

// dir creates a directory. Its mode and mtime wait until Close: its
// children change the mtime, and a read-only mode would keep a non-root
// writer from creating them.
func (w *DirWriter) dir(name string, e *Entry, exists bool) error {
	if !exists {
		if err := w.root.Mkdir(name, 0o700); err != nil {
			return err
		}
	}
	if w.owners || len(e.Xattrs) > 0 {
		if err := w.onEntry(name, TypeDir, func(at *fsat.At, _ fileID) error {
			if w.owners {
				if err := fsat.ChownFd(at.Fd, name, e.UID, e.GID); err != nil {
					return err
				}
			}
			return fsat.SetXattrs(at, name, e.Xattrs)
		}); err != nil {
			return err
		}
	}
	m := w.dirByNm[name]
	if m == nil {
		m = &dirMeta{name: name}
		w.dirByNm[name] = m
		w.dirs = append(w.dirs, m)
	}
	// A later duplicate wins, as when tar extracts.
	m.mode, m.modTime = e.Mode&PermMask, e.ModTime
	return nil
}

// regular creates a regular file and leaves it open for its data.
func (w *DirWriter) regular(name string, e *Entry) error {
	key, linked := e.LinkKey()
	// O_EXCL: clearPath removed what was there, so anything found now is
	// not ours to write through. 0600 until the exact mode is set.
	f, err := w.root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w.file = f
	if linked {
		var st unix.Stat_t
		if err := fsat.WithFd(f, func(fd int) error { return unix.Fstat(fd, &st) }); err != nil {
			return err
		}
		w.links[key] = linkedFile{name, fileID{uint64(st.Dev), st.Ino}}
	}
	return nil
}

func (w *DirWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if w.cur == nil {
		return 0, errors.New("write outside an entry")
	}
	if int64(len(p)) > w.remaining {
		return 0, fmt.Errorf("entry %q: more than its %d bytes of data", w.cur.Name, w.cur.Size)
	}
	if w.file == nil {
		w.remaining -= int64(len(p))
		return len(p), nil
	}
	n, err := w.writeData(p)
	w.remaining -= int64(n)
	if err != nil {
		return n, fmt.Errorf("entry %q: %w", w.cur.Name, err)
	}
	return n, nil
}

// holeBlock is the unit in which zeros are left as holes: a page, the
// block of the filesystems a rootfs is built on.
const holeBlock = 4096

var zeroPage [holeBlock]byte

// writeData writes p at w.pos, leaving each block of zeros (counted from
// the start of the file) a hole, as GNU tar and cp --sparse=auto leave
// them: a sparse file, or a file of zeros, takes no room on disk, and a
// tar of a few kilobytes cannot write gigabytes of zeros. The runs of
// blocks that hold data are written one pwrite each.
func (w *DirWriter) writeData(p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		n := min(len(p), holeBlock-int(w.pos%holeBlock))
		if bytes.Equal(p[:n], zeroPage[:n]) {
			w.pos, done, p = w.pos+int64(n), done+n, p[n:]
			continue
		}
		for n < len(p) {
			m := min(len(p)-n, holeBlock)
			if bytes.Equal(p[n:n+m], zeroPage[:m]) {
				break
			}
			n += m
		}
		if w.opts.MaxData > 0 && w.data+int64(n) > w.opts.MaxData {
			return done, fmt.Errorf("more than %d bytes of data written to the tree", w.opts.MaxData)
		}
		k, err := w.file.WriteAt(p[:n], w.pos)
		w.pos, w.data, done = w.pos+int64(k), w.data+int64(k), done+k
		w.end = w.pos
		if err != nil {
			return done, err
		}
		p = p[n:]
	}
	return done, nil
}

// finish completes the current entry: checks its data is all there, closes
// its file and applies the metadata of a regular file.
func (w *DirWriter) finish() error {
	if w.cur == nil {
		return nil
	}
	e, name, f := w.cur, w.curName, w.file
	w.cur, w.file = nil, nil
	var err error
	if f != nil {
		if w.pos > w.end {
			err = f.Truncate(w.pos) // it ends in a hole
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if w.remaining > 0 {
		return fmt.Errorf("entry %q: data ends %d bytes short of %d", e.Name, w.remaining, e.Size)
	}
	if err == nil && e.Type == TypeRegular {
		_, err = w.applyMeta(name, e)
	}
	if err != nil {
		return fmt.Errorf("entry %q: %w", e.Name, err)
	}
	return nil
}

// applyMeta sets owner, then mode (chown clears setuid and setgid), then
// extended attributes, then mtime, on the entry at name, which must be of e's type: never through a
// symlink, and a symlink's own mode is left alone (Linux ignores it). It
// returns the inode it worked on.
func (w *DirWriter) applyMeta(name string, e *Entry) (fileID, error) {
	var got fileID
	err := w.onEntry(name, e.Type, func(at *fsat.At, id fileID) error {
		got = id
		if w.owners {
			if err := fsat.ChownFd(at.Fd, name, e.UID, e.GID); err != nil {
				return err
			}
		}
		if e.Type != TypeSymlink {
			if err := fsat.Chmod(at.Fd, e.Mode&PermMask); err != nil {
				return &os.PathError{Op: "chmod", Path: name, Err: err}
			}
		}
		// After the data and chown, which clear security.capability.
		if err := fsat.SetXattrs(at, name, e.Xattrs); err != nil {
			return err
		}
		return fsat.SetMtime(at.Dir, at.Base, name, e.ModTime)
	})
	return got, err
}

// onEntry runs fn on the entry at name, opened with O_PATH|O_NOFOLLOW
// (fsat.OnEntry: nothing is followed, and a device's open routine does not
// run), once it is checked to be of type t, with its inode.
func (w *DirWriter) onEntry(name string, t Type, fn func(at *fsat.At, id fileID) error) error {
	return w.tree.OnEntry(name, func(at *fsat.At) error {
		if got, ok := typeFromUnixMode(at.Stat.Mode); !ok || got != t {
			return fmt.Errorf("%s is a %s, not the %s written there", name, got, t)
		}
		return fn(at, fileID{uint64(at.Stat.Dev), at.Stat.Ino})
	})
}

// Close finishes the last entry, then applies directory modes and mtimes,
// children before parents, and releases the root. The tree stays.
func (w *DirWriter) Close() error {
	if w.closed {
		return nil
	}
	err := w.finish()
	for i := len(w.dirs) - 1; i >= 0; i-- {
		m := w.dirs[i]
		merr := w.onEntry(m.name, TypeDir, func(at *fsat.At, _ fileID) error {
			if err := fsat.Chmod(at.Fd, m.mode); err != nil {
				return &os.PathError{Op: "chmod", Path: m.name, Err: err}
			}
			return fsat.SetMtime(at.Dir, at.Base, m.name, m.modTime)
		})
		if merr != nil && err == nil {
			err = fmt.Errorf("directory %q: %w", m.name, merr)
		}
	}
	w.closed = true
	if cerr := w.root.Close(); err == nil {
		err = cerr
	}
	return err
}
