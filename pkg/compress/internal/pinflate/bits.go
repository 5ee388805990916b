package pinflate

import (
	"encoding/binary"
	"errors"
)

// errTruncated: the input ended inside the stream.
var errTruncated = errors.New("unexpected end of deflate stream")

// errCorrupt: the stream is not valid DEFLATE.
var errCorrupt = errors.New("corrupt deflate stream")

// bitReader reads a little-endian bit stream from src, 64 bits at a time
// where it can. Past the end it reads zero bits and counts them, so that
// the decoding loops need no bounds checks: over says the stream was
// truncated.
type bitReader struct {
	src  []byte
	pos  int // next byte of src to load
	bits uint64
	n    uint // valid bits in bits
	pad  int  // zero bytes loaded past the end of src
}

func newBitReader(src []byte, bitOff int64) bitReader {
	br := bitReader{src: src, pos: int(bitOff >> 3)}
	br.refill()
	br.consume(uint(bitOff & 7))
	return br
}

// refill tops bits up to at least 56 valid bits.
func (br *bitReader) refill() {
	if br.pos+8 <= len(br.src) {
		br.bits |= binary.LittleEndian.Uint64(br.src[br.pos:]) << br.n
		br.pos += int(63-br.n) >> 3
		br.n |= 56
		return
	}
	for br.n <= 56 {
		if br.pos < len(br.src) {
			br.bits |= uint64(br.src[br.pos]) << br.n
			br.pos++
		} else {
			br.pad++
		}
		br.n += 8
	}
}

func (br *bitReader) consume(k uint) {
	br.bits >>= k
	br.n -= k
}

// take returns the next k bits (k <= 32; refilled by the caller).
func (br *bitReader) take(k uint) uint32 {
	v := uint32(br.bits & (1<<k - 1))
	br.bits >>= k
	br.n -= k
	return v
}

// bitPos is the position of the next unread bit in src.
func (br *bitReader) bitPos() int64 {
	return int64(br.pos+br.pad)*8 - int64(br.n)
}

// over reports whether bits past the end of src were consumed.
func (br *bitReader) over() bool {
	return br.bitPos() > int64(len(br.src))*8
}

// alignByte drops the bits up to the next byte boundary.
func (br *bitReader) alignByte() {
	br.consume(br.n & 7)
}
