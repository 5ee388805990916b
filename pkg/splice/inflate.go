package splice

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// inflater decodes a raw deflate stream block by block into a sliding
// window, reporting each block as DeflateBlock describes it. It is the one
// decoder of the input of a gzip splice (GzipReader: what the archive
// reader reads, with the block map the splicer needs, in one pass; or
// newScanner: the map alone), and of the check of its output (CheckGzip:
// a chunk from a block boundary, with its window from the expected plain
// text). It starts at any bit, with any window: the caller says where.
//
// This is a plain sequential inflate; a parallel one (speculative block
// starts) would sit beside it, not in it.
type inflater struct {
	src    *bufio.Reader // read in place (Peek, Discard): it is left just after what was decoded
	in     []byte        // what src buffers
	ip, ie int           // in[ip:ie] is unread input
	inBase int64         // file offset of in[0]
	acc    uint64        // bits, least significant first; above nb: the bytes at in[ip:]
	nb     uint

	out     []byte // history, then new output
	o, ho   int    // out[:o] is decoded; out[ho:o] not yet handed out
	outBase int64  // uncompressed offset of out[0]

	state     int // stHeader, stHuff, stStored, stDone
	stored    int // bytes left in a stored block
	cur       DeflateBlock
	lit, dist *huffman
	dyn       [2]huffman

	// onBlock, when set, sees each block once it has ended.
	onBlock func(b DeflateBlock, f *inflater)
	// stopAt: decode returns errStopped after the first block to end at
	// or past this uncompressed offset (0: never).
	stopAt int64
}

const (
	stHeader = iota
	stHuff
	stStored
	stDone
)

const (
	inflateOut = 512 << 10
	maxMatch   = 258
)

var errStopped = fmt.Errorf("stopped at a block end")

// newInflater reads src from file byte offset at, skipping skip bits (a
// stream that begins inside a byte), with dict as the 32 KiB (or less, at
// the start) before uncompressed offset off.
func newInflater(src *bufio.Reader, at int64, skip uint, dict []byte, off int64) (*inflater, error) {
	f := &inflater{src: src, inBase: at}
	f.out = make([]byte, deflateWindow+inflateOut)
	f.o = copy(f.out, dict[max(0, len(dict)-deflateWindow):])
	f.ho = f.o
	f.outBase = off - int64(f.o)
	if skip > 0 {
		f.refill()
		if f.nb < skip {
			return nil, f.corrupt(io.ErrUnexpectedEOF)
		}
		f.acc >>= skip
		f.nb -= skip
	}
	return f, nil
}

// bitPos is the file bit of the next bit to decode.
func (f *inflater) bitPos() int64 { return (f.inBase+int64(f.ip))*8 - int64(f.nb) }

// offset is the uncompressed offset of what is decoded next.
func (f *inflater) offset() int64 { return f.outBase + int64(f.o) }

func (f *inflater) corrupt(err error) error {
	return fmt.Errorf("%w at bit %d: %w", errDeflate, f.bitPos(), err)
}

// fill takes what is read as read from src, and looks at what it holds
// next; false when nothing more comes.
func (f *inflater) fill() bool {
	f.release()
	if f.src.Buffered() == 0 {
		_, _ = f.src.Peek(1)
	}
	n := f.src.Buffered()
	if n < 8 {
		// A few bytes: as many as src holds, if more come.
		n = f.src.Size()
	}
	b, _ := f.src.Peek(n)
	f.in, f.ip, f.ie = b, 0, len(b)
	return len(b) > 0
}

// release tells src the bytes decoded so far are taken.
func (f *inflater) release() {
	_, _ = f.src.Discard(f.ip)
	f.inBase += int64(f.ip)
	f.in, f.ip, f.ie = f.in[f.ip:f.ie], 0, f.ie-f.ip
}

// refill tops the accumulator up to at least 56 bits where the input has
// them. The fast path loads 8 bytes at once: bits above nb are the next
// input bytes, so loading them again ORs in the same values.
func (f *inflater) refill() {
	if f.ie-f.ip >= 8 {
		f.acc |= binary.LittleEndian.Uint64(f.in[f.ip:]) << f.nb
		f.ip += int(63-f.nb) >> 3
		f.nb |= 56
		return
	}
	for f.nb <= 56 {
		if f.ip == f.ie && !f.fill() {
			return
		}
		if f.ie-f.ip >= 8 {
			f.refill()
			return
		}
		f.acc |= uint64(f.in[f.ip]) << f.nb
		f.ip++
		f.nb += 8
	}
}

func (f *inflater) bits(k uint) (uint32, error) {
	if f.nb < k {
		f.refill()
		if f.nb < k {
			return 0, f.corrupt(io.ErrUnexpectedEOF)
		}
	}
	v := uint32(f.acc & (1<<k - 1))
	f.acc >>= k
	f.nb -= k
	return v, nil
}

// fixedLit and fixedDist are the fixed Huffman codes (RFC 1951, 3.2.6).
var fixedLit, fixedDist = fixedTables()

func fixedTables() (lit, dist huffman) {
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
	lit.init(l[:])
	var d [30]uint8
	for i := range d {
		d[i] = 5
	}
	dist.init(d[:])
	return lit, dist
}

// decode decodes until the output buffer is full, the stream ends (io.EOF)
// or stopAt is reached (errStopped), and returns the output not yet handed
// out, which the next call replaces.
func (f *inflater) decode() ([]byte, error) {
	if f.ho == f.o && f.o > len(f.out)-maxMatch-deflateWindow/2 {
		// Everything handed out: keep the window, drop the rest.
		k := copy(f.out, f.out[f.o-deflateWindow:f.o])
		f.outBase += int64(f.o - k)
		f.o, f.ho = k, k
	}
	var err error
	for err == nil && f.o < len(f.out)-maxMatch {
		switch f.state {
		case stHeader:
			err = f.header()
		case stHuff:
			err = f.huff()
		case stStored:
			err = f.copyStored()
		case stDone:
			err = io.EOF
		}
	}
	out := f.out[f.ho:f.o]
	f.ho = f.o
	return out, err
}

func (f *inflater) header() error {
	f.cur = DeflateBlock{Bit: f.bitPos(), Start: f.offset()}
	hdr, err := f.bits(3)
	if err != nil {
		return err
	}
	f.cur.Final = hdr&1 == 1
	switch hdr >> 1 {
	case 0:
		f.cur.Stored = true
		f.acc >>= f.nb % 8
		f.nb -= f.nb % 8
		lens, err := f.bits(32)
		if err != nil {
			return err
		}
		n := lens & 0xffff
		if lens>>16 != ^n&0xffff {
			return f.corrupt(fmt.Errorf("stored block length check"))
		}
		f.stored = int(n)
		f.state = stStored
	case 1:
		f.lit, f.dist = &fixedLit, &fixedDist
		f.state = stHuff
	case 2:
		if err := f.dynamic(); err != nil {
			return err
		}
		f.lit, f.dist = &f.dyn[0], &f.dyn[1]
		f.state = stHuff
	default:
		return f.corrupt(fmt.Errorf("block type 3"))
	}
	return nil
}

// endBlock closes the current block.
func (f *inflater) endBlock() error {
	f.cur.EndBit = f.bitPos()
	f.cur.Len = f.offset() - f.cur.Start
	f.state = stHeader
	if f.cur.Final {
		f.state = stDone
	}
	if f.onBlock != nil {
		f.onBlock(f.cur, f)
	}
	if f.stopAt > 0 && f.offset() >= f.stopAt {
		return errStopped
	}
	if f.cur.Final {
		return io.EOF
	}
	return nil
}

func (f *inflater) copyStored() error {
	for f.stored > 0 && f.nb >= 8 && f.o < len(f.out) {
		f.out[f.o] = byte(f.acc)
		f.o++
		f.acc >>= 8
		f.nb -= 8
		f.stored--
	}
	if f.nb == 0 {
		f.acc = 0 // the input is read directly from here
	}
	for f.stored > 0 && f.o < len(f.out)-maxMatch {
		if f.ip == f.ie && !f.fill() {
			return f.corrupt(io.ErrUnexpectedEOF)
		}
		k := copy(f.out[f.o:len(f.out)-maxMatch], f.in[f.ip:min(f.ie, f.ip+f.stored)])
		f.o += k
		f.ip += k
		f.stored -= k
	}
	if f.stored > 0 {
		return nil // the buffer is full: resumed by the next decode
	}
	return f.endBlock()
}

func (f *inflater) dynamic() error { return readCodes(f, &f.dyn[0], &f.dyn[1]) }

// sym decodes one symbol of h, the slow way for codes longer than the
// table's.
func (f *inflater) sym(h *huffman) (int, error) {
	if f.nb < 15 {
		f.refill()
	}
	return h.lookup(&f.acc, &f.nb)
}

// huff decodes a Huffman block's symbols until its end or a full buffer.
// The accumulator lives in locals on the fast path.
func (f *inflater) huff() error {
	out, o := f.out, f.o
	lim := len(out) - maxMatch
	lit, dist := f.lit, f.dist
	for o < lim {
		if f.nb < 48 {
			f.refill()
		}
		var sym int
		if e := lit.table[f.acc&(1<<huffFast-1)]; e != 0 && uint(e&15) <= f.nb {
			f.acc >>= e & 15
			f.nb -= uint(e & 15)
			sym = int(e >> 4)
		} else {
			f.o = o
			s, err := f.sym(lit)
			if err != nil {
				return err
			}
			sym = s
		}
		if sym < 256 {
			out[o] = byte(sym)
			o++
			continue
		}
		if sym == 256 {
			f.o = o
			return f.endBlock()
		}
		if sym > 285 {
			f.o = o
			return f.corrupt(fmt.Errorf("bad length code"))
		}
		sym -= 257
		k := uint(lenExtra[sym])
		if f.nb < k {
			f.o = o
			return f.corrupt(io.ErrUnexpectedEOF)
		}
		n := int(lenBase[sym]) + int(f.acc&(1<<k-1))
		f.acc >>= k
		f.nb -= k
		var d int
		if e := dist.table[f.acc&(1<<huffFast-1)]; e != 0 && uint(e&15) <= f.nb {
			f.acc >>= e & 15
			f.nb -= uint(e & 15)
			d = int(e >> 4)
		} else {
			f.o = o
			s, err := f.sym(dist)
			if err != nil {
				return err
			}
			d = s
		}
		if d >= 30 {
			f.o = o
			return f.corrupt(fmt.Errorf("bad distance code"))
		}
		k = uint(distExtra[d])
		if f.nb < k {
			f.refill()
			if f.nb < k {
				f.o = o
				return f.corrupt(io.ErrUnexpectedEOF)
			}
		}
		dd := int(distBase[d]) + int(f.acc&(1<<k-1))
		f.acc >>= k
		f.nb -= k
		if dd > o {
			f.o = o
			return f.corrupt(fmt.Errorf("distance too far back"))
		}
		from := o - dd
		if dd >= n {
			copy(out[o:o+n], out[from:from+n])
		} else {
			// Overlapping: each copy doubles what can be copied next.
			for c := 0; c < n; {
				c += copy(out[o+c:o+n], out[from:o+c])
			}
		}
		o += n
	}
	f.o = o
	return nil
}
