package archive

import (
	"io"
	"math"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The countingReader of a file opened by OpenWith is a
// compress.InPlaceReader: the legacy lz4 decoder then decodes the
// compressed blocks where they sit in the page cache, instead of having
// them read() into buffers of its own first (make bench: repack-lz4).

// InPlace maps the file, read-only, and reports whether it could. Not when
// the input's digest is taken: the hash runs in a goroutine of its own,
// where a fault on the mapping (a file truncated meanwhile) would not be
// caught.
func (c *countingReader) InPlace() bool {
	if c.m != nil {
		return true
	}
	if c.file == nil || c.h != nil {
		return false
	}
	fi, err := c.file.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= c.n || fi.Size() > math.MaxInt {
		return false
	}
	m, err := unix.Mmap(int(c.file.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return false
	}
	c.m = m
	return true
}

// Next returns the next n bytes of the mapped file and counts them read.
func (c *countingReader) Next(n int) ([]byte, error) {
	rest := c.m[min(c.n, int64(len(c.m))):]
	if len(rest) >= n {
		c.n += int64(n)
		return rest[:n:n], nil
	}
	c.n += int64(len(rest))
	if len(rest) == 0 {
		return nil, io.EOF
	}
	return rest, io.ErrUnexpectedEOF
}

// Done drops p's pages from the process's mapping; they stay in the page
// cache. Pages p shares with a neighbour are dropped too: a later read of
// the neighbour faults them in again, from the cache.
func (c *countingReader) Done(p []byte) {
	if len(p) == 0 || len(c.m) == 0 {
		return
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(p))) - uintptr(unsafe.Pointer(unsafe.SliceData(c.m))))
	if off < 0 || off+len(p) > len(c.m) {
		return // not from this mapping
	}
	page := os.Getpagesize()
	from := off &^ (page - 1)
	to := min((off+len(p)+page-1)&^(page-1), len(c.m))
	_ = unix.Madvise(c.m[from:to], unix.MADV_DONTNEED) // only a saving
}

func (c *countingReader) readMapped(p []byte) (int, error) {
	if c.n >= int64(len(c.m)) {
		return 0, io.EOF
	}
	n := copy(p, c.m[c.n:])
	c.n += int64(n)
	return n, nil
}

// unmap releases the mapping, once nothing reads it any more.
func (c *countingReader) unmap() {
	if c.m != nil {
		_ = unix.Munmap(c.m)
		c.m = nil
	}
}
