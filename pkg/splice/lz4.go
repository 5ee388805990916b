package splice

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"

	"github.com/pierrec/lz4/v4"

	"github.com/rootfs-trim/rootfs-trim/internal/bigbuf"
)

// Lz4LegacyBlock is the uncompressed size of a full legacy lz4 block. The
// kernel's unlz4 (lib/decompress_unlz4.c) and `lz4 -d` accept any smaller
// block anywhere in the stream, which is what lets a splice put a short
// recompressed block between two copied ones.
const Lz4LegacyBlock = 8 << 20

const lz4LegacyMagic = 0x184C2102

// ErrUnhandled is wrapped by errors about valid inputs that a splicer does
// not handle; the caller falls back to full recompression.
var ErrUnhandled = errors.New("not handled by the splicer")

// Block is one independently decodable unit of a compressed input.
type Block struct {
	Offset int64 // in the compressed file, where the block's bytes start
	Size   int64 // compressed bytes, framing included
	Start  int64 // uncompressed offset of its first byte
	Len    int64 // uncompressed bytes
	// Unpadded is an xz block's size without its padding, for the index
	// (xzFormat.trailer).
	Unpadded int64
}

// End is the uncompressed offset just past the block.
func (b Block) End() int64 { return b.Start + b.Len }

// ScanLz4Legacy lists the blocks of the legacy lz4 stream r of size bytes.
// The uncompressed length of a block is not in its header, so each block's
// sequences are walked (without decoding the literals) to add it up.
func ScanLz4Legacy(r io.ReaderAt, size int64) ([]Block, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), int(min(size+16, 1<<20)))
	var blocks []Block
	var off, start int64
	var comp []byte
	bound := lz4.CompressBlockBound(Lz4LegacyBlock)
	for off < size {
		var hdr [4]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return nil, fmt.Errorf("lz4-legacy: block header at %d: %w", off, io.ErrUnexpectedEOF)
		}
		n := binary.LittleEndian.Uint32(hdr[:])
		switch {
		case n == lz4LegacyMagic:
			off += 4
			continue
		case off+4 == size:
			// The kernel's own build appends the uncompressed size.
			return nil, fmt.Errorf("lz4-legacy: size trailer: %w", ErrUnhandled)
		case n == 0 || int(n) > bound:
			return nil, fmt.Errorf("lz4-legacy: block at %d: bad size %d", off, n)
		case int64(n) > size-off-4:
			return nil, fmt.Errorf("lz4-legacy: block at %d: %w", off, io.ErrUnexpectedEOF)
		}
		if cap(comp) < int(n) {
			comp = make([]byte, n)
		}
		comp = comp[:n]
		if _, err := io.ReadFull(br, comp); err != nil {
			return nil, fmt.Errorf("lz4-legacy: block at %d: %w", off, io.ErrUnexpectedEOF)
		}
		ulen, err := lz4DecodedLen(comp)
		if err != nil {
			return nil, fmt.Errorf("lz4-legacy: block at %d: %w", off, err)
		}
		blocks = append(blocks, Block{Offset: off, Size: 4 + int64(n), Start: start, Len: int64(ulen)})
		off += 4 + int64(n)
		start += int64(ulen)
	}
	return blocks, nil
}

var errLz4Block = errors.New("malformed block")

// lz4DecodedLen walks the sequences of an lz4 block and returns the size it
// decodes to, checking what the decoder would: lengths within the block,
// offsets within what was decoded, a last sequence of literals only.
func lz4DecodedLen(b []byte) (int, error) {
	i, n := 0, 0
	length := func(v int) (int, bool) {
		if v != 15 {
			return v, true
		}
		for i < len(b) {
			x := b[i]
			i++
			v += int(x)
			if x != 255 {
				return v, true
			}
			if v > Lz4LegacyBlock {
				return 0, false
			}
		}
		return 0, false
	}
	for {
		if i >= len(b) {
			return 0, errLz4Block
		}
		tok := int(b[i])
		i++
		lit, ok := length(tok >> 4)
		if !ok || lit > len(b)-i {
			return 0, errLz4Block
		}
		i += lit
		n += lit
		if i == len(b) {
			break
		}
		if len(b)-i < 2 {
			return 0, errLz4Block
		}
		off := int(b[i]) | int(b[i+1])<<8
		i += 2
		if off == 0 || off > n {
			return 0, errLz4Block
		}
		ml, ok := length(tok & 15)
		if !ok {
			return 0, errLz4Block
		}
		n += ml + 4
		if n > Lz4LegacyBlock {
			return 0, errLz4Block
		}
	}
	if n > Lz4LegacyBlock {
		return 0, errLz4Block
	}
	return n, nil
}

// chain is what a splicer holds of the output, not yet written: pending,
// whose bytes from chainIdx on are the input's from chainIn on (chainIdx
// -1: none), so that an input block they come to cover can be copied.
// pending can hold two blocks of 8 MiB: it is held's buffer, from bigbuf.
type chain struct {
	pending  []byte
	chainIdx int
	chainIn  int64
	held     *bigbuf.Held
}

// newChain returns an empty chain whose buffer goes back to bigbuf once
// owner is unreachable, if release has not sent it back before.
func newChain[T any](owner *T) chain {
	return chain{chainIdx: -1, held: bigbuf.Hold(owner)}
}

// end is the input offset just past the chain.
func (c *chain) end() int64 { return c.chainIn + int64(len(c.pending)-c.chainIdx) }

// add appends run p, from input offset src (-1: new bytes), and reports
// whether it starts a chain.
func (c *chain) add(p []byte, src int64) (started bool) {
	switch {
	case src < 0:
		c.chainIdx = -1
	case c.chainIdx < 0 || c.end() != src:
		c.chainIdx, c.chainIn, started = len(c.pending), src, true
	}
	c.reserve(len(p))
	c.pending = append(c.pending, p...)
	return started
}

// reserve makes room for n more pending bytes: the buffer doubles, where
// append's growth by a quarter would copy megabytes into fresh memory at
// every step.
func (c *chain) reserve(n int) {
	if k := len(c.pending); k+n > cap(c.pending) {
		c.pending = c.held.Grow(k, max(k+n, 2*k))[:k]
	}
}

// release hands the buffer back once nothing is pending.
func (c *chain) release() {
	c.held.Release()
	c.pending = nil
}

// drop removes the first n pending bytes.
func (c *chain) drop(n int) {
	c.pending = c.pending[:copy(c.pending, c.pending[n:])]
	if c.chainIdx >= 0 {
		c.chainIn += int64(max(0, n-c.chainIdx))
		c.chainIdx = max(0, c.chainIdx-n)
	}
}

// eachMiB calls write with run p, from input offset src (-1: new bytes),
// a MiB at a time.
func eachMiB(p []byte, src int64, write func(p []byte, src int64) error) error {
	for len(p) > 0 {
		k := min(len(p), 1<<20)
		if err := write(p[:k], src); err != nil {
			return err
		}
		if src >= 0 {
			src += int64(k)
		}
		p = p[k:]
	}
	return nil
}

// BlockSplicer writes a stream of independent blocks (legacy lz4, xz) for
// an output whose bytes come, as runs, from a Matcher: each input block
// whose content the output holds whole and contiguous is copied from the
// input file; everything else is compressed anew in blocks of at most the
// format's new-block size.
type BlockSplicer struct {
	w      io.Writer
	in     io.ReaderAt
	blocks []Block
	format blockFormat

	chain
	started  bool
	queue    []*lz4Item
	sem      chan struct{} // a slot per core compressing
	closing  bool
	records  []Record // of the blocks written, in order
	maxQueue int

	// Copied and Compressed count the blocks written each way.
	Copied, Compressed int

	// CompressBlock, when set, compresses a new block (at most the
	// format's new-block size) and returns it with its framing, in place
	// of the format's own compressor: for lz4, the lz4 tool, which is
	// faster and smaller at -9 than pierrec.
	CompressBlock func(src []byte) ([]byte, error)
}

// Record is a written block as an xz index lists it.
type Record struct {
	Unpadded, Len int64
}

// blockFormat is what a BlockSplicer knows of a codec.
type blockFormat interface {
	header() []byte
	newBlockSize() int
	// compress turns src into one block, framing included, and tells its
	// unpadded size; it runs on several goroutines at once.
	compress(src []byte, custom func([]byte) ([]byte, error)) ([]byte, int64, error)
	// decodeHead decodes the first n uncompressed bytes of input block b
	// into dst, whose capacity holds the whole block, and returns them.
	decodeHead(dst []byte, in io.ReaderAt, b Block, n int64) ([]byte, error)
	trailer(records []Record) []byte
}

type lz4Format struct{ level lz4.CompressionLevel }

func (lz4Format) header() []byte {
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], lz4LegacyMagic)
	return magic[:]
}

func (lz4Format) newBlockSize() int { return Lz4LegacyBlock }

func (f lz4Format) compress(src []byte, custom func([]byte) ([]byte, error)) ([]byte, int64, error) {
	if custom != nil {
		out, err := custom(src)
		return out, int64(len(out)), err
	}
	dst := make([]byte, 4+lz4.CompressBlockBound(len(src)))
	var n int
	if f.level == lz4.Fast {
		n, _ = lz4.CompressBlock(src, dst[4:], nil)
	} else {
		n, _ = lz4.CompressBlockHC(src, dst[4:], f.level, nil, nil)
	}
	// With a destination of CompressBlockBound, a block always compresses
	// (to literals at worst); 0 would be a library bug.
	if n == 0 {
		return nil, 0, errors.New("compressing a block gave nothing")
	}
	binary.LittleEndian.PutUint32(dst, uint32(n))
	return dst[:4+n], int64(4 + n), nil
}

func (lz4Format) decodeHead(dst []byte, in io.ReaderAt, b Block, n int64) ([]byte, error) {
	comp := bigbuf.Get(int(b.Size))
	defer bigbuf.Put(comp)
	if _, err := in.ReadAt(comp, b.Offset); err != nil {
		return nil, fmt.Errorf("lz4-legacy: rereading block at %d: %w", b.Offset, err)
	}
	k, err := lz4.UncompressBlock(comp[4:], dst[:b.Len])
	if err != nil || int64(k) != b.Len {
		return nil, fmt.Errorf("lz4-legacy: block at %d changed since it was read", b.Offset)
	}
	return dst[:n], nil
}

func (lz4Format) trailer([]Record) []byte { return nil }

// NewLz4 returns a splicer writing to w, copying from the input in whose
// blocks are listed by ScanLz4Legacy. New blocks are compressed at level.
func NewLz4(w io.Writer, in io.ReaderAt, blocks []Block, level lz4.CompressionLevel) *BlockSplicer {
	return newBlockSplicer(w, in, blocks, lz4Format{level}, maxQueued)
}

func newBlockSplicer(w io.Writer, in io.ReaderAt, blocks []Block, f blockFormat, queue int) *BlockSplicer {
	s := &BlockSplicer{w: w, in: in, blocks: blocks, format: f, maxQueue: queue,
		sem: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))}
	s.chain = newChain(s)
	return s
}

func (s *BlockSplicer) start() error {
	if s.started {
		return nil
	}
	s.started = true
	_, err := s.w.Write(s.format.header())
	return err
}

// Prefix writes the input's first n uncompressed bytes, which must begin
// the output: the blocks within them are copied, and the rest of the last
// one decoded to start the pending data.
func (s *BlockSplicer) Prefix(n int64) error {
	if n == 0 {
		return nil
	}
	if err := s.start(); err != nil {
		return err
	}
	var at int64
	for _, b := range s.blocks {
		if b.End() > n {
			break
		}
		if err := s.copyBlock(b); err != nil {
			return err
		}
		at = b.End()
	}
	if at == n {
		return nil
	}
	i := sort.Search(len(s.blocks), func(i int) bool { return s.blocks[i].End() > at })
	if i == len(s.blocks) || s.blocks[i].Start != at {
		return fmt.Errorf("prefix of %d bytes is past the input's blocks", n)
	}
	s.pending = s.pending[:0]
	s.reserve(int(s.blocks[i].Len))
	head, err := s.format.decodeHead(s.pending, s.in, s.blocks[i], n-at)
	if err != nil {
		return err
	}
	s.pending = head
	s.chainIdx, s.chainIn = 0, at
	return nil
}

// Write takes the next output run; src is its input offset, or -1.
func (s *BlockSplicer) Write(p []byte, src int64) error {
	if err := s.start(); err != nil {
		return err
	}
	return eachMiB(p, src, func(p []byte, src int64) error {
		s.add(p, src)
		return s.settle()
	})
}

// settle writes what can be written: every block the chain of input bytes
// now covers whole, and the new data before it in full-size blocks.
func (s *BlockSplicer) settle() error {
	for {
		keep := 0 // pending[keep:] may yet be part of a copied block
		if s.chainIdx >= 0 {
			end := s.end()
			i := sort.Search(len(s.blocks), func(i int) bool { return s.blocks[i].Start >= s.chainIn })
			switch {
			case i < len(s.blocks) && s.blocks[i].End() <= end:
				b := s.blocks[i]
				at := s.chainIdx + int(b.Start-s.chainIn)
				if err := s.compress(s.pending[:at]); err != nil {
					return err
				}
				if err := s.copyBlock(b); err != nil {
					return err
				}
				s.drop(at + int(b.Len))
				s.chainIdx, s.chainIn = 0, b.End()
				continue
			case i < len(s.blocks) && s.blocks[i].Start < end:
				keep = s.chainIdx + int(s.blocks[i].Start-s.chainIn)
			default:
				keep = len(s.pending)
			}
		} else {
			keep = len(s.pending)
		}
		full := keep / s.format.newBlockSize() * s.format.newBlockSize()
		if full == 0 {
			return nil
		}
		if err := s.compress(s.pending[:full]); err != nil {
			return err
		}
		s.drop(full)
		return nil
	}
}

func (s *BlockSplicer) copyBlock(b Block) error {
	s.queue = append(s.queue, &lz4Item{copy: b})
	return s.drain(false)
}

// lz4Item is a block of the output in the making: a copy, or a new block
// being compressed on another core while the input is read on.
type lz4Item struct {
	copy     Block
	ulen     int64
	out      []byte
	unpadded int64
	err      error
	done     chan struct{}
}

// compress queues p as new blocks of at most the format's new-block size.
func (s *BlockSplicer) compress(p []byte) error {
	size := s.format.newBlockSize()
	for len(p) > 0 {
		k := min(len(p), size)
		src := bigbuf.Get(k)
		copy(src, p)
		it := &lz4Item{ulen: int64(k), done: make(chan struct{})}
		s.sem <- struct{}{}
		go func() {
			defer func() { <-s.sem; close(it.done) }()
			it.out, it.unpadded, it.err = s.format.compress(src, s.CompressBlock)
			bigbuf.Put(src)
		}()
		s.queue = append(s.queue, it)
		p = p[k:]
	}
	return s.drain(len(s.queue) > s.maxQueue)
}

// maxQueued bounds the blocks held while earlier ones compress.
const maxQueued = 4

// drain writes the finished items at the head of the queue; with wait, it
// waits for them until fewer than maxQueued remain (or none, at the end).
func (s *BlockSplicer) drain(wait bool) error {
	for len(s.queue) > 0 {
		it := s.queue[0]
		if it.done != nil {
			if !wait {
				select {
				case <-it.done:
				default:
					return nil
				}
			}
			<-it.done
			if it.err != nil {
				return it.err
			}
			if _, err := s.w.Write(it.out); err != nil {
				return err
			}
			s.records = append(s.records, Record{it.unpadded, it.ulen})
			s.Compressed++
		} else {
			if _, err := io.Copy(s.w, io.NewSectionReader(s.in, it.copy.Offset, it.copy.Size)); err != nil {
				return fmt.Errorf("copying block at %d: %w", it.copy.Offset, err)
			}
			s.records = append(s.records, Record{it.copy.Unpadded, it.copy.Len})
			s.Copied++
		}
		s.queue[0] = nil
		s.queue = s.queue[1:]
		if wait && len(s.queue) <= s.maxQueue && !s.closing {
			wait = false
		}
	}
	return nil
}

// Close writes the pending data.
func (s *BlockSplicer) Close() error {
	if err := s.start(); err != nil {
		return err
	}
	err := s.compress(s.pending)
	s.release()
	s.chainIdx = -1
	s.closing = true
	if derr := s.drain(true); err == nil {
		err = derr
	}
	if err != nil {
		return err
	}
	if t := s.format.trailer(s.records); len(t) > 0 {
		_, err = s.w.Write(t)
	}
	return err
}
