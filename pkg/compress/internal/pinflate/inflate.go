package pinflate

// symbol is what the decoder writes: bytes once the window is known,
// uint16 while it is not (a byte, or marker|i for byte i of the unknown
// 32 KiB window that precedes the decoding's start).
type symbol interface{ ~uint8 | ~uint16 }

const (
	windowSize = 1 << 15
	marker     = 0x8000
	maxMatch   = 258
)

// Block states of a decoder between calls.
const (
	atHeader = iota // at a block header (or at the end, if done)
	inHuffman
	inStored
)

// state is a decoder that can stop anywhere between two symbols, when its
// output is full, and go on from there.
type state struct {
	br        bitReader
	block     int
	final     bool // the current block is the stream's last
	done      bool // the last block has ended
	stored    int  // bytes left of a stored block
	lit, dist *table
	dynLit    table
	dynDist   table
	cl        table
	lens      [286 + 30]uint8
}

// blockStart reports whether the decoder is between two blocks, and the
// bit where the next one starts.
func (s *state) blockStart() (int64, bool) {
	return s.br.bitPos(), s.block == atHeader
}

// header reads a block header.
func (s *state) header() error {
	br := &s.br
	br.refill()
	s.final = br.take(1) == 1
	switch br.take(2) {
	case 0:
		br.alignByte()
		br.refill()
		n, nn := br.take(16), br.take(16)
		if n != ^nn&0xffff {
			return errCorrupt
		}
		s.block, s.stored = inStored, int(n)
	case 1:
		s.block, s.lit, s.dist = inHuffman, &fixedLit, &fixedDist
	case 2:
		if err := s.dynamic(); err != nil {
			return err
		}
		s.block, s.lit, s.dist = inHuffman, &s.dynLit, &s.dynDist
	default:
		return errCorrupt
	}
	if br.over() {
		return errTruncated
	}
	return nil
}

// codeOrder is the order of the code length code's lengths (RFC 1951 3.2.7).
var codeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamic reads the code lengths of a dynamic block, with
// klauspost/compress/flate's readHuffman's checks.
func (s *state) dynamic() error {
	br := &s.br
	br.refill()
	nlit := int(br.take(5)) + 257
	ndist := int(br.take(5)) + 1
	nclen := int(br.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return errCorrupt
	}
	var cl [19]uint8
	for i := range nclen {
		br.refill()
		cl[codeOrder[i]] = uint8(br.take(3))
	}
	if !s.cl.build(cl[:], clPayload[:], 7) {
		return errCorrupt
	}
	lens := s.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		br.refill()
		e := s.cl.decode(br)
		if e>>8&7 != kindLit {
			return errCorrupt
		}
		x := e >> 16
		if x < 16 {
			lens[i] = uint8(x)
			i++
			continue
		}
		var rep int
		var b uint8
		switch x {
		case 16:
			if i == 0 {
				return errCorrupt
			}
			rep, b = 3+int(br.take(2)), lens[i-1]
		case 17:
			rep = 3 + int(br.take(3))
		default:
			rep = 11 + int(br.take(7))
		}
		if i+rep > len(lens) {
			return errCorrupt
		}
		for range rep {
			lens[i] = b
			i++
		}
		if br.over() {
			return errTruncated
		}
	}
	if !s.dynLit.build(lens[:nlit], litPayload[:], litBits) ||
		!s.dynDist.build(lens[nlit:], distPayload[:], distBits) {
		return errCorrupt
	}
	return nil
}

// decode appends to out, whose elements before len(out) are the history
// that distances reach into, until out has no room for a longest match,
// the stream ends, or a block ends at or after bit stopAt. With
// markers, a distance before out's start gives a marker of the unknown
// window; without, it is an error.
func decode[T symbol](s *state, out []T, markers bool, stopAt int64) ([]T, error) {
	br := &s.br
	for !s.done {
		switch s.block {
		case atHeader:
			if br.bitPos() >= stopAt {
				return out, nil
			}
			if err := s.header(); err != nil {
				return out, err
			}
		case inStored:
			var err error
			if out, err = storedBytes(s, out); err != nil || s.block == inStored {
				return out, err
			}
		default:
			var err error
			if out, err = huffman(s, out, markers); err != nil || s.block == inHuffman {
				return out, err
			}
		}
		if s.block == atHeader && s.final {
			s.done = true
		}
	}
	return out, nil
}

// storedBytes copies what is left of a stored block, as far as out has room.
func storedBytes[T symbol](s *state, out []T) ([]T, error) {
	br := &s.br
	for s.stored > 0 && br.n >= 8 && len(out) < cap(out) {
		out = append(out, T(br.take(8)))
		s.stored--
	}
	if br.over() {
		return out, errTruncated
	}
	if s.stored > 0 && br.n < 8 {
		k := min(s.stored, cap(out)-len(out), len(br.src)-br.pos)
		for _, c := range br.src[br.pos : br.pos+k] {
			out = append(out, T(c))
		}
		br.pos += k
		s.stored -= k
		// A 64-bit refill leaves the bytes after the counted ones in
		// bits; they were just copied past.
		br.bits = 0
		if s.stored > 0 && br.pos == len(br.src) {
			return out, errTruncated
		}
		br.refill()
	}
	if s.stored == 0 {
		s.block = atHeader
	}
	return out, nil
}

// huffman decodes symbols of a Huffman block.
func huffman[T symbol](s *state, out []T, markers bool) ([]T, error) {
	br := &s.br
	lit, dist := s.lit, s.dist
	for cap(out)-len(out) >= maxMatch {
		br.refill()
		e := lit.decode(br)
		switch e >> 8 & 7 {
		case kindLit:
			out = append(out, T(e>>16))
			continue
		case kindLen:
		case kindEOB:
			s.block = atHeader
			if br.over() {
				return out, errTruncated
			}
			return out, nil
		default:
			return out, errCorrupt
		}
		length := int(e>>16 + br.take(uint(e>>4&15)))
		d := dist.decode(br)
		if d>>8&7 != kindLen {
			return out, errCorrupt
		}
		from := len(out) - int(d>>16+br.take(uint(d>>4&15)))
		if from < 0 {
			if !markers {
				return out, errCorrupt
			}
			for ; from < 0 && length > 0; from, length = from+1, length-1 {
				out = append(out, T(marker|(windowSize+from)))
			}
			if length == 0 {
				continue
			}
		}
		n := len(out)
		out = out[:n+length]
		if n-from >= length {
			copy(out[n:], out[from:from+length])
			continue
		}
		for i := range length {
			out[n+i] = out[from+i]
		}
	}
	if br.over() {
		return out, errTruncated
	}
	return out, nil
}
