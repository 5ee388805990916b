package compress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// An xz file of several blocks is decoded by one `xz --format=raw` a
// block, as many at a time as there are cores, each reading its block
// where it lies in the file, the outputs joined in order. `xz -T` does the
// same in one process, but its main thread copies every decoded byte from
// the workers' buffers (lzma_outq_read; docs/performance.md, "Reading
// xz"). In raw mode xz neither reads nor verifies the container, so that
// is done here: the layout (xzBlocks) with every CRC32, and per block its
// size and its check, summed as the output is read. Any doubt, and xz
// reads the file whole.

// xzParallelBudget bounds the decoded bytes held at once: blocks decoded
// ahead wait in memory for the one being read. A block bigger than half
// of it (`xz -T0` cuts 3 dictionaries: 24 MiB at -6, 192 MiB at -9) is
// left to xz -T.
const xzParallelBudget = 128 << 20

// xzParallelMinBlock is the least average block size decoded one xz a
// block: starting xz costs a millisecond or two, about what decoding
// 100 KB does, and an input of many tiny blocks must not cost a process
// each (xz -T0 cuts 3 dictionaries: 768 KiB at its smallest preset, -0).
const xzParallelMinBlock = 512 << 10

type xzParallel struct {
	xz       string
	file     *os.File // the source's, for progress and for reopening
	blocks   []xzBlock
	outs     chan *xzBlockOut // in block order
	inflight chan int64       // bytes of the blocks started, not yet read
	running  chan struct{}    // one token per xz running
	stop     context.Context  // done once Close kills every xz and starts no more
	cancel   context.CancelFunc
	files    *blockFiles
	stopOnce sync.Once
	wg       sync.WaitGroup

	cur  *xzBlockOut
	rest []byte // what is left of cur's data
	err  error
}

type xzBlockOut struct {
	block xzBlock
	n     int
	done  chan struct{} // closed once data or err is set
	data  []byte        // the output, mapped from the block's file
	err   error
	sum   hash.Hash // of the data read, nil for no check
	mem   *os.File  // the block's file, until released
}

// newXzParallel starts decoding f, positioned at the first stream's
// start, or returns ErrXzLayout when it should not be.
func newXzParallel(xz string, f *os.File, workers int) (*xzParallel, error) {
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, layoutError("%v", err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, layoutError("%v", err)
	}
	blocks, err := xzBlocks(f, start, fi.Size())
	if err != nil {
		return nil, err
	}
	var total, largest int64
	for i, b := range blocks {
		total += b.size
		largest = max(largest, b.size)
		if b.size > xzParallelBudget/2 {
			return nil, layoutError("block %d holds %d bytes", i+1, b.size)
		}
		if _, ok := xzCheckHashes[b.check]; !ok && b.check != 0 {
			return nil, layoutError("check type %d", b.check)
		}
	}
	if len(blocks) < 2 || workers < 2 || total/int64(len(blocks)) < xzParallelMinBlock {
		return nil, layoutError("%d blocks of %d bytes", len(blocks), total)
	}
	files, err := newBlockFiles(largest)
	if err != nil {
		return nil, layoutError("%v", err)
	}
	p := &xzParallel{
		xz: xz, file: f, blocks: blocks, files: files,
		outs:     make(chan *xzBlockOut, len(blocks)),
		inflight: make(chan int64, len(blocks)),
		running:  make(chan struct{}, workers),
	}
	p.stop, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(1)
	go p.dispatch()
	return p, nil
}

// dispatch starts the blocks in order, while there are cores and room.
func (p *xzParallel) dispatch() {
	defer p.wg.Done()
	defer close(p.outs)
	var held int64
	for i, b := range p.blocks {
		// Room: the blocks started but not read must fit the budget,
		// unless none is held (one block always fits).
		for held > 0 && held+b.size > xzParallelBudget {
			select {
			case n := <-p.inflight:
				held -= n
			case <-p.stop.Done():
				return
			}
		}
		select {
		case p.running <- struct{}{}:
		case <-p.stop.Done():
			return
		}
		held += b.size
		out, started := p.start(i, b)
		p.outs <- out
		if !started {
			return
		}
	}
}

// start runs xz on block i, its output into a block file the reader
// maps once xz is done; false when xz could not be started (out then
// holds the error).
func (p *xzParallel) start(i int, b xzBlock) (*xzBlockOut, bool) {
	out := &xzBlockOut{block: b, n: i + 1, done: make(chan struct{})}
	fail := func(err error) (*xzBlockOut, bool) {
		<-p.running
		out.err = p.blockError(out, err)
		close(out.done)
		return out, false
	}
	in, err := reopenAt(p.file, b.offset+b.headerSize)
	if err != nil {
		return fail(err)
	}
	defer in.Close()
	if out.mem, err = p.files.get(b.size); err != nil {
		return fail(err)
	}
	args := append([]string{"--format=raw"}, b.filters...)
	cmd := exec.CommandContext(p.stop, p.xz, append(args, "--single-stream", "-d", "-c", "-q")...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out.mem, &stderr
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		werr := cmd.Wait()
		<-p.running
		if werr != nil {
			werr = toolFailed(cmd.Path, werr, &stderr)
		}
		if err := p.collect(out, werr); err != nil {
			out.err = p.blockError(out, err)
		}
		close(out.done)
	}()
	return out, true
}

func (p *xzParallel) blockError(out *xzBlockOut, err error) error {
	return wrapErr(Xz, fmt.Errorf("block %d at offset %d: %w", out.n, out.block.offset, err))
}

// collect checks how much xz wrote against the index and maps it for the
// reader (the check is summed as it reads).
func (p *xzParallel) collect(out *xzBlockOut, werr error) error {
	size := out.block.size
	n, err := written(out.mem)
	switch {
	case err != nil:
		return err
	case n > size:
		// Before xz's own error, if any: the write the seal refused.
		return fmt.Errorf("more than the %d bytes the index gives", size)
	case werr != nil:
		return werr
	case n != size:
		return fmt.Errorf("%d bytes, where the index gives %d", n, size)
	}
	out.data, err = mapBlock(out.mem, size)
	return err
}

// xzCheckHashes are the hashes of the check types (2.1.1.2) but none:
// CRC32, CRC64, SHA-256.
var xzCheckHashes = map[byte]func() hash.Hash{
	1:  func() hash.Hash { return crc32.NewIEEE() },
	4:  func() hash.Hash { return crc64.New(crc64.MakeTable(crc64.ECMA)) },
	10: sha256.New,
}

// verify compares the block's check field with the sum of its output.
func (p *xzParallel) verify(out *xzBlockOut) error {
	want := make([]byte, xzCheckSize(out.block.check))
	if _, err := p.file.ReadAt(want, out.block.checkOffset()); err != nil {
		return fmt.Errorf("reading the check: %w", err)
	}
	var sum []byte
	if out.sum != nil {
		sum = out.sum.Sum(nil)
	}
	if out.block.check != 10 {
		slices.Reverse(sum) // the CRCs are little-endian in the file (3.4)
	}
	if !bytes.Equal(want, sum) {
		return fmt.Errorf("check %x, the data sums to %x", want, sum)
	}
	return nil
}

// reopenAt opens f again, a description of its own, at off.
func reopenAt(f *os.File, off int64) (*os.File, error) {
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("reopening the input: %w", err)
	}
	g := os.NewFile(uintptr(fd), f.Name())
	if _, err := g.Seek(off, io.SeekStart); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

func (p *xzParallel) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	for len(p.rest) == 0 {
		if p.cur != nil {
			if err := p.verify(p.cur); err != nil {
				p.err = p.blockError(p.cur, err)
				return 0, p.err
			}
			p.file.Seek(p.cur.block.end(), io.SeekStart) // progress
			p.release(p.cur)
			p.inflight <- p.cur.block.size
			p.cur = nil
		}
		out, ok := <-p.outs
		if !ok {
			p.file.Seek(0, io.SeekEnd) // progress: all read
			p.err = io.EOF
			return 0, io.EOF
		}
		<-out.done
		p.cur = out // released by Close, if the error stops here
		if out.err != nil {
			p.err = out.err
			return 0, p.err
		}
		p.rest = out.data
		if sum := xzCheckHashes[out.block.check]; sum != nil {
			out.sum = sum()
		}
	}
	// The sum is taken of what was copied, while it is in the cache.
	n := copy(b, p.rest)
	p.rest = p.rest[n:]
	if p.cur.sum != nil {
		p.cur.sum.Write(b[:n])
	}
	return n, nil
}

// release unmaps out's data and gives its file back.
func (p *xzParallel) release(out *xzBlockOut) {
	if out.data != nil {
		unix.Munmap(out.data)
		out.data = nil
	}
	if out.mem != nil {
		p.files.put(out.mem)
		out.mem = nil
	}
}

// Close stops every xz still running, waits for the goroutines and
// unmaps what was decoded and not read.
func (p *xzParallel) Close() error {
	p.stopOnce.Do(func() {
		p.cancel()
		p.wg.Wait()
		if p.cur != nil {
			p.release(p.cur)
		}
		for out := range p.outs { // closed: dispatch has returned
			p.release(out)
		}
		p.files.close()
		p.rest = nil
		if p.err == nil {
			p.err = wrapErr(Xz, errReadClosed)
		}
	})
	return nil
}
