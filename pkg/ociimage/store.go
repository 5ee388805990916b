package ociimage

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// maxJSON bounds what a manifest, an index or a config may cost: real
// ones are kilobytes.
const maxJSON = 16 << 20

// store is where an image's files are: a layout directory, or the members
// of a tarball.
type store interface {
	// open returns the file at name (slash-separated, relative) and its
	// size; fs.ErrNotExist when there is none.
	open(name string) (io.ReadCloser, int64, error)
	has(name string) bool
	Close() error
}

// dirStore reads a layout directory beneath its root: a symlink out of it
// is never followed.
type dirStore struct{ root *os.Root }

func (d *dirStore) open(name string) (io.ReadCloser, int64, error) {
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file", names.Quote(name))
	}
	return f, fi.Size(), nil
}

func (d *dirStore) has(name string) bool {
	fi, err := d.root.Lstat(name)
	return err == nil && fi.Mode().IsRegular()
}

func (d *dirStore) Close() error { return d.root.Close() }

// tarStore reads the members of a tarball in place: one pass over its
// headers, seeking over the data, then each member as a section of the
// file.
//
// Consumers find a member in different ways: containers/image (skopeo,
// podman) takes the first of a name (docker/internal/tarfile/reader.go
// findTarComponent), containerd's importer the last (ImportIndex, a map
// written in order). A tarball that holds a name twice is refused, so
// that both see the one member rootfs-trim reads.
type tarStore struct {
	f       tarFile
	members map[string]member
}

// tarFile is what a tarStore reads: an *os.File, or bytes in a test.
type tarFile interface {
	io.ReadSeeker
	io.ReaderAt
	io.Closer
}

// member is a regular member's data in the file, or a symlink's target
// (link, its name in the tarball).
type member struct {
	off, size int64
	link      string
}

// openRawStore opens the store of the layout directory or the tarball at
// path, as Open and Detect read it.
func openRawStore(path string, fi os.FileInfo) (Kind, store, error) {
	if fi.IsDir() {
		r, err := os.OpenRoot(path)
		return Layout, &dirStore{root: r}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Archive, nil, err
	}
	st, err := newTarStore(f)
	return Archive, st, err
}

// newTarStore indexes the tarball f, closing it when that fails.
func newTarStore(f tarFile) (*tarStore, error) {
	t := &tarStore{f: f, members: map[string]member{}}
	if err := t.index(); err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

func (t *tarStore) index() error {
	tr := tar.NewReader(t.f)
	// isDir of each name so far: a directory may come twice, nothing
	// else may share its name with another member.
	isDir := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the tarball: %w", err)
		}
		// A member's name as findTarComponent and containerd's ImportIndex
		// compare it: "./x" is "x", "/x" is no "x".
		name, dir := path.Clean(h.Name), h.Typeflag == tar.TypeDir
		if was, ok := isDir[name]; ok && !(was && dir) {
			return fmt.Errorf("%q is in the tarball twice: skopeo reads the first, containerd the last", name)
		}
		isDir[name] = dir
		switch h.Typeflag {
		case tar.TypeReg:
			// archive/tar reads no further than the header: the offset now
			// is where the member's data starts.
			off, err := t.f.Seek(0, io.SeekCurrent)
			if err != nil {
				return err
			}
			t.members[name] = member{off: off, size: h.Size}
		case tar.TypeSymlink:
			// openTarComponentWithHeader's one level: the target is found
			// among the members, relative to the link's directory, never
			// outside the tarball.
			t.members[name] = member{link: path.Join(path.Dir(name), h.Linkname)}
		}
	}
}

// resolve is the regular member name stands for: itself, or the one its
// symlink names, followed one level as containers/image does
// (openTarComponentWithHeader); a link to a link is not followed.
func (t *tarStore) resolve(name string) (member, error) {
	m, ok := t.members[name]
	if !ok {
		return member{}, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if m.link == "" {
		return m, nil
	}
	to, ok := t.members[m.link]
	if !ok {
		return member{}, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("a symlink to %q, which is not in the tarball: %w", m.link, fs.ErrNotExist)}
	}
	if to.link != "" {
		return member{}, fmt.Errorf("%s: a symlink to %q, another symlink: only one is followed", name, m.link)
	}
	return to, nil
}

func (t *tarStore) open(name string) (io.ReadCloser, int64, error) {
	m, err := t.resolve(name)
	if err != nil {
		return nil, 0, err
	}
	return io.NopCloser(io.NewSectionReader(t.f, m.off, m.size)), m.size, nil
}

func (t *tarStore) has(name string) bool { _, err := t.resolve(name); return err == nil }

func (t *tarStore) Close() error { return t.f.Close() }

// readSmall reads a JSON document of the image, at most maxJSON bytes.
func readSmall(s store, name string) ([]byte, error) {
	rc, size, err := s.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if size > maxJSON {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a manifest or config may have", names.Quote(name), size, maxJSON)
	}
	b, err := io.ReadAll(io.LimitReader(rc, maxJSON+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", names.Quote(name), err)
	}
	return b, nil
}

// errMissing says that a blob an image names is not there.
func errMissing(what, name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: blob %s is missing", what, names.Quote(name))
	}
	return fmt.Errorf("%s: %w", what, err)
}
