package pinflate

import "encoding/binary"

// plausible is the cheap test of a candidate block start at bit pos of
// src: a non-final dynamic block whose counts are in range and whose code
// length code is complete (or one code of length 1), the checks that
// reject nearly every position before a header is built. A last block is
// not looked for: a chunk that holds only its middle is decoded from the
// chunk before.
func plausible(src []byte, pos int64) bool {
	i := int(pos >> 3)
	if i+16 > len(src) {
		return false
	}
	sh := uint(pos & 7)
	lo := binary.LittleEndian.Uint64(src[i:]) >> sh
	if sh != 0 {
		lo |= binary.LittleEndian.Uint64(src[i+8:]) << (64 - sh)
	}
	if lo&7 != 2<<1 || lo>>3&31 > 29 || lo>>8&31 > 29 {
		return false
	}
	nclen := int(lo>>13&15) + 4
	// The code length code's lengths take bits 17 to 17+3*nclen (at most
	// 74): the second word holds bits 64 and up.
	hi := binary.LittleEndian.Uint64(src[i+8:]) >> sh
	var kraft, count1 int
	for k := range nclen {
		at := uint(17 + 3*k)
		var l uint64
		switch {
		case at+3 <= 64:
			l = lo >> at & 7
		case at >= 64:
			l = hi >> (at - 64) & 7
		default:
			l = (lo>>at | hi<<(64-at)) & 7
		}
		if l != 0 {
			kraft += 1 << (7 - l)
			if l == 1 {
				count1++
			}
		}
	}
	return kraft == 128 || kraft == 64 && count1 == 1
}

// anyDynamicStart reports whether any of the 8 bit positions of b[0]
// starts with the bits of a non-final dynamic block (0, then 2 as two
// bits: 0 1 0 in stream order).
func anyDynamicStart(b []byte) bool {
	w := uint32(b[0]) | uint32(b[1])<<8
	// Position p matches when bits p..p+2 are 0,0,1 from the lowest:
	// value 4. Combine the three bit planes shifted to each position.
	m := ^w & ^(w >> 1) & (w >> 2)
	return m&0xff != 0
}
