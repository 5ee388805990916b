package container

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// copyAheadChunk is how much one copy_file_range call moves: small enough
// that a stop is noticed within a millisecond or so, large enough that the
// calls cost nothing next to the copying.
const copyAheadChunk = 8 << 20

// copyAhead copies the input file into the output file while the input is
// still being read, betting that the output will turn out equal to it (a
// repack, or an apply on an image already applied). When nothing changed
// the copy is done, or nearly, by the time the archive is; when something
// did, stop abandons it and the output file is emptied for the splicer.
//
// It writes with explicit offsets (copy_file_range, else pwrite), so the
// output file's own offset, where the splicer or compressor writes, stays
// at 0 throughout.
type copyAhead struct {
	src  *os.File
	dst  *os.File
	off  int64 // where the input's stream starts in src
	size int64

	stopped atomic.Bool
	done    chan struct{}
	n       int64 // bytes copied, once done is closed
	err     error
}

// copyInKernel is false in tests of the fallback through this process.
var copyInKernel = true

func startCopyAhead(src, dst *os.File, off, size int64) *copyAhead {
	c := &copyAhead{src: src, dst: dst, off: off, size: size, done: make(chan struct{})}
	go c.run()
	return c
}

func (c *copyAhead) run() {
	defer close(c.done)
	roff, woff := c.off, int64(0)
	end := c.off + c.size
	srcFd, dstFd := int(c.src.Fd()), int(c.dst.Fd())
	inKernel := copyInKernel
	buf := []byte(nil)
	for roff < end && !c.stopped.Load() {
		want := int(min(end-roff, copyAheadChunk))
		var n int64
		var err error
		if inKernel {
			var k int
			k, err = unix.CopyFileRange(srcFd, &roff, dstFd, &woff, want, 0)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EXDEV), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EINVAL):
				// Older kernels, or filesystems that cannot: copy
				// through this process instead.
				inKernel = false
				continue
			}
			n = int64(k)
		} else {
			if buf == nil {
				buf = make([]byte, 1<<20)
			}
			src := io.NewSectionReader(c.src, roff, int64(min(want, len(buf))))
			n, err = io.CopyBuffer(io.NewOffsetWriter(c.dst, woff), src, buf)
			roff += n
			woff += n
		}
		if err == nil && n == 0 {
			err = io.ErrUnexpectedEOF // the input shrank
		}
		if err != nil {
			c.err = err
			return
		}
	}
	c.n = roff - c.off
}

// stop abandons the copy and waits for it to end.
func (c *copyAhead) stop() {
	c.stopped.Store(true)
	<-c.done
}

// wait lets the copy end and reports whether the whole input was copied.
func (c *copyAhead) wait() error {
	<-c.done
	if c.err != nil {
		return fmt.Errorf("copying the input: %w", c.err)
	}
	if c.n != c.size {
		return fmt.Errorf("copying the input: copied %d of %d bytes", c.n, c.size)
	}
	return nil
}
