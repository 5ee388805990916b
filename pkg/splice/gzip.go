package splice

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// deflateWindow is how far back a deflate block may reach into the data
// before it: a block can be copied where the output holds its content and
// this much of what came before it, as the input did.
const deflateWindow = 32 << 10

// GzipLayout is the block map of a gzip file's first member: filled in by
// the GzipReader that decodes the input for the archive reader (one pass),
// or by ScanGzip's goroutine (a second decode, for an input read
// otherwise), while the caller goes on.
type GzipLayout struct {
	Header []byte // the member's header, copied to the output
	Level  int    // the level the header's XFL suggests

	mu      sync.Mutex
	cond    *sync.Cond
	blocks  []DeflateBlock
	scanned int64 // uncompressed bytes the blocks cover
	done    bool
	err     error
	more    bool // bytes follow the first member
	stop    atomic.Bool
	points  pointSet // block starts with their windows, for the check

	// onePass: a GzipReader fills the map, paced by the archive reader,
	// which may be waiting on the splicer: never wait for it, map ahead
	// privately instead (ahead, used by the splicer's goroutine only).
	onePass bool
	ahead   *scanAhead
}

// scanAhead maps blocks beyond what the GzipReader has published, from
// the input file, when the splicer needs them before the reader gets
// there: it decodes them only for the map, as ScanGzip does.
type scanAhead struct {
	f      *inflater
	blocks []DeflateBlock
	done   bool
}

// newScanner decodes the deflate stream in br, which starts at the file's
// bit, to map its blocks (onBlock): nothing else tells where a Huffman
// block ends. The output is dropped, so the window before off is zeros:
// a reference into it is checked as a decoder checks it, not followed.
func newScanner(br *bufio.Reader, bit, off int64, onBlock func(DeflateBlock)) (*inflater, error) {
	f, err := newInflater(br, bit/8, uint(bit%8), make([]byte, min(off, deflateWindow)), off)
	if err != nil {
		return nil, err
	}
	f.onBlock = func(b DeflateBlock, _ *inflater) { onBlock(b) }
	return f, nil
}

// ScanGzip reads the gzip header of r and starts scanning its blocks. A
// header the splicer does not know (reserved flags, a method other than
// deflate) is ErrUnhandled.
func ScanGzip(r io.ReaderAt, size int64) (*GzipLayout, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), int(min(size+16, 256<<10)))
	l, err := newGzipLayout(br)
	if err != nil {
		return nil, err
	}
	go l.scan(br, size)
	return l, nil
}

// newGzipLayout reads the header from br, which it consumes.
func newGzipLayout(br *bufio.Reader) (*GzipLayout, error) {
	hdr, err := readGzipHeader(br)
	if err != nil {
		return nil, err
	}
	// XFL says level 9 or 1 (compress.ReadLevelHint); else gzip's default.
	l := &GzipLayout{Header: hdr, Level: 6}
	if hint := compress.ReadLevelHint(compress.Gzip, hdr); hint.Recorded {
		l.Level = hint.Lo
	}
	l.cond = sync.NewCond(&l.mu)
	return l, nil
}

// readGzipHeader parses the header at the start of br from what br can
// hold (a header longer than its buffer is cut short) and consumes it.
func readGzipHeader(br *bufio.Reader) ([]byte, error) {
	short := fmt.Errorf("gzip: header: %w", io.ErrUnexpectedEOF)
	b, _ := br.Peek(10)
	if len(b) < 10 {
		return nil, short
	}
	if b[0] != 0x1f || b[1] != 0x8b {
		return nil, errors.New("gzip: not a gzip header")
	}
	flg := b[3]
	if b[2] != 8 || flg&0xe0 != 0 {
		return nil, fmt.Errorf("gzip: header method %d, flags %#x: %w", b[2], flg, ErrUnhandled)
	}
	n := 10
	need := func(k int) bool {
		if len(b) < n+k {
			b, _ = br.Peek(min(br.Size(), max(n+k, br.Buffered())))
		}
		return len(b) >= n+k
	}
	if flg&4 != 0 {
		if !need(2) {
			return nil, short
		}
		n += 2 + int(binary.LittleEndian.Uint16(b[n:]))
		if !need(0) {
			return nil, short
		}
	}
	for _, f := range []byte{8, 16} { // name, comment
		if flg&f == 0 {
			continue
		}
		for {
			if !need(1) {
				return nil, short
			}
			n++
			if b[n-1] == 0 {
				break
			}
		}
	}
	if flg&2 != 0 {
		if !need(2) {
			return nil, short
		}
		n += 2
	}
	hdr := append([]byte(nil), b[:n]...)
	_, _ = br.Discard(n)
	return hdr, nil
}

func (l *GzipLayout) scan(br *bufio.Reader, size int64) {
	var batch []DeflateBlock
	publish := func(done bool, err error) {
		l.mu.Lock()
		l.blocks = append(l.blocks, batch...)
		if len(batch) > 0 {
			l.scanned = batch[len(batch)-1].End()
		}
		l.done, l.err = done, err
		l.mu.Unlock()
		l.cond.Broadcast()
		batch = batch[:0]
	}
	f, err := newScanner(br, int64(len(l.Header))*8, 0, func(b DeflateBlock) {
		if batch = append(batch, b); len(batch) == 64 {
			publish(false, nil)
		}
	})
	for err == nil && !l.stop.Load() {
		_, err = f.decode()
	}
	switch {
	case err == io.EOF:
		// The member's trailer follows, byte aligned.
		l.more = (f.bitPos()+7)/8+8 < size
		publish(true, nil)
	case err != nil:
		publish(true, err)
	default:
		publish(true, errors.New("stopped"))
	}
}

// add publishes a block the GzipReader has decoded.
func (l *GzipLayout) add(b DeflateBlock) {
	l.mu.Lock()
	l.blocks = append(l.blocks, b)
	l.scanned = b.End()
	l.mu.Unlock()
}

// finish ends a GzipReader's map.
func (l *GzipLayout) finish(err error) {
	l.mu.Lock()
	l.done, l.err = true, err
	l.mu.Unlock()
	l.cond.Broadcast()
}

// Stop ends the scan early.
func (l *GzipLayout) Stop() { l.stop.Store(true) }

// Wait waits for the scan to end and reports whether data follows the
// first member and what error ended the scan, if any. A map a GzipReader
// fills is finished from the input file instead: see ahead.
func (l *GzipLayout) Wait(in io.ReaderAt, size int64) (more bool, err error) {
	if l.onePass {
		blocks, _, err := l.through(math.MaxInt64, in)
		if err != nil || len(blocks) == 0 {
			return false, err
		}
		// The member's trailer follows the final block, byte aligned.
		end := (blocks[len(blocks)-1].EndBit+7)/8 + 8
		return end < size, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.done {
		l.cond.Wait()
	}
	return l.more, l.err
}

// known returns the blocks mapped so far (by the reader, and ahead of it
// by through), and up to where the map is known: math.MaxInt64 once
// complete.
func (l *GzipLayout) known() ([]DeflateBlock, int64) {
	l.mu.Lock()
	blocks, known := l.blocks, l.scanned
	if l.done {
		known = math.MaxInt64
	}
	l.mu.Unlock()
	a := l.ahead
	if a == nil || known == math.MaxInt64 {
		return blocks, known
	}
	// The reader's blocks, then those mapped ahead beyond them.
	all := blocks[:len(blocks):len(blocks)]
	for _, b := range a.blocks {
		if b.Start >= known {
			all = append(all, b)
		}
	}
	if a.done {
		return all, math.MaxInt64
	}
	if n := len(all); n > 0 {
		known = max(known, all[n-1].End())
	}
	return all, known
}

// through returns the blocks once the map covers off or is complete:
// waiting for ScanGzip's goroutine, or mapping ahead of a GzipReader from
// the input file in. The second result is how far the map is known.
func (l *GzipLayout) through(off int64, in io.ReaderAt) ([]DeflateBlock, int64, error) {
	if !l.onePass {
		l.mu.Lock()
		defer l.mu.Unlock()
		for !l.done && l.scanned < off {
			l.cond.Wait()
		}
		if l.done {
			return l.blocks, math.MaxInt64, nil
		}
		return l.blocks, l.scanned, nil
	}
	blocks, known := l.known()
	if known >= off {
		return blocks, known, nil
	}
	if a := l.ahead; a == nil || len(a.blocks) == 0 || a.blocks[len(a.blocks)-1].End() < known {
		// Start, or start again, where the map known so far ends.
		bit := int64(len(l.Header)) * 8
		if n := len(blocks); n > 0 {
			bit = blocks[n-1].EndBit
		}
		br := bufio.NewReaderSize(io.NewSectionReader(in, bit/8, math.MaxInt64-bit/8), 64<<10)
		a = &scanAhead{}
		var err error
		if a.f, err = newScanner(br, bit, known, func(b DeflateBlock) { a.blocks = append(a.blocks, b) }); err != nil {
			return nil, 0, err
		}
		l.ahead = a
	}
	a := l.ahead
	for !a.done && (len(a.blocks) == 0 || a.blocks[len(a.blocks)-1].End() < off) {
		_, err := a.f.decode()
		if err == io.EOF {
			a.done = true
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	blocks, known = l.known()
	return blocks, known, nil
}

// Gzip writes a single-member gzip stream for an output whose bytes come,
// as runs, from a Matcher. A deflate block of the input is copied, bit for
// bit at whatever bit it lands on, where the output holds its content and
// the deflateWindow bytes before it as the input did; the rest is
// compressed anew with the 32 KiB before it as the dictionary.
type Gzip struct {
	w     *bufio.Writer
	in    io.ReaderAt
	lay   *GzipLayout
	level int
	bw    bitWriter

	chain
	chainStart int64 // where the chain began in the input
	next       int   // blocks before it are settled

	fw      *flate.Writer
	hist    []byte // the last deflateWindow bytes emitted
	started bool
	buf     []byte

	cw     *countWriter
	outOff int64    // uncompressed bytes emitted
	points pointSet // where the output's chunks start, for the check

	// Copied counts the blocks copied, Regions the stretches compressed.
	Copied, Regions int
}

// NewGzip returns a splicer writing to w, copying from the gzip file in
// whose first member lay describes.
func NewGzip(w io.Writer, in io.ReaderAt, lay *GzipLayout) *Gzip {
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 256<<10)
	s := &Gzip{w: bw, in: in, lay: lay, level: lay.Level, bw: bitWriter{w: bw}, cw: cw}
	s.chain = newChain(s)
	return s
}

func (s *Gzip) start() error {
	if !s.started {
		s.started = true
		_, err := s.w.Write(s.lay.Header)
		s.points.add(int64(len(s.lay.Header))*8, 0, nil)
		return err
	}
	return nil
}

// Write takes the next output run; src is its input offset, or -1.
func (s *Gzip) Write(p []byte, src int64) error {
	if err := s.start(); err != nil {
		return err
	}
	return eachMiB(p, src, func(p []byte, src int64) error {
		if s.chainIdx >= 0 && (src < 0 || s.end() != src) {
			// The chain ends: settle it with its blocks all mapped.
			if err := s.settle(true); err != nil {
				return err
			}
		}
		if s.add(p, src) {
			s.chainStart = src
		}
		return s.settle(false)
	})
}

// settle emits what can be: each block the chain now covers with its
// window, and the new data before it, compressed. Without full, it takes
// the map as far as it is known and leaves pending what lies beyond: the
// same blocks are copied and the same bytes compressed as with the whole
// map, later (a chain is settled with full before it ends).
func (s *Gzip) settle(full bool) error {
	for s.chainIdx >= 0 {
		end := s.end()
		blocks, known := s.lay.known()
		if full && known < end {
			var err error
			if blocks, known, err = s.lay.through(end, s.in); err != nil {
				return fmt.Errorf("gzip: mapping the input's blocks: %w", err)
			}
		}
		from := s.chainIn
		if s.chainStart > 0 {
			from = max(from, s.chainStart+deflateWindow)
		}
		i := s.next + sort.Search(len(blocks)-s.next, func(i int) bool { return blocks[s.next+i].Start >= from })
		if i < len(blocks) && blocks[i].End() <= end {
			b := blocks[i]
			at := s.chainIdx + int(b.Start-s.chainIn)
			if err := s.literal(s.pending[:at]); err != nil {
				return err
			}
			if err := s.copyBlock(b, s.pending[at:at+int(b.Len)]); err != nil {
				return err
			}
			s.drop(at + int(b.Len))
			s.chainIdx, s.chainIn = 0, b.End()
			s.next = i + 1
			continue
		}
		keep := len(s.pending)
		switch {
		case i < len(blocks) && blocks[i].Start < end:
			keep = s.chainIdx + int(blocks[i].Start-s.chainIn)
		case i == len(blocks) && known < end:
			// The next block from `from` on starts at known or later.
			keep = s.chainIdx + int(min(end, max(known, from))-s.chainIn)
		}
		if err := s.literal(s.pending[:keep]); err != nil {
			return err
		}
		s.drop(keep)
		return nil
	}
	err := s.literal(s.pending)
	s.pending = s.pending[:0]
	return err
}

func (s *Gzip) remember(p []byte) {
	if len(p) >= deflateWindow {
		s.hist = append(s.hist[:0], p[len(p)-deflateWindow:]...)
		return
	}
	if len(s.hist)+len(p) > 2*deflateWindow {
		s.hist = s.hist[:copy(s.hist, s.hist[len(s.hist)+len(p)-deflateWindow:])]
	}
	s.hist = append(s.hist, p...)
}

func (s *Gzip) window() []byte {
	if len(s.hist) > deflateWindow {
		return s.hist[len(s.hist)-deflateWindow:]
	}
	return s.hist
}

// literal compresses p, opening a region if none is open.
func (s *Gzip) literal(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if s.fw == nil {
		s.points.add(s.bitPos(), s.outOff, s.histWindow)
		if s.bw.n != 0 {
			// An empty stored block brings the stream to a byte boundary,
			// where the compressor's blocks can begin.
			s.bw.bits(0, 3)
			s.bw.align()
			s.bw.bytes([]byte{0, 0, 0xff, 0xff})
		}
		fw, err := flate.NewWriterDict(s.w, s.level, s.window())
		if err != nil {
			return err
		}
		s.fw = fw
		s.Regions++
	}
	s.remember(p)
	s.outOff += int64(len(p))
	_, err := s.fw.Write(p)
	return err
}

// closeRegion ends the open region on a byte boundary: Flush ends with an
// empty stored block that is not final.
func (s *Gzip) closeRegion() error {
	if s.fw == nil {
		return nil
	}
	err := s.fw.Flush()
	s.fw = nil
	return err
}

func (s *Gzip) copyBlock(b DeflateBlock, content []byte) error {
	if err := s.closeRegion(); err != nil {
		return err
	}
	s.points.add(s.bitPos(), s.outOff, s.histWindow)
	s.outOff += b.Len
	// Every copied block becomes non-final: the end is written by Close.
	s.bw.bits(0, 1)
	if b.Stored {
		// Its padding depends on the bit it starts at: write it anew.
		s.bw.bits(0, 2)
		s.bw.align()
		at := (b.Bit + 3 + 7) / 8
		if err := s.copyBits(at*8, at*8+32+8*b.Len); err != nil {
			return err
		}
	} else if err := s.copyBits(b.Bit+1, b.EndBit); err != nil {
		return err
	}
	s.remember(content)
	s.Copied++
	return s.bw.err
}

// copyBits appends the input's bits [from, to) to the output.
func (s *Gzip) copyBits(from, to int64) error {
	if s.buf == nil {
		s.buf = make([]byte, 64<<10)
	}
	var one [1]byte
	for from < to {
		if from%8 != 0 || to-from < 8 {
			k := min(8-from%8, to-from)
			if _, err := s.in.ReadAt(one[:], from/8); err != nil {
				return fmt.Errorf("gzip: rereading the input: %w", err)
			}
			s.bw.bits(uint64(one[0]>>(from%8))&(1<<k-1), uint(k))
			from += k
			continue
		}
		n := min((to-from)/8, int64(len(s.buf)))
		if _, err := s.in.ReadAt(s.buf[:n], from/8); err != nil {
			return fmt.Errorf("gzip: rereading the input: %w", err)
		}
		s.bw.bytes(s.buf[:n])
		from += n * 8
	}
	return s.bw.err
}

// Prefix writes the input's first n uncompressed bytes, which must begin
// the output. The blocks within them are copied; get supplies the input's
// bytes from the start of the last one (and the window before it), which
// the caller still holds, or reports false, and the prefix is ErrUnhandled.
func (s *Gzip) Prefix(n int64, get func(from, to int64) ([]byte, bool)) error {
	if n == 0 {
		return nil
	}
	blocks, _, err := s.lay.through(n, s.in)
	if err != nil {
		return fmt.Errorf("gzip: mapping the input's blocks: %w", err)
	}
	i := 0
	for i < len(blocks) && blocks[i].End() <= n {
		i++
	}
	var at int64
	if i > 0 {
		at = blocks[i-1].End()
	}
	if i == len(blocks) && at < n {
		return fmt.Errorf("gzip: the first %d bytes are not all in the first member: %w", n, ErrUnhandled)
	}
	tail, ok := get(max(0, at-deflateWindow), n)
	if !ok {
		return fmt.Errorf("gzip: the data before the first change is no longer held: %w", ErrUnhandled)
	}
	if err := s.start(); err != nil {
		return err
	}
	if i > 0 {
		// Output and input are at the same bit here, so the run of blocks
		// goes over whole (only a final flag, if any, is cleared).
		first, last := blocks[0], blocks[i-1]
		if last.Final {
			if err := s.copyBits(first.Bit, last.Bit); err != nil {
				return err
			}
			s.bw.bits(0, 1)
			if err := s.copyBits(last.Bit+1, last.EndBit); err != nil {
				return err
			}
		} else if err := s.copyBits(first.Bit, last.EndBit); err != nil {
			return err
		}
		s.Copied += i
	}
	// The prefix's blocks are at the input's bits: so are its points.
	for _, p := range s.lay.points.list() {
		if p.Off > 0 && p.Off < at {
			s.points.add(p.Bit, p.Off, func() []byte { return p.Window })
		}
	}
	s.outOff = at
	cut := at - max(0, at-deflateWindow)
	s.remember(tail[:cut])
	s.pending = s.pending[:0]
	s.reserve(len(tail) - int(cut))
	s.pending = append(s.pending, tail[cut:]...)
	s.chainIdx, s.chainIn, s.chainStart = 0, at, 0
	s.next = i
	return nil
}

// Points are where the output's check may start a chunk (CheckGzip).
func (s *Gzip) Points() []GzipPoint { return s.points.list() }

// More says whether the input has bytes after its first member, once the
// output is closed.
func (s *Gzip) More(size int64) (bool, error) { return s.lay.Wait(s.in, size) }

// Close ends the deflate stream with a final block and writes the
// trailer: crc is the CRC-32 of the whole output, size its length.
func (s *Gzip) Close(crc uint32, size int64) error {
	if err := s.start(); err != nil {
		return err
	}
	if s.chainIdx >= 0 {
		if err := s.settle(true); err != nil {
			return err
		}
	}
	s.chainIdx = -1
	if err := s.settle(false); err != nil {
		return err
	}
	s.release()
	if s.fw != nil {
		if err := s.fw.Close(); err != nil {
			return err
		}
		s.fw = nil
	} else {
		// An empty fixed-Huffman block, final: 1, type 01, end code 0000000.
		s.bw.bits(1|1<<1, 3)
		s.bw.bits(0, 7)
		s.bw.align()
	}
	var tr [8]byte
	binary.LittleEndian.PutUint32(tr[:4], crc)
	binary.LittleEndian.PutUint32(tr[4:], uint32(size))
	s.bw.bytes(tr[:])
	if s.bw.err != nil {
		return s.bw.err
	}
	return s.w.Flush()
}

// bitWriter writes bits, least significant first, before whole bytes.
type bitWriter struct {
	w   *bufio.Writer
	acc uint64
	n   uint // bits in acc, < 8 between calls
	tmp []byte
	err error
}

func (b *bitWriter) bits(v uint64, k uint) {
	b.acc |= v << b.n
	b.n += k
	for b.n >= 8 {
		if err := b.w.WriteByte(byte(b.acc)); err != nil && b.err == nil {
			b.err = err
		}
		b.acc >>= 8
		b.n -= 8
	}
}

func (b *bitWriter) align() {
	if b.n > 0 {
		b.bits(0, 8-b.n)
	}
}

// bytes writes whole bytes, shifted to the current bit.
func (b *bitWriter) bytes(p []byte) {
	if b.n == 0 {
		if _, err := b.w.Write(p); err != nil && b.err == nil {
			b.err = err
		}
		return
	}
	if cap(b.tmp) < len(p) {
		b.tmp = make([]byte, len(p))
	}
	out := b.tmp[:len(p)]
	acc, n := byte(b.acc), b.n
	for i, c := range p {
		out[i] = acc | c<<n
		acc = c >> (8 - n)
	}
	b.acc = uint64(acc)
	if _, err := b.w.Write(out); err != nil && b.err == nil {
		b.err = err
	}
}
