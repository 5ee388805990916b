package compress

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// A block's xz writes its output into a file of memory (memfd), which
// this process maps once xz is done: a pipe costs one more copy of every
// byte, 8 KiB at a time, by a goroutine woken for each. The files are used
// again: a new one costs a page allocation (and a free) for every 4 KiB
// written, about as much as the pipe (docs/performance.md, "Reading xz").

// blockSlack is how far past the largest block a block's file reaches.
// xz writes 8 KiB at a time (IO_BUFFER_SIZE, src/xz/file_io.h) and the
// kernel refuses a write that would go past the end of a sealed file, so
// an xz that has more to give than the index says gets past the block's
// size, which is how a lying index is told, before its writes fail. It
// bounds what such a block costs in memory too.
const blockSlack = 1 << 20

// blockFiles hands out the files the block decoders write into.
type blockFiles struct {
	size int64         // of every file
	idle chan *os.File // read, for the next block
}

// newBlockFiles makes the first file, so that a kernel without memfd or
// seals says so before any block is started.
func newBlockFiles(largest int64) (*blockFiles, error) {
	fs := &blockFiles{size: largest + blockSlack, idle: make(chan *os.File, 1)}
	f, err := fs.create()
	if err != nil {
		return nil, err
	}
	fs.idle <- f
	return fs, nil
}

// create makes a memfd of fs.size, sealed so that it neither grows nor
// shrinks. xz sees a regular file with data after its offset, so it
// writes every byte and makes no holes (io_open_dest_real in
// src/xz/file_io.c: sparse output only when the offset is at the end),
// and its offset, which it shares with this process, is how much it
// wrote.
func (fs *blockFiles) create() (*os.File, error) {
	fd, err := unix.MemfdCreate("xz block", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "xz block")
	if err := unix.Ftruncate(fd, fs.size); err != nil {
		f.Close()
		return nil, fmt.Errorf("sizing a block's file: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("sealing a block's file: %w", err)
	}
	return f, nil
}

// get is a file for a block of size bytes, at offset 0, holding no pages
// past size: what a block decoded ahead holds is its size, as the budget
// counts it, whatever the file held before.
func (fs *blockFiles) get(size int64) (*os.File, error) {
	var f *os.File
	select {
	case f = <-fs.idle:
	default:
		return fs.create()
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, size, fs.size-size); err != nil {
		f.Close()
		return nil, fmt.Errorf("emptying a block's file: %w", err)
	}
	return f, nil
}

// put takes f back once nothing maps it. One kept is enough: a block is
// started as soon as one is read, and each kept file is memory.
func (fs *blockFiles) put(f *os.File) {
	select {
	case fs.idle <- f:
	default:
		f.Close()
	}
}

// close closes the file kept, if any.
func (fs *blockFiles) close() {
	select {
	case f := <-fs.idle:
		f.Close()
	default:
	}
}

// written is how much the xz that had f as its standard output wrote.
func written(f *os.File) (int64, error) { return f.Seek(0, io.SeekCurrent) }

// mapBlock maps the first size bytes of f, read-only; nil for none.
func mapBlock(f *os.File, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mapping a block's output: %w", err)
	}
	return data, nil
}
