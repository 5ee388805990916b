package splice

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// XzLayout is what ScanXz reads of a one-stream xz file.
type XzLayout struct {
	Header [12]byte // the stream header, copied to the output
	Check  byte     // the stream's check type: 0 none, 1 CRC32, 4 CRC64, 10 SHA-256
	Blocks []Block
}

// XzCheckCRC32 is the CRC32 check type (the xz file format, 2.1.1.2).
const XzCheckCRC32 = 0x01

// ScanXz lists the blocks of the xz file r of size bytes from the index at
// its end, which gives each block's compressed (unpadded) and uncompressed
// size: blocks are independent, so each can be copied or recompressed
// alone. The layout is compress.XzStreams', every CRC32 of header, index
// and footer checked. A file of several streams reports ErrUnhandled.
func ScanXz(r io.ReaderAt, size int64) (*XzLayout, error) {
	streams, err := compress.XzStreams(r, 0, size)
	if err != nil {
		return nil, fmt.Errorf("xz: %w", err)
	}
	if len(streams) > 1 {
		return nil, fmt.Errorf("xz: %d streams: %w", len(streams), ErrUnhandled)
	}
	st := streams[0]
	lay := &XzLayout{Header: st.Header, Check: st.Check}
	off, start := int64(12), int64(0)
	for _, rec := range st.Records {
		lay.Blocks = append(lay.Blocks, Block{Offset: off, Size: rec.Padded(), Start: start, Len: rec.Size, Unpadded: rec.Unpadded})
		off += rec.Padded()
		start += rec.Size
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
	lay *XzLayout
	opt XzOptions
}

// XzOptions are what NewXz needs beside the input: how to make and read
// xz streams, and how big and how many the new blocks are.
type XzOptions struct {
	// BlockSize is the most bytes a new block holds. 0, the largest block
	// of an input whose blocks are all empty (crafted, or an empty
	// archive), means Lz4LegacyBlock's 8 MiB.
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
	if opt.BlockSize <= 0 {
		opt.BlockSize = Lz4LegacyBlock
	}
	return newBlockSplicer(w, in, lay.Blocks, &xzFormat{lay, opt}, opt.Queue)
}

func (f *xzFormat) header() []byte { return f.lay.Header[:] }

func (f *xzFormat) newBlockSize() int { return f.opt.BlockSize }

func (f *xzFormat) compress(src []byte, _ func([]byte) ([]byte, error)) ([]byte, int64, error) {
	st, err := f.opt.Compress(src)
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

func (f *xzFormat) decodeHead(dst []byte, in io.ReaderAt, b Block, n int64) ([]byte, error) {
	// The block alone, framed as a stream of its own.
	block := io.NewSectionReader(in, b.Offset, b.Size)
	tail := f.trailer([]Record{{b.Unpadded, b.Len}})
	d, err := f.opt.Decode(io.MultiReader(bytes.NewReader(f.lay.Header[:]), block, bytes.NewReader(tail)))
	if err != nil {
		return nil, fmt.Errorf("xz: rereading block at %d: %w", b.Offset, err)
	}
	out := dst[:n]
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
