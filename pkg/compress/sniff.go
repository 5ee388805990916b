package compress

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
)

// Magic numbers. Every signature is at least four bytes long, so inputs of
// up to three bytes are None: calling them garbage is the archive layer's
// job.
var (
	magicXz        = []byte{0xFD, '7', 'z', 'X', 'Z', 0x00}
	magicLz4Legacy = []byte{0x02, 0x21, 0x4C, 0x18} // 0x184C2102 little endian
	magicLz4Frame  = []byte{0x04, 0x22, 0x4D, 0x18} // 0x184D2204
	magicZstd      = []byte{0x28, 0xB5, 0x2F, 0xFD} // 0xFD2FB528
	magicLzop      = []byte{0x89, 'L', 'Z', 'O', 0x00, 0x0D, 0x0A, 0x1A, 0x0A}

	bzip2BlockMagic = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59} // BCD pi
	bzip2EOSMagic   = []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90} // BCD sqrt(pi)
)

// sniffLen is how many bytes Sniff wants to see; the longest signature is
// that of lzma-alone (13 bytes).
const sniffLen = 13

// isSkippable reports whether b starts with a skippable frame magic
// (0x184D2A50 to 0x184D2A5F). LZ4 and Zstandard share that range, so such a
// frame says nothing about which of the two follows.
func isSkippable(b []byte) bool {
	return len(b) >= 4 && b[0]&0xF0 == 0x50 && b[1] == 0x2A && b[2] == 0x4D && b[3] == 0x18
}

// Sniff reports the codec of the data buffered in br, peeking at no more
// than sniffLen bytes. Leading skippable frames are the caller's (NewReader
// discards them first). Data that matches no signature is None, for the
// caller to judge; a codec with no Decode (lzma, lzo) is an error wrapping
// ErrUnsupported.
func Sniff(br *bufio.Reader) (Codec, error) {
	b, err := peek(br, sniffLen)
	if err != nil {
		return None, err
	}
	return sniffBytes(b)
}

// peek returns up to n bytes, fewer at the end of the input.
func peek(br *bufio.Reader, n int) ([]byte, error) {
	b, err := br.Peek(n)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("compress: sniff: %w", err)
	}
	return b, nil
}

// sniffBytes matches the signatures of the table's rows, in its order,
// against the start of b.
func sniffBytes(b []byte) (Codec, error) {
	if len(b) < 4 {
		return None, nil
	}
	for c := range table {
		s := &table[c]
		switch {
		case s.Magic == nil || !s.Magic(b):
		case s.Decode == nil:
			return None, fmt.Errorf("compress: %s (%s) input: %w", s.Name, s.Format, ErrUnsupported)
		default:
			return Codec(c), nil
		}
	}
	return None, nil
}

// isGzip checks the two ID bytes, the only compression method (deflate) and
// that the reserved flag bits are clear, which gives four bytes of
// signature like the other formats.
func isGzip(b []byte) bool {
	return len(b) >= 4 && b[0] == 0x1F && b[1] == 0x8B && b[2] == 0x08 && b[3]&0xE0 == 0
}

// isBzip2 wants "BZh", a block size digit and then the magic of either a
// block or the end of stream: "BZh9" alone is plain text often enough (a tar
// member name, say) that four bytes would not do.
func isBzip2(b []byte) bool {
	if len(b) < 10 || b[0] != 'B' || b[1] != 'Z' || b[2] != 'h' || b[3] < '1' || b[3] > '9' {
		return false
	}
	return bytes.Equal(b[4:10], bzip2BlockMagic) || bytes.Equal(b[4:10], bzip2EOSMagic)
}

// isLzmaAlone recognises the header of `lzma -N` output, which has no magic
// number: the properties byte that every preset uses (lc=3 lp=0 pb=2), a
// dictionary size of 2^n or 2^n+2^(n-1) as the presets make them, and an
// uncompressed size that is either unknown (all ones) or plausible.
func isLzmaAlone(b []byte) bool {
	if len(b) < 13 || b[0] != 0x5D {
		return false
	}
	dict := binary.LittleEndian.Uint32(b[1:5])
	if dict < 1<<12 {
		return false
	}
	// Clear the top bit and the one below it: a preset size has nothing else.
	top := uint32(1) << (31 - bits.LeadingZeros32(dict))
	if rest := dict &^ top; rest != 0 && rest != top>>1 {
		return false
	}
	size := binary.LittleEndian.Uint64(b[5:13])
	return size == ^uint64(0) || size < 1<<48
}
