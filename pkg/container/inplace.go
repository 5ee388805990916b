package container

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The countingReader of a file opened by Open is a
// compress.InPlaceReader: the legacy lz4 decoder then decodes the
// compressed blocks where they sit in the page cache, instead of having
// them read() into buffers of its own first (make bench: repack-lz4).
//
// A mapped file that shrinks faults its reader, and a fault in the lz4
// library's assembly aborts the process. So the file is mapped only under
// a read lease (fcntl F_SETLEASE, F_RDLCK): while it holds, nobody can
// open the file for writing or truncate it. Whoever tries waits, for at
// most /proc/sys/fs/lease-break-time seconds, while the lease is marked
// broken; Check sees that before every block read in place, and the
// decoder fails with errInputModified instead. A block takes milliseconds
// to decode, far less than the wait. Where no lease can be had (the file
// is open for writing somewhere, a file system without leases, a caller
// neither owner nor CAP_LEASE) the input is read as before.

// errInputModified reports a file that another process opened for writing
// or truncated while it was read in place.
var errInputModified = errors.New("the input file was opened for writing or truncated while it was read")

// minLeaseBreak is the least lease-break-time, in seconds, that leaves
// ample room for the block being decoded when a lease breaks.
const minLeaseBreak = 5

// InPlace takes a read lease on the file and maps it read-only, and
// reports whether it could. Not when the input's digest is taken: the
// hash reads what Read returns.
func (c *countingReader) InPlace() bool {
	if c.m != nil {
		return true
	}
	if c.file == nil || c.h != nil || leaseBreakTime() < minLeaseBreak {
		return false
	}
	fd := int(c.file.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		return false
	}
	// Under the lease the size can only grow: what is mapped stays there.
	fi, err := c.file.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= c.n || fi.Size() > math.MaxInt {
		releaseLease(fd)
		return false
	}
	m, err := unix.Mmap(fd, 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		releaseLease(fd)
		return false
	}
	c.m, c.fd = m, fd
	return true
}

func releaseLease(fd int) {
	_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
}

// leaseBreakTime is the kernel's lease-break-time, in seconds; its
// default, 45, if it cannot be read.
func leaseBreakTime() int {
	b, err := os.ReadFile("/proc/sys/fs/lease-break-time")
	n, err2 := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || err2 != nil {
		return 45
	}
	return n
}

// Check reports errInputModified once the lease is broken or gone.
func (c *countingReader) Check() error {
	lease, err := unix.FcntlInt(uintptr(c.fd), unix.F_GETLEASE, 0)
	if err != nil || lease != unix.F_RDLCK {
		return errInputModified
	}
	return nil
}

// Next returns the next n bytes of the mapped file and counts them read.
// It faults them in (MADV_POPULATE_READ) first, in one call rather than a
// fault per page in the decoder, and so that a page that cannot be read
// (an I/O error) is an error here rather than a fault in the decoder.
// Kernels before 5.14 do not know the advice, and fault as they read.
func (c *countingReader) Next(n int) ([]byte, error) {
	rest := c.m[min(c.n, int64(len(c.m))):]
	if len(rest) >= n {
		p := rest[:n:n]
		if err := unix.Madvise(p, unix.MADV_POPULATE_READ); err != nil && err != unix.EINVAL {
			return nil, fmt.Errorf("reading the input in place: %w", err)
		}
		c.n += int64(n)
		return p, nil
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

// unmap releases the mapping and the lease, once nothing reads the
// mapping any more.
func (c *countingReader) unmap() {
	if c.m != nil {
		_ = unix.Munmap(c.m)
		releaseLease(c.fd)
		c.m = nil
	}
}
