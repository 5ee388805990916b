package splice

import (
	"errors"
	"fmt"
	"io"
)

// DeflateBlock is one block of a deflate stream, located to the bit.
type DeflateBlock struct {
	Bit, EndBit int64 // in the compressed file: the header's first bit, the bit after the block
	Start, Len  int64 // uncompressed span
	Stored      bool  // a stored block: its padding depends on where it lands
	Final       bool
}

// End is the uncompressed offset just past the block.
func (b DeflateBlock) End() int64 { return b.Start + b.Len }

var errDeflate = errors.New("malformed deflate data")

const huffFast = 10 // bits resolved by one table lookup

// huffman decodes one canonical code: a table for codes of up to huffFast
// bits, a walk over the counts (as zlib's puff does) for longer ones.
type huffman struct {
	table  [1 << huffFast]uint16 // symbol<<4 | length; 0: longer or unused
	count  [16]uint16
	symbol [288]uint16
}

func (h *huffman) init(lengths []uint8) error {
	h.count = [16]uint16{}
	for _, l := range lengths {
		h.count[l]++
	}
	left := 1
	for l := 1; l < 16; l++ {
		left = left<<1 - int(h.count[l])
		if left < 0 {
			return fmt.Errorf("%w: over-subscribed code", errDeflate)
		}
	}
	var offs [16]uint16
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	for s, l := range lengths {
		if l != 0 {
			h.symbol[offs[l]] = uint16(s)
			offs[l]++
		}
	}
	h.table = [1 << huffFast]uint16{}
	code := 0
	idx := 0
	for l := 1; l <= huffFast; l++ {
		for range int(h.count[l]) {
			s := h.symbol[idx]
			idx++
			rev := 0
			for i := range l {
				rev |= (code >> i & 1) << (l - 1 - i)
			}
			for k := rev; k < 1<<huffFast; k += 1 << l {
				h.table[k] = s<<4 | uint16(l)
			}
			code++
		}
		code <<= 1
	}
	return nil
}

// lookup decodes a symbol from the bits in acc (n of them): by the table,
// or for a longer code by walking the counts.
func (h *huffman) lookup(acc *uint64, n *uint) (int, error) {
	if e := h.table[*acc&(1<<huffFast-1)]; e != 0 && uint(e&15) <= *n {
		*acc >>= e & 15
		*n -= uint(e & 15)
		return int(e >> 4), nil
	}
	code, first, index := 0, 0, 0
	for l := 1; l < 16; l++ {
		if *n == 0 {
			return 0, fmt.Errorf("%w: %w", errDeflate, io.ErrUnexpectedEOF)
		}
		code |= int(*acc & 1)
		*acc >>= 1
		*n--
		count := int(h.count[l])
		if code-first < count {
			return int(h.symbol[index+code-first]), nil
		}
		index += count
		first = (first + count) << 1
		code <<= 1
	}
	return 0, fmt.Errorf("%w: bad code", errDeflate)
}

// readCodes reads a dynamic block's code lengths and builds its tables.
func readCodes(r *inflater, lit, dist *huffman) error {
	v, err := r.bits(14)
	if err != nil {
		return err
	}
	nlen, ndist, ncode := int(v&31)+257, int(v>>5&31)+1, int(v>>10)+4
	if nlen > 286 || ndist > 30 {
		return fmt.Errorf("%w: too many codes", errDeflate)
	}
	var cl [19]uint8
	for i := range ncode {
		x, err := r.bits(3)
		if err != nil {
			return err
		}
		cl[clOrder[i]] = uint8(x)
	}
	var h huffman
	if err := h.init(cl[:]); err != nil {
		return err
	}
	var lengths [286 + 30]uint8
	for i := 0; i < nlen+ndist; {
		sym, err := r.sym(&h)
		if err != nil {
			return err
		}
		if sym < 16 {
			lengths[i] = uint8(sym)
			i++
			continue
		}
		var rep uint8
		var n uint32
		switch sym {
		case 16:
			if i == 0 {
				return fmt.Errorf("%w: repeat with no length", errDeflate)
			}
			rep = lengths[i-1]
			n, err = r.bits(2)
			n += 3
		case 17:
			n, err = r.bits(3)
			n += 3
		default:
			n, err = r.bits(7)
			n += 11
		}
		if err != nil {
			return err
		}
		if i+int(n) > nlen+ndist {
			return fmt.Errorf("%w: too many lengths", errDeflate)
		}
		for range n {
			lengths[i] = rep
			i++
		}
	}
	if lengths[256] == 0 {
		return fmt.Errorf("%w: no end-of-block code", errDeflate)
	}
	if err := lit.init(lengths[:nlen]); err != nil {
		return err
	}
	return dist.init(lengths[nlen : nlen+ndist])
}

var (
	lenBase   = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra  = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase  = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	clOrder   = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)
