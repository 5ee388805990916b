package container

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// ToolInput makes the countingReader of a file opened by Open a
// compress.FileSource: an external decompressor (xz) reads the file
// through a description of its own, reopened from /proc/self/fd (the
// magic link names the open file, whatever has been renamed over its path
// since), so that its offset is not the one this process's own reads of
// the file move. Consumed then reports the tool's
// progress from that offset. Not when the input's digest is taken: the
// hash reads what Read returns.
func (c *countingReader) ToolInput(unread int) (*os.File, bool) {
	if c.file == nil || c.h != nil || c.m != nil || c.tool != nil || int64(unread) > c.n {
		return nil, false
	}
	fi, err := c.file.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(c.file.Fd())), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), c.file.Name())
	if _, err := f.Seek(c.n-int64(unread), io.SeekStart); err != nil {
		f.Close()
		return nil, false
	}
	c.tool = f
	return f, true
}

// consumed is how far into the file the reading has come: the tool's
// offset once a tool reads it.
func (c *countingReader) consumed() int64 {
	if c.tool != nil {
		if off, err := c.tool.Seek(0, io.SeekCurrent); err == nil {
			return off
		}
	}
	return c.n
}
