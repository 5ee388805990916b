package splice

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// GzipReader decodes one gzip member and maps its deflate blocks as it
// goes, so that a splice needs no second decode of the input: what the
// archive reader reads and the splicer's block map come from one inflate.
// It reads exactly the member from its bufio.Reader, nothing after it.
type GzipReader struct {
	lay  *GzipLayout
	br   *bufio.Reader
	f    *inflater
	crc  uint32
	size int64
	buf  []byte
	err  error
}

// NewGzipReader reads a gzip member's header from br and returns its
// reader, which fills Layout as it decodes. A header the splicer does not
// copy as it is (reserved flags, another method; a header CRC, which
// klauspost's reader checks; one longer than br's buffer), or no gzip
// header, is ErrUnhandled, with nothing read from br: the caller reads
// the member another way, which says what is wrong with it, if anything.
func NewGzipReader(br *bufio.Reader) (*GzipReader, error) {
	if b, _ := br.Peek(4); len(b) < 4 || b[3]&2 != 0 {
		return nil, ErrUnhandled
	}
	lay, err := newGzipLayout(br)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnhandled, err)
	}
	lay.onePass = true
	g := &GzipReader{lay: lay, br: br}
	start := int64(len(lay.Header))
	if g.f, err = newInflater(br, start, 0, nil, 0); err != nil {
		return nil, err
	}
	g.f.onBlock = func(b DeflateBlock, f *inflater) {
		lay.add(b)
		if !b.Final {
			lay.points.add(f.bitPos(), f.offset(), f.window)
		}
	}
	return g, nil
}

// Layout is the map of the member's blocks, as far as it is decoded.
func (g *GzipReader) Layout() *GzipLayout { return g.lay }

func (g *GzipReader) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		out, err := g.f.decode()
		g.crc = crc32.Update(g.crc, crc32.IEEETable, out)
		g.size += int64(len(out))
		g.buf = out
		switch {
		case err == io.EOF:
			g.err = g.trailer()
		case err != nil:
			g.err = readerErr(err, g.f)
		}
		if g.err != nil && g.err != io.EOF {
			g.lay.finish(g.err)
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// readerErr is what klauspost's reader would say: a short input, or
// corrupt input before an offset.
func readerErr(err error, f *inflater) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return io.ErrUnexpectedEOF
	}
	return flate.CorruptInputError(f.bitPos() / 8)
}

// trailer checks the CRC-32 and length after the final block.
func (g *GzipReader) trailer() error {
	var tr [8]byte
	if err := g.f.take(tr[:]); err != nil {
		return io.ErrUnexpectedEOF
	}
	if binary.LittleEndian.Uint32(tr[:4]) != g.crc || binary.LittleEndian.Uint32(tr[4:]) != uint32(g.size) {
		return gzip.ErrChecksum
	}
	g.lay.finish(nil)
	return io.EOF
}

// window is the history before the next byte to decode.
func (f *inflater) window() []byte {
	w := f.out[max(0, f.o-deflateWindow):f.o]
	return append([]byte(nil), w...)
}

// take reads len(p) bytes after the stream's end (a trailer): the whole
// bytes left in the accumulator, then the input, which is left just
// after them.
func (f *inflater) take(p []byte) error {
	f.acc >>= f.nb % 8
	f.nb -= f.nb % 8
	i := 0
	for ; i < len(p) && f.nb >= 8; i++ {
		p[i] = byte(f.acc)
		f.acc >>= 8
		f.nb -= 8
	}
	if f.nb > 0 {
		// More whole bytes than the trailer: give them back.
		f.ip -= int(f.nb / 8)
		f.nb, f.acc = 0, 0
	}
	f.acc = 0
	for i < len(p) {
		if f.ip == f.ie && !f.fill() {
			return io.ErrUnexpectedEOF
		}
		k := copy(p[i:], f.in[f.ip:f.ie])
		f.ip += k
		i += k
	}
	f.release()
	return nil
}
