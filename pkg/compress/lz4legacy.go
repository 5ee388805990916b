package compress

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/pierrec/lz4/v4"

	"github.com/rootfs-trim/rootfs-trim/internal/bigbuf"
)

// lz4LegacyBound is LZ4_compressBound(8 MiB): the kernel's unlz4 refuses a
// legacy block whose compressed size exceeds it, and so do we.
var lz4LegacyBound = lz4.CompressBlockBound(lz4LegacyBlock)

const lz4LegacyMagic32 = 0x184C2102

const lz4MaxWorkers = 3

// lz4LegacyReader decodes the legacy frame's independent 8 MiB blocks on
// several cores, in order, where the lz4 tool uses one and a pipe costs
// two more copies (make bench: list-lz4). At most four blocks are in
// flight, each a 16 MiB buffer for the compressed block and its output.
type lz4LegacyReader struct {
	src io.Reader
	// inPlace, when the source is a mapped file, gives the compressed
	// blocks without a copy; pending is what the sniffing buffer had
	// read ahead of it, taken first.
	inPlace InPlaceReader
	pending []byte
	hdr     []byte // scratch for block headers
	chunks  []*lz4Chunk
	order   chan *lz4Chunk // filled by readChunks, in stream order
	free    chan *lz4Chunk
	stop    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup // the goroutines, which Close waits for

	started bool
	cur     *lz4Chunk
	pos     int
	total   uint32 // decoded bytes handed out, modulo 2^32
	err     error
}

type lz4Chunk struct {
	comp    []byte // the compressed block: in scratch, or in place
	scratch []byte // owned room for comp
	out     []byte
	mem     []byte // scratch and out, when they come from bigbuf
	inPlace bool   // comp came from InPlaceReader.Next: hand it back with Done
	n       int    // decoded bytes in out
	err     error  // reading or decoding failed at this chunk
	done    chan struct{}
	// sizeTrailer marks the 4 bytes that end a kernel-built image; n holds
	// their value, the stream's uncompressed size modulo 2^32.
	sizeTrailer bool
}

// newLz4LegacyReader reads the stream from br. When under br is an
// InPlaceReader (inPlace, else nil), blocks are taken from it in place once
// br's buffered bytes are used up.
func newLz4LegacyReader(br *bufio.Reader, inPlace InPlaceReader) *lz4LegacyReader {
	// A block per worker and one being read. Three workers decode faster
	// than anything downstream consumes; more would only hold 16 MiB each.
	depth := min(max(runtime.GOMAXPROCS(0), 1), lz4MaxWorkers) + 1
	r := &lz4LegacyReader{
		src:     br,
		inPlace: inPlace,
		order:   make(chan *lz4Chunk, depth),
		free:    make(chan *lz4Chunk, depth),
		stop:    make(chan struct{}),
	}
	for range depth {
		c := &lz4Chunk{done: make(chan struct{}, 1)}
		r.chunks = append(r.chunks, c)
		r.free <- c
	}
	return r
}

func (r *lz4LegacyReader) start() {
	r.started = true
	workers := len(r.chunks) - 1
	jobs := make(chan *lz4Chunk, workers)
	r.wg.Add(workers + 1)
	for range workers {
		go func() {
			defer r.wg.Done()
			for c := range jobs {
				if !c.inPlace {
					c.decode()
				} else if err := r.inPlace.Check(); err != nil {
					c.n, c.err = 0, err
				} else {
					c.decode()
					r.inPlace.Done(c.comp)
				}
				c.done <- struct{}{}
			}
		}()
	}
	go func() {
		defer r.wg.Done()
		// Headers, and a block that straddles the read-ahead, are read
		// from the mapping here, in Go code, where a fault is caught.
		debug.SetPanicOnFault(true)
		r.readChunks(jobs)
	}()
}

// goInPlace switches to taking blocks in place, if the source can: br's
// buffered bytes come first, and br is not read again.
func (r *lz4LegacyReader) goInPlace() {
	br, ok := r.src.(*bufio.Reader)
	if r.inPlace == nil || !ok || !r.inPlace.InPlace() {
		r.inPlace = nil
		return
	}
	// The slice stays valid: br is never read again.
	r.pending, _ = br.Peek(br.Buffered())
}

// take returns the next n bytes of the stream, with io.ReadFull's errors:
// in br's read-ahead, read into *scratch, or in place, which fromSource
// reports (the caller hands them back with Done).
func (r *lz4LegacyReader) take(scratch *[]byte, n int) (b []byte, fromSource bool, err error) {
	if r.inPlace == nil || len(r.pending) > 0 && len(r.pending) < n {
		if cap(*scratch) < n {
			*scratch = make([]byte, n)
		}
		b = (*scratch)[:n]
		k := copy(b, r.pending)
		r.pending = r.pending[k:]
		var m int
		if k < n {
			if r.inPlace != nil {
				var p []byte
				p, err = r.inPlace.Next(n - k)
				m = copy(b[k:], p)
				r.inPlace.Done(p)
			} else {
				m, err = io.ReadFull(r.src, b[k:])
			}
		}
		if k > 0 && err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return b[:k+m], false, err
	}
	if len(r.pending) >= n {
		b, r.pending = r.pending[:n:n], r.pending[n:]
		return b, false, nil
	}
	b, err = r.inPlace.Next(n)
	return b, true, err
}

// readChunks splits the stream into blocks and hands each to a worker and,
// in the same order, to Read. It ends at the end of the stream, on an
// error (passed on as a last chunk) or when Close stops it.
func (r *lz4LegacyReader) readChunks(jobs chan<- *lz4Chunk) {
	defer close(jobs)
	defer close(r.order)
	r.goInPlace()
	first := true
	for {
		var c *lz4Chunk
		select {
		case c = <-r.free:
		case <-r.stop:
			return
		}
		c.n, c.err, c.sizeTrailer, c.inPlace = 0, nil, false, false
		more, err := r.readBlock(c)
		c.err = err
		last := err != nil || c.sizeTrailer // a chunk Read takes as it is
		switch {
		case last:
			c.done <- struct{}{}
		case !more:
			return
		default:
			if first && len(c.comp) >= 64<<10 {
				r.allocateAll()
			}
			first = false
			jobs <- c
		}
		select {
		case r.order <- c:
		case <-r.stop:
			return
		}
		if last {
			return
		}
	}
}

// allocateAll gives every chunk full-size buffers from bigbuf,
// before any worker runs. A block taken in place leaves the compressed
// half of its buffer untouched, and so never faulted in.
func (r *lz4LegacyReader) allocateAll() {
	for _, c := range r.chunks {
		c.mem = bigbuf.Get(lz4BlockMem)
		c.scratch = c.mem[:0:lz4LegacyBound]
		if len(c.comp) > 0 && !c.inPlace {
			// In scratch (or in the read-ahead, which a copy does no harm).
			c.comp = c.scratch[:copy(c.scratch[:len(c.comp)], c.comp)]
		}
		c.out = c.mem[lz4LegacyBound : lz4LegacyBound+lz4LegacyBlock]
	}
}

// lz4BlockMem is a block in flight: lz4LegacyBound + lz4LegacyBlock,
// rounded up. It comes from bigbuf, outside the Go heap, for the reasons
// its doc gives: the workers run pierrec's assembly decoder, which a
// collection cannot preempt, and on the heap the faults of 48 MiB of fresh
// pages doubled the time of `list` (make bench: list-lz4).
const lz4BlockMem = 16<<20 + 64<<10

// readBlock reads the next block into c. It reports false at the end of
// the stream. A fault on mapped input is an error.
func (r *lz4LegacyReader) readBlock(c *lz4Chunk) (more bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			more, err = false, faultError(v)
		}
	}()
	if r.inPlace != nil {
		if err := r.inPlace.Check(); err != nil {
			return false, err
		}
	}
	for {
		hdr, _, err := r.take(&r.hdr, 4)
		if len(hdr) == 0 && err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("block header: %w", cutShort(err))
		}
		size := binary.LittleEndian.Uint32(hdr)
		if size == lz4LegacyMagic32 {
			continue // a concatenated stream starts
		}
		if size == 0 {
			return false, errors.New("empty block")
		}
		if int64(size) > int64(lz4LegacyBound) {
			return false, fmt.Errorf("block of %d bytes exceeds the legacy bound of %d", size, lz4LegacyBound)
		}
		comp, fromSource, err := r.take(&c.scratch, int(size))
		c.comp, c.inPlace = comp, fromSource
		if len(comp) == 0 && err == io.EOF {
			// The kernel's build appends the uncompressed size to its
			// lz4 images: 4 bytes and nothing after. Read checks the
			// value against what was decoded.
			c.sizeTrailer, c.n = true, int(size)
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("block of %d bytes: %w", size, cutShort(err))
		}
		return true, nil
	}
}

// cutShort makes the end of the input within a block an unexpected one;
// a read error stays what it is.
func cutShort(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// decode decodes c.comp into c.out. A small block gets a small buffer
// first (tests and fuzzing read thousands of tiny streams) and the full
// 8 MiB only if it does not fit.
func (c *lz4Chunk) decode() {
	defer func() {
		if v := recover(); v != nil {
			c.n, c.err = 0, fmt.Errorf("%w: %v", ErrDecoderPanic, v)
		}
	}()
	if c.out == nil {
		c.out = make([]byte, min(lz4LegacyBlock, 8*len(c.comp)+4096))
	}
	n, err := lz4.UncompressBlock(c.comp, c.out)
	if err != nil && len(c.out) < lz4LegacyBlock {
		c.out = make([]byte, lz4LegacyBlock)
		n, err = lz4.UncompressBlock(c.comp, c.out)
	}
	if err != nil {
		c.n, c.err = 0, fmt.Errorf("block of %d bytes: %w", len(c.comp), err)
		return
	}
	c.n = n
}

func (r *lz4LegacyReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if !r.started {
		r.start()
	}
	for r.cur == nil || r.pos == r.cur.n {
		if r.cur != nil {
			r.free <- r.cur
			r.cur = nil
		}
		c, ok := <-r.order
		if !ok {
			r.err = io.EOF
			return 0, io.EOF
		}
		<-c.done
		if c.sizeTrailer && uint32(c.n) != r.total {
			c.err = fmt.Errorf("block header: %w", io.ErrUnexpectedEOF)
		}
		if c.err != nil {
			r.err = c.err
			return 0, c.err
		}
		if c.sizeTrailer {
			r.err = io.EOF
			return 0, io.EOF
		}
		r.cur, r.pos = c, 0
		r.total += uint32(c.n)
	}
	n := copy(p, r.cur.out[r.pos:r.cur.n])
	r.pos += n
	return n, nil
}

// Close stops the goroutines, waits for them and hands the block buffers
// back to the pool.
func (r *lz4LegacyReader) Close() error {
	r.once.Do(func() {
		close(r.stop)
		r.wg.Wait()
		for _, c := range r.chunks {
			if c.mem != nil {
				bigbuf.Put(c.mem)
				c.mem, c.scratch, c.out = nil, nil, nil
			}
			c.comp = nil
		}
		r.cur = nil
	})
	if r.err == nil || r.err == io.EOF {
		r.err = errReadClosed
	}
	return nil
}
