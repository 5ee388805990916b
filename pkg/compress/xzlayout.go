package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
)

// The layout of an .xz file, read from its end as `xz --list` reads it
// (src/xz/list.c, parse_indexes): footer, index, blocks, stream header.
// The sections named below are the .xz file format 1.2.1's
// (doc/xz-file-format.txt in the xz sources).

// xzBlock is a block of an .xz stream, as its index and header give it.
type xzBlock struct {
	offset     int64 // of the block header, in the file
	headerSize int64
	dataSize   int64 // the filters' compressed data: no padding, no check
	size       int64 // uncompressed
	check      byte  // the stream's check type (2.1.1.2)
	filters    []string
}

// end is where the block ends in the file: after its padding and check.
func (b xzBlock) end() int64 {
	return b.offset + pad4(b.headerSize+b.dataSize) + int64(xzCheckSize(b.check))
}

// checkOffset is where the block's check field starts.
func (b xzBlock) checkOffset() int64 { return b.offset + pad4(b.headerSize+b.dataSize) }

func pad4(n int64) int64 { return (n + 3) &^ 3 }

// ErrXzLayout says a file is not only .xz streams laid out as their
// indexes say, or not one that one xz a block can decode (a single block,
// a filter not passed on): xz then reads the file whole and names any damage.
var ErrXzLayout = errors.New("xz layout")

// maxXzIndex bounds the index read into memory: millions of records (2
// to 18 bytes each); a real rootfs has tens.
const maxXzIndex = 64 << 20

// xzCheckSize is the size of the check field of type t (2.1.1.2): 0, 4,
// 8, 16, 32, 32 and 64 bytes for types 0, 1-3, 4-6, 7-9, 10-12, 13-15.
func xzCheckSize(t byte) int {
	if t == 0 {
		return 0
	}
	return 4 << ((t - 1) / 3)
}

// XzStream is one stream of an .xz file as its index gives it: where it
// starts, its header (its flags: the check type) and a record per block.
// Block k starts at Offset + 12 plus the padded sizes of those before it.
type XzStream struct {
	Offset  int64
	End     int64 // where its footer ends
	Header  [12]byte
	Check   byte // the check type (2.1.1.2): 0 none, 1 CRC32, 4 CRC64, 10 SHA-256
	Records []XzRecord
}

// XzRecord is an index record (4.3): a block's unpadded and uncompressed
// sizes.
type XzRecord struct{ Unpadded, Size int64 }

// Padded is the block's size in the file: unpadded, rounded up to 4.
func (r XzRecord) Padded() int64 { return pad4(r.Unpadded) }

// XzStreams reads the .xz streams that fill r from start to end, in
// order, with their stream padding (2.2) in between, checking the CRC32
// of every stream header, index and footer; ErrXzLayout (wrapped, saying
// why) where r is not only that. Block headers are not read. The xz
// splice (splice.ScanXz) and the decoding of one xz a block share it.
func XzStreams(r io.ReaderAt, start, end int64) ([]XzStream, error) {
	var streams []XzStream
	pos := end
	for pos > start {
		var err error
		if pos, err = skipStreamPadding(r, start, pos); err != nil {
			return nil, err
		}
		st, err := xzStream(r, start, pos)
		if err != nil {
			return nil, err
		}
		streams = append(streams, st)
		pos = st.Offset
	}
	if len(streams) == 0 {
		return nil, layoutError("no stream")
	}
	slices.Reverse(streams)
	return streams, nil
}

// xzBlocks lists the blocks of the .xz streams that fill r from start to
// end, in order, each block header read and checked against the index.
func xzBlocks(r io.ReaderAt, start, end int64) ([]xzBlock, error) {
	streams, err := XzStreams(r, start, end)
	if err != nil {
		return nil, err
	}
	var all []xzBlock
	for _, st := range streams {
		off := st.Offset + 12
		for _, rec := range st.Records {
			b, err := readXzBlockHeader(r, off, st.Check, rec)
			if err != nil {
				return nil, fmt.Errorf("block %d: %w", len(all)+1, err)
			}
			all = append(all, b)
			off += rec.Padded()
		}
	}
	return all, nil
}

func layoutError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrXzLayout, fmt.Sprintf(format, args...))
}

// skipStreamPadding steps back over the zero bytes, in fours, that may
// follow a stream.
func skipStreamPadding(r io.ReaderAt, start, pos int64) (int64, error) {
	var b [4]byte
	for pos-4 >= start {
		if _, err := r.ReadAt(b[:], pos-4); err != nil {
			return 0, layoutError("reading at %d: %v", pos-4, err)
		}
		if b != [4]byte{} {
			return pos, nil
		}
		pos -= 4
	}
	return pos, nil
}

// xzStream reads the stream that ends at end: its footer and index
// (xzIndex), then its header.
func xzStream(r io.ReaderAt, start, end int64) (XzStream, error) {
	var st XzStream
	flags, records, indexStart, err := xzIndex(r, start, end)
	if err != nil {
		return st, err
	}
	var total int64
	for _, rec := range records {
		total += rec.Padded()
	}
	st.Offset = indexStart - total - 12
	if total > indexStart || st.Offset < start {
		return st, layoutError("the index's blocks (%d bytes) do not fit before it", total)
	}
	if _, err := r.ReadAt(st.Header[:], st.Offset); err != nil {
		return st, layoutError("reading the stream header: %v", err)
	}
	// 2.1.1: magic, flags, CRC32 of the flags; the flags are the footer's.
	h := st.Header
	if !bytes.Equal(h[:6], magicXz) || !bytes.Equal(h[6:8], flags) ||
		crc32.ChecksumIEEE(h[6:8]) != binary.LittleEndian.Uint32(h[8:12]) {
		return st, layoutError("no stream header at offset %d for the index at %d", st.Offset, indexStart)
	}
	st.End, st.Check, st.Records = end, flags[1], records
	return st, nil
}

// xzIndex reads the footer that ends at end and the index before it: the
// stream flags, the index's records and where the index starts.
func xzIndex(r io.ReaderAt, start, end int64) (flags []byte, records []XzRecord, indexStart int64, err error) {
	if end-start < 12+12+8 {
		return nil, nil, 0, layoutError("%d bytes before offset %d are too few for a stream", end-start, end)
	}
	var footer [12]byte
	if _, err := r.ReadAt(footer[:], end-12); err != nil {
		return nil, nil, 0, layoutError("reading the stream footer: %v", err)
	}
	// 2.1.2: CRC32 of backward size and flags, backward size, flags, magic.
	if string(footer[10:]) != "YZ" || crc32.ChecksumIEEE(footer[4:10]) != binary.LittleEndian.Uint32(footer[:4]) {
		return nil, nil, 0, layoutError("no stream footer ends at offset %d", end)
	}
	flags = footer[8:10]
	if flags[0] != 0 || flags[1] > 0x0F {
		return nil, nil, 0, layoutError("stream flags %x", flags)
	}
	indexSize := (int64(binary.LittleEndian.Uint32(footer[4:8])) + 1) * 4
	indexStart = end - 12 - indexSize
	if indexSize > maxXzIndex || indexStart < start+12 {
		return nil, nil, 0, layoutError("index of %d bytes before offset %d", indexSize, end-12)
	}
	index := make([]byte, indexSize)
	if _, err := r.ReadAt(index, indexStart); err != nil {
		return nil, nil, 0, layoutError("reading the index: %v", err)
	}
	records, err = parseXzIndex(index)
	return flags, records, indexStart, err
}

// parseXzIndex reads an index (4): indicator, record count, records,
// padding, CRC32.
func parseXzIndex(index []byte) ([]XzRecord, error) {
	body := index[:len(index)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(index[len(index)-4:]) || body[0] != 0 {
		return nil, layoutError("index damaged")
	}
	p := body[1:]
	count, p, err := xzVLI(p)
	if err != nil || count > uint64(len(p))/2 {
		return nil, layoutError("index record count")
	}
	records := make([]XzRecord, 0, count)
	for range count {
		var unpadded, size uint64
		if unpadded, p, err = xzVLI(p); err != nil {
			return nil, layoutError("index record: %v", err)
		}
		if size, p, err = xzVLI(p); err != nil {
			return nil, layoutError("index record: %v", err)
		}
		// 4.3.1: a block is at least an 8-byte header and a byte of data,
		// and no size may pass the VLI limit of 2^63.
		if unpadded < 9 || unpadded > 1<<62 || size > 1<<62 {
			return nil, layoutError("index record sizes %d, %d", unpadded, size)
		}
		records = append(records, XzRecord{Unpadded: int64(unpadded), Size: int64(size)})
	}
	if len(p) > 3 || len(bytes.Trim(p, "\x00")) > 0 {
		return nil, layoutError("index padding")
	}
	return records, nil
}

// xzVLI decodes a variable-length integer (1.2): at most 9 bytes, 7 bits
// each, least significant first, no superfluous zero byte at the end.
func xzVLI(b []byte) (uint64, []byte, error) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		v |= uint64(b[i]&0x7F) << (7 * i)
		if b[i]&0x80 == 0 {
			if i > 0 && b[i] == 0 {
				return 0, nil, errors.New("superfluous zero byte in an integer")
			}
			return v, b[i+1:], nil
		}
	}
	return 0, nil, errors.New("integer runs past its end")
}

// readXzBlockHeader reads the block header (3.1) at off and checks it
// against the index record.
func readXzBlockHeader(r io.ReaderAt, off int64, check byte, rec XzRecord) (xzBlock, error) {
	var first [1]byte
	if _, err := r.ReadAt(first[:], off); err != nil {
		return xzBlock{}, layoutError("reading the header at %d: %v", off, err)
	}
	if first[0] == 0 {
		return xzBlock{}, layoutError("an index indicator where the header should be, at %d", off)
	}
	size := (int64(first[0]) + 1) * 4
	h := make([]byte, size)
	if _, err := r.ReadAt(h, off); err != nil {
		return xzBlock{}, layoutError("reading the header at %d: %v", off, err)
	}
	if crc32.ChecksumIEEE(h[:size-4]) != binary.LittleEndian.Uint32(h[size-4:]) {
		return xzBlock{}, layoutError("header CRC32 at %d", off)
	}
	dataSize := rec.Unpadded - size - int64(xzCheckSize(check))
	if dataSize <= 0 {
		return xzBlock{}, layoutError("index unpadded size %d is smaller than the header and check", rec.Unpadded)
	}
	sizes, filters, err := parseXzBlockHeader(h[:size-4])
	if err != nil {
		return xzBlock{}, err
	}
	for i, want := range []int64{dataSize, rec.Size} {
		if sizes[i] >= 0 && sizes[i] != want {
			return xzBlock{}, layoutError("header says %d bytes, the index %d", sizes[i], want)
		}
	}
	args, err := xzFilterArgs(filters)
	if err != nil {
		return xzBlock{}, err
	}
	return xzBlock{offset: off, headerSize: size, dataSize: dataSize, size: rec.Size, check: check, filters: args}, nil
}

// xzFilter is one filter of a block's chain (3.1.5).
type xzFilter struct {
	id    uint64
	props []byte
}

// parseXzBlockHeader reads block header h, without its CRC32 (3.1): the
// compressed and uncompressed sizes it gives (-1 where it does not), and
// its filters.
func parseXzBlockHeader(h []byte) (sizes [2]int64, filters []xzFilter, err error) {
	flags, p := h[1], h[2:]
	if flags&0x3C != 0 {
		return sizes, nil, layoutError("reserved header flags %#x", flags)
	}
	sizes = [2]int64{-1, -1}
	for i, bit := range []byte{0x40, 0x80} {
		if flags&bit != 0 {
			var v uint64
			if v, p, err = xzVLI(p); err != nil {
				return sizes, nil, layoutError("header size: %v", err)
			}
			sizes[i] = int64(min(v, math.MaxInt64))
		}
	}
	for range int(flags&0x03) + 1 {
		id, rest, err := xzVLI(p)
		if err != nil {
			return sizes, nil, layoutError("filter id: %v", err)
		}
		n, rest, err := xzVLI(rest)
		if err != nil || n > uint64(len(rest)) {
			return sizes, nil, layoutError("filter properties")
		}
		filters = append(filters, xzFilter{id, rest[:n]})
		p = rest[n:]
	}
	if len(bytes.Trim(p, "\x00")) > 0 {
		return sizes, nil, layoutError("header padding")
	}
	return sizes, filters, nil
}

// xzFilterArgs turns the filters into the options of `xz --format=raw`,
// for the chains a rootfs is compressed with: LZMA2 alone, or after one
// branch filter. Others (delta, custom filters) are left to xz reading
// the whole stream.
func xzFilterArgs(filters []xzFilter) ([]string, error) {
	bcj := map[uint64]string{0x04: "--x86", 0x05: "--powerpc", 0x06: "--ia64", 0x07: "--arm", 0x08: "--armthumb", 0x09: "--sparc", 0x0A: "--arm64"}
	var args []string
	for i, f := range filters {
		last := i == len(filters)-1
		switch {
		case f.id == 0x21 && last && len(f.props) == 1 && f.props[0] <= 37: // xz takes up to 1.5 GiB
			args = append(args, "--lzma2=dict="+sizeName(int64(lzma2DictSize(f.props[0])), ""))
		case bcj[f.id] != "" && !last && len(f.props) == 0:
			args = append(args, bcj[f.id])
		default:
			return nil, layoutError("filter %#x with %d bytes of properties", f.id, len(f.props))
		}
	}
	return args, nil
}

// lzma2DictSize decodes the LZMA2 dictionary size byte (5.3.1), below 40.
func lzma2DictSize(b byte) uint64 { return uint64(2|b&1) << (b/2 + 11) }
