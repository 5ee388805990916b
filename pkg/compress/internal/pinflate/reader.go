package pinflate

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

// Options tune a Reader; zero values take the defaults.
type Options struct {
	// Workers decode chunks at once (default: the number of CPUs).
	Workers int
	// ChunkSize is the compressed bytes of a chunk (default 1 MiB).
	ChunkSize int
	// ChunkCap is the most a chunk's output may take in memory (default
	// 16 MiB: half for symbols with markers, 2 bytes each, half for
	// bytes). A chunk over it, a bomb or a long run of zeros, is decoded
	// by the reader itself, 1 MiB at a time. So memory stays within
	// (Workers+2) * (ChunkSize + 1 MiB + ChunkCap) for the chunks (in
	// flight, and the one being handed out) plus ChunkSize + 2 MiB +
	// ChunkCap/4 of the reader's own, whatever the input: 79 MiB with
	// the defaults on 2 cores.
	ChunkCap int
}

// slack is what a chunk reads past its end, for the block that crosses it.
const slack = 1 << 20

// Reader decodes the gzip member at offset off of a file of size bytes,
// chunks on several cores, and hands the output out in order. Its output
// and errors are klauspost/compress/gzip's (one member, Multistream
// false): wherever this decoder finds anything wrong (a header it does not
// parse, a corrupt or truncated stream, a bad checksum), that decoder is
// started over from the member's start, the bytes already handed out are
// skipped, and the rest, error included, is its own.
type Reader struct {
	ra        io.ReaderAt
	off, size int64
	opt       Options
	data      int64 // byte where the deflate stream starts
	nchunks   int

	jobs   chan *chunk
	queue  []*chunk // dispatched, in order
	free   []*chunk
	next   int // next chunk to dispatch
	wg     sync.WaitGroup
	stop   atomic.Bool
	closed bool

	pos     int64 // absolute bit: where the decoded output ends
	k       int   // the chunk whose stretch starts at pos
	win     [windowSize]byte
	have    int // window bytes known, right-aligned in win
	crc     uint32
	total   int64
	pending [][]byte
	held    *chunk // the chunk pending points into
	res     []byte
	seq     *stream
	seq0    *stream // the last stream, whose buffer the next one reuses
	seqSrc  []byte
	seqStop int64 // bit of seq's source where its stretch ends
	seqBase int64
	final   bool

	replay   io.Reader
	replayIn *countReader
	replayBr *bufio.Reader
	end      int64 // byte after the member, once known
	err      error
	stats    Stats
}

// Stats count how each stretch was decoded.
type Stats struct {
	Chunks  int  // chunks whose speculative decoding was used
	Stretch int  // stretches the reader decoded itself
	Replay  bool // klauspost's decoder took over
}

// Stats says how the member was decoded so far.
func (r *Reader) Stats() Stats { return r.stats }

// NewReader starts decoding the member at off. Its error is
// klauspost's gzip.NewReader's, for a header that one refuses.
func NewReader(ra io.ReaderAt, off, size int64, opt Options) (*Reader, error) {
	if opt.Workers <= 0 {
		opt.Workers = runtime.NumCPU()
	}
	if opt.ChunkSize <= 0 {
		opt.ChunkSize = 1 << 20
	}
	if opt.ChunkCap <= 0 {
		opt.ChunkCap = 16 << 20
	}
	r := &Reader{ra: ra, off: off, size: size, opt: opt, end: -1}
	data, ok := r.header()
	if !ok {
		if err := r.startReplay(); err != nil {
			return nil, err
		}
		return r, nil
	}
	r.data, r.pos = data, data*8
	r.nchunks = int((size - data + int64(opt.ChunkSize) - 1) / int64(opt.ChunkSize))
	r.jobs = make(chan *chunk, opt.Workers+1)
	for range opt.Workers {
		r.wg.Add(1)
		go r.work()
	}
	r.dispatch()
	return r, nil
}

// header parses the member's gzip header, as far as this reader handles
// one: a header CRC, reserved flags or anything odd is left to the replay.
func (r *Reader) header() (int64, bool) {
	b := make([]byte, min(r.size-r.off, 64<<10))
	n, _ := r.ra.ReadAt(b, r.off)
	b = b[:n]
	if len(b) < 10 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 || b[3]&0xe2 != 0 {
		return 0, false
	}
	p := 10
	if b[3]&4 != 0 {
		if p+2 > len(b) {
			return 0, false
		}
		p += 2 + int(binary.LittleEndian.Uint16(b[p:]))
	}
	for _, f := range []byte{8, 16} {
		if b[3]&f == 0 {
			continue
		}
		for p < len(b) && b[p] != 0 {
			p++
		}
		p++
	}
	if p >= len(b) {
		return 0, false
	}
	return r.off + int64(p), true
}

func (r *Reader) work() {
	defer r.wg.Done()
	for c := range r.jobs {
		lo := r.data + int64(c.k)*int64(r.opt.ChunkSize)
		hi := min(r.size, lo+int64(r.opt.ChunkSize)+slack)
		c.src = grow(c.src, int(hi-lo))
		c.base, c.first = lo*8, c.k == 0
		c.stop = int64(r.opt.ChunkSize) * 8
		if c.k == r.nchunks-1 {
			c.stop = 1 << 62
		}
		if n, _ := r.ra.ReadAt(c.src, lo); n == len(c.src) {
			decodeChunk(c, r.opt.ChunkCap, r.stop.Load)
		} else {
			c.ok = false
		}
		close(c.done)
	}
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// dispatch keeps Workers+1 chunks in flight.
func (r *Reader) dispatch() {
	for r.next < r.nchunks && len(r.queue) < r.opt.Workers+1 && !r.stop.Load() {
		var c *chunk
		if n := len(r.free); n > 0 {
			c, r.free = r.free[n-1], r.free[:n-1]
		} else {
			c = &chunk{}
		}
		c.k, c.done = r.next, make(chan struct{})
		r.next++
		r.queue = append(r.queue, c)
		r.jobs <- c
	}
}

// Read hands out the member's output in order.
func (r *Reader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 || len(r.pending[0]) == 0 {
		if len(r.pending) > 0 {
			r.pending = r.pending[1:]
			continue
		}
		if r.err != nil {
			return 0, r.err
		}
		if r.replay != nil {
			return r.readReplay(p)
		}
		r.advance()
	}
	n := copy(p, r.pending[0])
	r.pending[0] = r.pending[0][n:]
	return n, nil
}

// advance makes the next output pending, or ends.
func (r *Reader) advance() {
	if r.held != nil {
		r.free = append(r.free, r.held)
		r.held = nil
		r.dispatch()
	}
	switch {
	case r.seq != nil:
		r.stepSeq()
	case r.final:
		r.trailer()
	case r.k >= r.nchunks:
		r.startReplay() // ran off the end: the stream is cut short
	default:
		r.takeChunk()
	}
}

// takeChunk uses chunk k's decoding if it starts where the output ends,
// and otherwise decodes its stretch here.
func (r *Reader) takeChunk() {
	c := r.queue[0]
	<-c.done
	r.queue = r.queue[1:]
	r.k++
	if c.ok && c.start == r.pos && r.resolve(c) {
		r.emit(r.res)
		r.emit(c.b[c.hist:])
		r.stats.Chunks++
		r.held, r.pos, r.final = c, c.end, c.final
		return
	}
	lo := r.pos / 8
	hi := min(r.size, c.base/8+c.stop/8+slack)
	if c.stop == 1<<62 {
		hi = r.size
	}
	r.seqSrc = grow(r.seqSrc, int(hi-lo))
	src := r.seqSrc
	if n, _ := r.ra.ReadAt(src, lo); n != len(src) {
		r.free = append(r.free, c)
		r.startReplay()
		return
	}
	r.stats.Stretch++
	r.seqBase = lo * 8
	r.seqStop = c.base + c.stop - r.seqBase
	if c.stop == 1<<62 {
		r.seqStop = 1 << 62
	}
	var buf []byte
	if r.seq0 != nil {
		buf = r.seq0.buf
	}
	r.seq = newStream(src, r.pos-r.seqBase, r.win[windowSize-r.have:], buf, 1<<20)
	r.seq0 = r.seq
	r.free = append(r.free, c)
	r.dispatch()
	r.stepSeq()
}

// stepSeq decodes the next piece of a stretch the reader decodes itself.
func (r *Reader) stepSeq() {
	p, err := r.seq.next(r.seqStop)
	if err != nil {
		r.seq = nil
		r.startReplay()
		return
	}
	r.emit(p)
	if r.seq.ended(r.seqStop) {
		r.pos, r.final = r.seqBase+r.seq.s.br.bitPos(), r.seq.s.done
		r.seq = nil
	}
}

// resolve replaces c's markers with the window into r.res; false if one
// reaches before the member's output.
func (r *Reader) resolve(c *chunk) bool {
	r.res = grow(r.res, len(c.u))
	low := uint16(windowSize - r.have)
	for i, v := range c.u {
		if v&marker == 0 {
			r.res[i] = byte(v)
			continue
		}
		if v&^marker < low {
			return false
		}
		r.res[i] = r.win[v&^marker]
	}
	return true
}

// emit makes p pending and counts it into the checksum and the window.
func (r *Reader) emit(p []byte) {
	if len(p) == 0 {
		return
	}
	r.pending = append(r.pending, p)
	r.crc = crc32.Update(r.crc, crc32.IEEETable, p)
	r.total += int64(len(p))
	if len(p) >= windowSize {
		copy(r.win[:], p[len(p)-windowSize:])
		r.have = windowSize
		return
	}
	keep := min(r.have, windowSize-len(p))
	copy(r.win[windowSize-len(p)-keep:], r.win[windowSize-keep:])
	copy(r.win[windowSize-len(p):], p)
	r.have = keep + len(p)
}

// trailer checks the CRC-32 and size after the last block.
func (r *Reader) trailer() {
	at := (r.pos + 7) / 8
	var t [8]byte
	if n, _ := r.ra.ReadAt(t[:], at); n != 8 ||
		binary.LittleEndian.Uint32(t[:]) != r.crc ||
		binary.LittleEndian.Uint32(t[4:]) != uint32(r.total) {
		r.startReplay()
		return
	}
	r.end = at + 8
	r.err = io.EOF
	r.shutdown()
}

// startReplay hands the rest to klauspost's decoder, started over from
// the member's start with what was handed out skipped, so that the
// output and the error are its own.
func (r *Reader) startReplay() error {
	r.shutdown()
	r.stats.Replay = true
	r.replayIn = &countReader{r: io.NewSectionReader(r.ra, r.off, r.size-r.off)}
	r.replayBr = bufio.NewReaderSize(r.replayIn, 64<<10)
	zr, err := gzip.NewReader(r.replayBr)
	if err != nil {
		if err == io.EOF && r.total > 0 {
			err = io.ErrUnexpectedEOF // not a clean end, after output
		}
		r.err = err
		return err
	}
	zr.Multistream(false)
	if _, err := io.CopyN(io.Discard, zr, r.total); err != nil {
		if err == io.EOF {
			err = errDisagree
		}
		r.err = err
		return nil
	}
	r.replay = zr
	return nil
}

var errDisagree = errors.New("pinflate: the sequential decoder ended before this one")

func (r *Reader) readReplay(p []byte) (int, error) {
	n, err := r.replay.Read(p)
	if err == io.EOF {
		r.end = r.off + r.replayIn.n - int64(r.replayBr.Buffered())
	}
	if err != nil {
		r.err = err
	}
	return n, err
}

// End is the offset of the byte after the member, once Read has returned
// io.EOF (-1 before).
func (r *Reader) End() int64 { return r.end }

// shutdown stops the workers and waits for them.
func (r *Reader) shutdown() {
	r.stop.Store(true)
	if r.jobs != nil && !r.closed {
		r.closed = true
		close(r.jobs)
		r.wg.Wait()
	}
}

// Close stops the workers.
func (r *Reader) Close() error {
	r.shutdown()
	if r.err == nil {
		r.err = errClosed
	}
	return nil
}

var errClosed = errors.New("pinflate: read after close")

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
