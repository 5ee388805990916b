package pinflate

import "math/bits"

// A table entry packs what decoding one Huffman symbol needs: the bits the
// code takes (low 4 bits; for a link, the primary table's bits), the extra
// bits that follow it (bits 4-7; for a link, the subtable's index bits),
// its kind (bits 8-10) and its value (bits 16-31: a literal, a length or
// distance base, a code length symbol, or a subtable's offset).
const (
	kindLit = iota
	kindLen // a length, or a distance in the distance table
	kindEOB
	kindLink
	kindBad
)

const badEntry = kindBad<<8 | 1

func entry(kind, extra, value uint32) uint32 { return value<<16 | kind<<8 | extra<<4 }

// table decodes one canonical Huffman code, LSB first, as DEFLATE stores it.
type table struct {
	t    []uint32
	mask uint64
}

// build sets up the table for the code lengths lens (symbol i has length
// lens[i]; 0: unused) with payload[i] the entry of symbol i. It refuses
// what klauspost/compress/flate's huffmanDecoder.init refuses: an
// over-subscribed or incomplete code, except one code of length 1; an
// empty code is accepted and fails when a symbol is decoded with it.
func (h *table) build(lens []uint8, payload []uint32, primary uint) bool {
	var count [16]int
	maxLen := 0
	for _, l := range lens {
		count[l]++
		maxLen = max(maxLen, int(l))
	}
	count[0] = 0
	left := 1
	for l := 1; l < 16; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
	}
	if left > 0 && maxLen != 0 && !(maxLen == 1 && count[1] == 1) {
		return false
	}
	pb := min(primary, uint(max(maxLen, 1)))
	size := 1 << pb
	h.t = h.t[:0]
	for range size {
		h.t = append(h.t, badEntry)
	}
	h.mask = uint64(size - 1)
	var next [16]int
	code := 0
	for l := 1; l < 16; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	sb := uint(0)
	if uint(maxLen) > pb {
		sb = uint(maxLen) - pb
	}
	for sym, l := range lens {
		if l == 0 {
			continue
		}
		c := next[l]
		next[l]++
		rev := int(bits.Reverse16(uint16(c)) >> (16 - l))
		e := payload[sym]
		if uint(l) <= pb {
			for i := rev; i < size; i += 1 << l {
				h.t[i] = e | uint32(l)
			}
			continue
		}
		prefix := rev & (size - 1)
		link := h.t[prefix]
		if link>>8&7 != kindLink {
			off := len(h.t)
			for range 1 << sb {
				h.t = append(h.t, badEntry)
			}
			link = entry(kindLink, uint32(sb), uint32(off)) | uint32(pb)
			h.t[prefix] = link
		}
		off := int(link >> 16)
		for i := rev >> pb; i < 1<<sb; i += 1 << (uint(l) - pb) {
			h.t[off+i] = e | uint32(uint(l)-pb)
		}
	}
	return true
}

// decode returns the entry of the next symbol and consumes its code; the
// caller has refilled br with at least 15 bits.
func (h *table) decode(br *bitReader) uint32 {
	e := h.t[br.bits&h.mask]
	if e>>8&7 == kindLink {
		br.consume(uint(e & 15))
		e = h.t[e>>16+uint32(br.bits&(1<<(e>>4&15)-1))]
	}
	br.consume(uint(e & 15))
	return e
}

var (
	lenBase   = [...]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra  = [...]uint32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase  = [...]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [...]uint32{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}

	litPayload  [288]uint32
	distPayload [32]uint32
	clPayload   [19]uint32

	fixedLit, fixedDist table
)

func init() {
	for i := range 256 {
		litPayload[i] = entry(kindLit, 0, uint32(i))
	}
	litPayload[256] = entry(kindEOB, 0, 0)
	for i := range lenBase {
		litPayload[257+i] = entry(kindLen, lenExtra[i], lenBase[i])
	}
	litPayload[286], litPayload[287] = badEntry&^15, badEntry&^15
	for i := range distBase {
		distPayload[i] = entry(kindLen, distExtra[i], distBase[i])
	}
	distPayload[30], distPayload[31] = badEntry&^15, badEntry&^15
	for i := range clPayload {
		clPayload[i] = entry(kindLit, 0, uint32(i))
	}
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	fixedLit.build(l[:], litPayload[:], litBits)
	var d [32]uint8
	for i := range d {
		d[i] = 5
	}
	fixedDist.build(d[:], distPayload[:], distBits)
}

const (
	litBits  = 10
	distBits = 8
)
