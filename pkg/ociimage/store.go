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

func openDirStore(dir string) (*dirStore, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &dirStore{root: r}, nil
}

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

// tarStore reads the regular members of a tarball in place: one pass over
// its headers, seeking over the data, then each member as a section of
// the file.
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

type member struct{ off, size int64 }

func openTarStore(name string) (*tarStore, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return newTarStore(f)
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
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the tarball: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		// archive/tar reads no further than the header: the offset now is
		// where the member's data starts.
		off, err := t.f.Seek(0, io.SeekCurrent)
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)[1:]
		t.members[name] = member{off: off, size: h.Size}
	}
}

func (t *tarStore) open(name string) (io.ReadCloser, int64, error) {
	m, ok := t.members[name]
	if !ok {
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return io.NopCloser(io.NewSectionReader(t.f, m.off, m.size)), m.size, nil
}

// copyAll copies the whole tarball to w.
func (t *tarStore) copyAll(w io.Writer) error {
	end, err := t.f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, io.NewSectionReader(t.f, 0, end))
	return err
}

func (t *tarStore) has(name string) bool { _, ok := t.members[name]; return ok }

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
