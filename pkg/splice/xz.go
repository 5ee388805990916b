package splice

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// XzBlocks counts the blocks of the xz file r of size bytes, from the
// index at its end, so that an output can be written the way the input
// was: one block (`xz -9` single-threaded, as Buildroot runs it) or
// several (`xz -T0`). Only a file of one stream is counted; for several
// streams it reports ErrUnhandled.
func XzBlocks(r io.ReaderAt, size int64) (int, error) {
	end := size
	var pad [4]byte
	for end >= 4 {
		if _, err := r.ReadAt(pad[:], end-4); err != nil {
			return 0, err
		}
		if pad != [4]byte{} {
			break
		}
		end -= 4 // stream padding
	}
	if end < 24 {
		return 0, errors.New("xz: too short")
	}
	var foot [12]byte
	if _, err := r.ReadAt(foot[:], end-12); err != nil {
		return 0, err
	}
	if foot[10] != 'Y' || foot[11] != 'Z' || crc32.ChecksumIEEE(foot[4:10]) != binary.LittleEndian.Uint32(foot[:4]) {
		return 0, errors.New("xz: bad stream footer")
	}
	isize := (int64(binary.LittleEndian.Uint32(foot[4:8])) + 1) * 4
	at := end - 12 - isize
	if at < 12 || isize > 1<<30 {
		return 0, errors.New("xz: bad index size")
	}
	idx := make([]byte, min(isize, 1<<16))
	if _, err := r.ReadAt(idx, at); err != nil {
		return 0, err
	}
	if idx[0] != 0 {
		return 0, errors.New("xz: bad index")
	}
	n, k := binary.Uvarint(idx[1:])
	if k <= 0 {
		return 0, errors.New("xz: bad index")
	}
	// One stream: its blocks fill the space from the header to the index.
	var total int64
	p := idx[1+k:]
	for i := uint64(0); i < n; i++ {
		unpadded, k1 := binary.Uvarint(p)
		if k1 <= 0 {
			return 0, fmt.Errorf("xz: index of %d blocks: %w", n, ErrUnhandled)
		}
		_, k2 := binary.Uvarint(p[k1:])
		if k2 <= 0 {
			return 0, fmt.Errorf("xz: index of %d blocks: %w", n, ErrUnhandled)
		}
		p = p[k1+k2:]
		total += (int64(unpadded) + 3) &^ 3
	}
	if 12+total != at {
		return 0, fmt.Errorf("xz: several streams: %w", ErrUnhandled)
	}
	return int(n), nil
}

// XzLayout is what ScanXz reads of a one-stream xz file.
type XzLayout struct {
	Header [12]byte // the stream header, copied to the output
	Check  byte     // the stream's check type: 0 none, 1 CRC32, 4 CRC64, 10 SHA-256
	Blocks []Block
}

// Xz check types (the xz file format, 2.1.1.2).
const (
	XzCheckCRC32 = 0x01
	xzMagic      = "\xfd7zXZ\x00"
)

// ScanXz lists the blocks of the xz file r of size bytes from the index at
// its end, which gives each block's compressed (unpadded) and uncompressed
// size: blocks are independent, so each can be copied or recompressed
// alone. A file of several streams reports ErrUnhandled.
func ScanXz(r io.ReaderAt, size int64) (*XzLayout, error) {
	if size < 32 {
		return nil, errors.New("xz: too short")
	}
	lay := &XzLayout{}
	if _, err := r.ReadAt(lay.Header[:], 0); err != nil {
		return nil, err
	}
	h := lay.Header
	if string(h[:6]) != xzMagic || crc32.ChecksumIEEE(h[6:8]) != binary.LittleEndian.Uint32(h[8:12]) || h[6] != 0 || h[7]&0xf0 != 0 {
		return nil, errors.New("xz: bad stream header")
	}
	lay.Check = h[7]
	end := size
	var pad [4]byte
	for end >= 4 {
		if _, err := r.ReadAt(pad[:], end-4); err != nil {
			return nil, err
		}
		if pad != [4]byte{} {
			break
		}
		end -= 4 // stream padding
	}
	if end < 32 {
		return nil, errors.New("xz: too short")
	}
	var foot [12]byte
	if _, err := r.ReadAt(foot[:], end-12); err != nil {
		return nil, err
	}
	if foot[10] != 'Y' || foot[11] != 'Z' || crc32.ChecksumIEEE(foot[4:10]) != binary.LittleEndian.Uint32(foot[:4]) {
		return nil, errors.New("xz: bad stream footer")
	}
	if foot[8] != h[6] || foot[9] != h[7] {
		return nil, errors.New("xz: stream flags of header and footer differ")
	}
	isize := (int64(binary.LittleEndian.Uint32(foot[4:8])) + 1) * 4
	at := end - 12 - isize
	if at < 12 || isize > 64<<20 {
		return nil, errors.New("xz: bad index size")
	}
	idx := make([]byte, isize)
	if _, err := r.ReadAt(idx, at); err != nil {
		return nil, err
	}
	if idx[0] != 0 || crc32.ChecksumIEEE(idx[:isize-4]) != binary.LittleEndian.Uint32(idx[isize-4:]) {
		return nil, errors.New("xz: bad index")
	}
	p := idx[1 : isize-4]
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(isize) {
		return nil, errors.New("xz: bad index")
	}
	p = p[k:]
	off, start := int64(12), int64(0)
	for i := uint64(0); i < n; i++ {
		unpadded, k1 := binary.Uvarint(p)
		if k1 <= 0 {
			return nil, errors.New("xz: bad index")
		}
		ulen, k2 := binary.Uvarint(p[k1:])
		if k2 <= 0 {
			return nil, errors.New("xz: bad index")
		}
		p = p[k1+k2:]
		// A block header is at least 8 bytes, its check 0 to 32.
		if unpadded < 9 || unpadded > 1<<62 || ulen > 1<<62 {
			return nil, errors.New("xz: bad index record")
		}
		padded := (int64(unpadded) + 3) &^ 3
		if padded > at-off {
			// Less room than the records say: several streams, or a lie.
			return nil, fmt.Errorf("xz: blocks past the index: %w", ErrUnhandled)
		}
		lay.Blocks = append(lay.Blocks, Block{Offset: off, Size: padded, Start: start, Len: int64(ulen), Unpadded: int64(unpadded)})
		off += padded
		start += int64(ulen)
	}
	for _, c := range p {
		if c != 0 {
			return nil, errors.New("xz: bad index padding")
		}
	}
	if len(p) > 3 {
		return nil, errors.New("xz: bad index")
	}
	if off != at {
		return nil, fmt.Errorf("xz: several streams: %w", ErrUnhandled)
	}
	return lay, nil
}

// MaxLen is the largest uncompressed size of the input's blocks: the size
// of the blocks the input's settings cut (`xz -T0 -9`: 192 MiB).
func (l *XzLayout) MaxLen() int64 {
	var m int64
	for _, b := range l.Blocks {
		m = max(m, b.Len)
	}
	return m
}

// xzFormat writes new blocks with a compressor that makes a whole one-block
// stream of the same check type, from which the block is taken.
type xzFormat struct {
	lay     *XzLayout
	newSize int
	stream  func(src []byte) ([]byte, error)   // one-block xz stream of src
	decoder func(io.Reader) (io.Reader, error) // reads an xz stream
}

// emptyInputBlock is the size of the new blocks when the input's give none:
// 8 MiB, as a legacy lz4 block.
const emptyInputBlock = 8 << 20

// XzOptions are what NewXz needs beside the input: how to make and read
// xz streams, and how big and how many the new blocks are.
type XzOptions struct {
	// BlockSize is the most bytes a new block holds. 0, the largest block
	// of an input whose blocks are all empty (crafted, or an empty
	// archive), means emptyInputBlock.
	BlockSize int
	// Compress makes a one-block xz stream of its input with the input's
	// check type.
	Compress func([]byte) ([]byte, error)
	// Decode reads an xz stream, to reread the head of a block the output
	// starts inside.
	Decode func(io.Reader) (io.Reader, error)
	// Queue is how many new blocks at most wait to be written while others
	// compress: each holds up to BlockSize bytes.
	Queue int
}

// NewXz returns a splicer writing an xz stream to w, copying the blocks of
// the input in listed by ScanXz and compressing new ones as opt says.
func NewXz(w io.Writer, in io.ReaderAt, lay *XzLayout, opt XzOptions) *BlockSplicer {
	blockSize := opt.BlockSize
	if blockSize <= 0 {
		blockSize = emptyInputBlock
	}
	return newBlockSplicer(w, in, lay.Blocks, &xzFormat{lay: lay, newSize: blockSize, stream: opt.Compress, decoder: opt.Decode}, opt.Queue)
}

func (f *xzFormat) header() []byte { return f.lay.Header[:] }

func (f *xzFormat) newBlockSize() int { return f.newSize }

func (f *xzFormat) compress(src []byte, _ func([]byte) ([]byte, error)) ([]byte, int64, error) {
	st, err := f.stream(src)
	if err != nil {
		return nil, 0, err
	}
	lay, err := ScanXz(bytes.NewReader(st), int64(len(st)))
	if err != nil {
		return nil, 0, fmt.Errorf("xz: the compressor's output: %w", err)
	}
	if len(lay.Blocks) != 1 || lay.Blocks[0].Len != int64(len(src)) || lay.Check != f.lay.Check {
		return nil, 0, fmt.Errorf("xz: the compressor wrote %d block(s), check %d, for one block of %d bytes, check %d", len(lay.Blocks), lay.Check, len(src), f.lay.Check)
	}
	b := lay.Blocks[0]
	return st[b.Offset : b.Offset+b.Size], b.Unpadded, nil
}

func (f *xzFormat) decodeHead(in io.ReaderAt, b Block, n int64) ([]byte, error) {
	// The block alone, framed as a stream of its own.
	block := io.NewSectionReader(in, b.Offset, b.Size)
	tail := f.trailer([]Record{{b.Unpadded, b.Len}})
	d, err := f.decoder(io.MultiReader(bytes.NewReader(f.lay.Header[:]), block, bytes.NewReader(tail)))
	if err != nil {
		return nil, fmt.Errorf("xz: rereading block at %d: %w", b.Offset, err)
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(d, out); err != nil {
		return nil, fmt.Errorf("xz: rereading block at %d: %w", b.Offset, err)
	}
	if c, ok := d.(io.Closer); ok {
		c.Close()
	}
	return out, nil
}

// trailer is the index of the blocks written and the stream footer.
func (f *xzFormat) trailer(records []Record) []byte {
	idx := []byte{0}
	idx = binary.AppendUvarint(idx, uint64(len(records)))
	for _, r := range records {
		idx = binary.AppendUvarint(idx, uint64(r.Unpadded))
		idx = binary.AppendUvarint(idx, uint64(r.Len))
	}
	for len(idx)%4 != 0 {
		idx = append(idx, 0)
	}
	idx = binary.LittleEndian.AppendUint32(idx, crc32.ChecksumIEEE(idx))
	var foot [12]byte
	binary.LittleEndian.PutUint32(foot[4:8], uint32(len(idx)/4-1))
	foot[8], foot[9] = f.lay.Header[6], f.lay.Header[7]
	binary.LittleEndian.PutUint32(foot[:4], crc32.ChecksumIEEE(foot[4:10]))
	foot[10], foot[11] = 'Y', 'Z'
	return append(idx, foot[:]...)
}
