package splice

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
)

// deflateWindow is how far back a deflate block may reach into the data
// before it: a block can be copied where the output holds its content and
// this much of what came before it, as the input did.
const deflateWindow = 32 << 10

// GzipLayout is the block map of a gzip file's first member, filled in by
// a goroutine (the scan decodes every symbol, as fast as a decompression)
// while the caller goes on.
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
}

// ScanGzip reads the gzip header of r and starts scanning its blocks. A
// header the splicer does not know (reserved flags, a method other than
// deflate) is ErrUnhandled.
func ScanGzip(r io.ReaderAt, size int64) (*GzipLayout, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), int(min(size+16, 256<<10)))
	hdr, xfl, err := readGzipHeader(br)
	if err != nil {
		return nil, err
	}
	l := &GzipLayout{Header: hdr, Level: 6}
	switch xfl {
	case 2:
		l.Level = 9 // gzip -9, pigz -9, Go's BestCompression
	case 4:
		l.Level = 1
	}
	l.cond = sync.NewCond(&l.mu)
	s := &deflateScanner{br: bitReader{r: br}, start: int64(len(hdr)) * 8}
	go l.scan(s, size)
	return l, nil
}

func readGzipHeader(br *bufio.Reader) ([]byte, byte, error) {
	var hdr []byte
	take := func(n int) ([]byte, error) {
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("gzip: header: %w", io.ErrUnexpectedEOF)
		}
		hdr = append(hdr, b...)
		return b, nil
	}
	fixed, err := take(10)
	if err != nil {
		return nil, 0, err
	}
	if fixed[0] != 0x1f || fixed[1] != 0x8b {
		return nil, 0, errors.New("gzip: not a gzip header")
	}
	flg := fixed[3]
	if fixed[2] != 8 || flg&0xe0 != 0 {
		return nil, 0, fmt.Errorf("gzip: header method %d, flags %#x: %w", fixed[2], flg, ErrUnhandled)
	}
	if flg&4 != 0 {
		x, err := take(2)
		if err != nil {
			return nil, 0, err
		}
		if _, err := take(int(binary.LittleEndian.Uint16(x))); err != nil {
			return nil, 0, err
		}
	}
	for _, f := range []byte{8, 16} { // name, comment
		if flg&f == 0 {
			continue
		}
		s, err := br.ReadSlice(0)
		if err != nil {
			return nil, 0, fmt.Errorf("gzip: header: %w", io.ErrUnexpectedEOF)
		}
		hdr = append(hdr, s...)
	}
	if flg&2 != 0 {
		if _, err := take(2); err != nil {
			return nil, 0, err
		}
	}
	return hdr, fixed[8], nil
}

func (l *GzipLayout) scan(s *deflateScanner, size int64) {
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
	for !l.stop.Load() {
		b, err := s.next()
		if err == io.EOF {
			// The member's trailer follows, byte aligned.
			end := (s.start+s.br.pos()+7)/8 + 8
			l.more = end < size
			publish(true, nil)
			return
		}
		if err != nil {
			publish(true, err)
			return
		}
		batch = append(batch, b)
		if len(batch) == 64 {
			publish(false, nil)
		}
	}
	publish(true, errors.New("stopped"))
}

// Stop ends the scan early.
func (l *GzipLayout) Stop() { l.stop.Store(true) }

// Wait waits for the scan to end and reports whether data follows the
// first member and what error ended the scan, if any.
func (l *GzipLayout) Wait() (more bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.done {
		l.cond.Wait()
	}
	return l.more, l.err
}

// upTo returns the blocks known once the scan has covered off or ended.
func (l *GzipLayout) upTo(off int64) []DeflateBlock {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.done && l.scanned < off {
		l.cond.Wait()
	}
	return l.blocks
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

	pending    []byte
	chainIdx   int // pending[chainIdx:] is input from chainIn on; -1: none
	chainIn    int64
	chainStart int64 // where the chain began in the input
	next       int   // blocks before it are settled

	fw      *flate.Writer
	hist    []byte // the last deflateWindow bytes emitted
	started bool
	buf     []byte

	// Copied counts the blocks copied, Regions the stretches compressed.
	Copied, Regions int
}

// NewGzip returns a splicer writing to w, copying from the gzip file in
// whose first member lay describes.
func NewGzip(w io.Writer, in io.ReaderAt, lay *GzipLayout) *Gzip {
	bw := bufio.NewWriterSize(w, 256<<10)
	return &Gzip{w: bw, in: in, lay: lay, level: lay.Level, bw: bitWriter{w: bw}, chainIdx: -1}
}

func (s *Gzip) start() error {
	if !s.started {
		s.started = true
		_, err := s.w.Write(s.lay.Header)
		return err
	}
	return nil
}

// Write takes the next output run; src is its input offset, or -1.
func (s *Gzip) Write(p []byte, src int64) error {
	if err := s.start(); err != nil {
		return err
	}
	for len(p) > 0 {
		k := min(len(p), 1<<20)
		switch {
		case src < 0:
			s.chainIdx = -1
		case s.chainIdx < 0 || s.chainIn+int64(len(s.pending)-s.chainIdx) != src:
			s.chainIdx, s.chainIn, s.chainStart = len(s.pending), src, src
		}
		s.pending = append(s.pending, p[:k]...)
		if src >= 0 {
			src += int64(k)
		}
		p = p[k:]
		if err := s.settle(); err != nil {
			return err
		}
	}
	return nil
}

// settle emits what can be: each block the chain now covers with its
// window, and the new data before it, compressed.
func (s *Gzip) settle() error {
	for s.chainIdx >= 0 {
		end := s.chainIn + int64(len(s.pending)-s.chainIdx)
		blocks := s.lay.upTo(end)
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
		if i < len(blocks) && blocks[i].Start < end {
			keep = s.chainIdx + int(blocks[i].Start-s.chainIn)
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

func (s *Gzip) drop(n int) {
	s.pending = s.pending[:copy(s.pending, s.pending[n:])]
	if s.chainIdx >= 0 {
		s.chainIn += int64(max(0, n-s.chainIdx))
		s.chainIdx = max(0, s.chainIdx-n)
	}
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
	blocks := s.lay.upTo(n)
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
	cut := at - max(0, at-deflateWindow)
	s.remember(tail[:cut])
	s.pending = append(s.pending[:0], tail[cut:]...)
	s.chainIdx, s.chainIn, s.chainStart = 0, at, 0
	s.next = i
	return nil
}

// Close ends the deflate stream with a final block and writes the
// trailer: crc is the CRC-32 of the whole output, size its length.
func (s *Gzip) Close(crc uint32, size int64) error {
	if err := s.start(); err != nil {
		return err
	}
	s.chainIdx = -1
	if err := s.settle(); err != nil {
		return err
	}
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
