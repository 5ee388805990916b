package splice

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
)

// GzipPoint is a block boundary of a deflate stream, with what a decoder
// needs to start there: the bit, the uncompressed offset and the window
// (the 32 KiB of plain text before it, or less at the start).
type GzipPoint struct {
	Bit, Off int64
	Window   []byte
}

// Where a spliced output's check may start a chunk: at most maxPoints
// points, pointGap apart at first, the gap doubled (and every other point
// dropped) each time they would be more. With their windows that is at
// most maxPoints*32 KiB = 2 MiB, whatever the size of the output.
const maxPoints = 64

var pointGap int64 = 4 << 20 // a variable for the tests, which want many chunks

type pointSet struct {
	mu  sync.Mutex
	pts []GzipPoint
	gap int64
}

// add takes a point if it is far enough from the last; window is only
// called then.
func (p *pointSet) add(bit, off int64, window func() []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gap == 0 {
		p.gap = pointGap
	}
	if n := len(p.pts); n > 0 && off-p.pts[n-1].Off < p.gap {
		return
	}
	var w []byte
	if window != nil {
		w = window()
	}
	p.pts = append(p.pts, GzipPoint{Bit: bit, Off: off, Window: w})
	if len(p.pts) > maxPoints {
		k := 0
		for i := 0; i < len(p.pts); i += 2 {
			p.pts[k] = p.pts[i]
			k++
		}
		clear(p.pts[k:])
		p.pts = p.pts[:k]
		p.gap *= 2
	}
}

func (p *pointSet) list() []GzipPoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]GzipPoint(nil), p.pts...)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// bitPos is the output bit the next bit goes to.
func (s *Gzip) bitPos() int64 {
	return (s.cw.n+int64(s.w.Buffered()))*8 + int64(s.bw.n)
}

// histWindow copies the splicer's window, for a point.
func (s *Gzip) histWindow() []byte { return append([]byte(nil), s.window()...) }

// GzipCell is the span of plain text each CRC-32 of GzipCells covers: a
// check names the cell that differs.
const GzipCell = 1 << 20

// GzipCells takes the CRC-32 of every GzipCell bytes of a plain text as it
// is written: what a spliced output is checked against, 4 bytes a MiB.
type GzipCells struct {
	crcs []uint32
	cur  uint32
	fill int64
}

func (c *GzipCells) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(int64(len(p)), GzipCell-c.fill)
		c.cur = crc32.Update(c.cur, crc32.IEEETable, p[:k])
		c.fill += k
		p = p[k:]
		if c.fill == GzipCell {
			c.crcs = append(c.crcs, c.cur)
			c.cur, c.fill = 0, 0
		}
	}
	return n, nil
}

// Len is the length of the text written.
func (c *GzipCells) Len() int64 { return int64(len(c.crcs))*GzipCell + c.fill }

// Sum is the CRC-32 of the whole text: the gzip trailer's.
func (c *GzipCells) Sum() uint32 {
	var sum uint32
	for _, x := range c.crcs {
		sum = crc32Combine(sum, x, GzipCell)
	}
	return crc32Combine(sum, c.cur, c.fill)
}

func (c *GzipCells) cell(i int) (uint32, int64) {
	if i < len(c.crcs) {
		return c.crcs[i], GzipCell
	}
	return c.cur, c.fill
}

// crc32Combine is the CRC-32 of A then B from crc1 of A, crc2 of B and
// len2, B's length: zlib's crc32_combine method (crc32.c), the CRC of len2
// zero bytes applied to crc1 as a matrix over GF(2), squared up.
func crc32Combine(crc1, crc2 uint32, len2 int64) uint32 {
	if len2 <= 0 {
		return crc1
	}
	var even, odd [32]uint32
	odd[0] = crc32.IEEE
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for {
		gf2Square(&even, &odd)
		if len2&1 != 0 {
			crc1 = gf2Times(&even, crc1)
		}
		len2 >>= 1
		if len2 == 0 {
			break
		}
		gf2Square(&odd, &even)
		if len2&1 != 0 {
			crc1 = gf2Times(&odd, crc1)
		}
		len2 >>= 1
		if len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(sq, mat *[32]uint32) {
	for n := range 32 {
		sq[n] = gf2Times(mat, mat[n])
	}
}

// piece is the CRC-32 of a run of one cell's bytes.
type piece struct {
	cell int
	crc  uint32
	n    int64
}

// chunkResult is what one chunk of the check found.
type chunkResult struct {
	pieces []piece
	err    error
}

// CheckGzip checks a spliced output, out (size bytes), against want, the
// cells of what was written, in chunks on workers goroutines: each chunk
// starts at one of points (GzipSplicer.Points), decodes with the window
// taken from the expected text, and must end exactly at the next point's
// bit and offset; the last ends with the final block, the trailer (CRC-32
// and length of want) and the end of the file. Problems are reported in
// stream order, naming the offset. Memory: one inflate buffer (about 600
// KiB) per worker, and the points.
func CheckGzip(out io.ReaderAt, size int64, points []GzipPoint, want *GzipCells, workers int) error {
	if len(points) == 0 || points[0].Off != 0 {
		return errors.New("gzip check: no starting point")
	}
	hdr, err := readGzipHeader(bufio.NewReaderSize(io.NewSectionReader(out, 0, size), 64<<10))
	if err != nil {
		return err
	}
	if int64(len(hdr))*8 != points[0].Bit {
		return fmt.Errorf("its header is %d bytes, not %d", len(hdr), points[0].Bit/8)
	}
	total := want.Len()
	res := make([]chunkResult, len(points))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Go(func() {
			for k := range next {
				res[k] = checkChunk(out, size, points, k, want)
			}
		})
	}
	for k := range points {
		next <- k
	}
	close(next)
	wg.Wait()
	m := cellMerge{want: want}
	for k, r := range res {
		for _, p := range r.pieces {
			if err := m.add(p); err != nil {
				return err
			}
		}
		if r.err != nil {
			return fmt.Errorf("the chunk at uncompressed offset %d (bit %d): %w", points[k].Off, points[k].Bit, r.err)
		}
	}
	if err := m.flush(); err != nil {
		return err
	}
	if m.seen != total {
		return fmt.Errorf("it decompresses to %d bytes, not the %d written", m.seen, total)
	}
	return nil
}

// cellMerge joins the pieces of each cell, in order, and compares.
type cellMerge struct {
	want *GzipCells
	cell int
	crc  uint32
	n    int64
	seen int64
}

func (m *cellMerge) add(p piece) error {
	if p.cell != m.cell {
		if err := m.flush(); err != nil {
			return err
		}
		m.cell, m.crc, m.n = p.cell, 0, 0
	}
	m.crc = crc32Combine(m.crc, p.crc, p.n)
	m.n += p.n
	m.seen += p.n
	return nil
}

func (m *cellMerge) flush() error {
	if m.n == 0 {
		return nil
	}
	crc, n := m.want.cell(m.cell)
	if crc != m.crc || n != m.n {
		from := int64(m.cell) * GzipCell
		return fmt.Errorf("bytes %d to %d decompress to other bytes than were written", from, from+max(n, m.n))
	}
	m.n = 0
	return nil
}

// checkChunk decodes chunk k.
func checkChunk(out io.ReaderAt, size int64, points []GzipPoint, k int, want *GzipCells) chunkResult {
	p := points[k]
	last := k == len(points)-1
	end := want.Len()
	if !last {
		end = points[k+1].Off
	}
	var r chunkResult
	br := bufio.NewReaderSize(io.NewSectionReader(out, p.Bit/8, size-p.Bit/8), 64<<10)
	f, err := newInflater(br, p.Bit/8, uint(p.Bit%8), p.Window, p.Off)
	if err != nil {
		r.err = err
		return r
	}
	if !last {
		f.stopAt = end
	}
	off := p.Off
	for {
		b, err := f.decode()
		r.pieces = addPieces(r.pieces, off, b)
		off += int64(len(b))
		if off > end {
			r.err = fmt.Errorf("it decodes past offset %d, where the next chunk starts", end)
			return r
		}
		switch {
		case err == nil:
			continue
		case err == errStopped:
			q := points[k+1]
			if off == q.Off && f.bitPos() < q.Bit && !f.cur.Final {
				continue // empty blocks (a flush's) may come before the point
			}
			if off != q.Off || f.bitPos() != q.Bit || f.cur.Final {
				r.err = fmt.Errorf("its blocks end at offset %d, bit %d (final: %v), not at the next chunk's bit %d", off, f.bitPos(), f.cur.Final, q.Bit)
			}
			return r
		case err == io.EOF && !last:
			r.err = fmt.Errorf("its final block ends at offset %d, before the next chunk", off)
			return r
		case err == io.EOF:
			r.err = checkTrailer(f, want, off)
			return r
		default:
			r.err = err
			return r
		}
	}
}

func addPieces(ps []piece, off int64, b []byte) []piece {
	for len(b) > 0 {
		c := int(off / GzipCell)
		k := min(int64(len(b)), int64(c+1)*GzipCell-off)
		crc := crc32.Update(0, crc32.IEEETable, b[:k])
		if n := len(ps); n > 0 && ps[n-1].cell == c {
			ps[n-1].crc = crc32Combine(ps[n-1].crc, crc, k)
			ps[n-1].n += k
		} else {
			ps = append(ps, piece{cell: c, crc: crc, n: k})
		}
		b, off = b[k:], off+k
	}
	return ps
}

// checkTrailer reads the trailer after the final block, which must end
// the file.
func checkTrailer(f *inflater, want *GzipCells, off int64) error {
	if off != want.Len() {
		return fmt.Errorf("its final block ends at offset %d, not %d", off, want.Len())
	}
	var tr [8]byte
	if err := f.take(tr[:]); err != nil {
		return fmt.Errorf("the trailer: %w", err)
	}
	crc, n := binary.LittleEndian.Uint32(tr[:4]), binary.LittleEndian.Uint32(tr[4:])
	if crc != want.Sum() || n != uint32(want.Len()) {
		return fmt.Errorf("the trailer says CRC %#08x, length %d: not %#08x, %d", crc, n, want.Sum(), uint32(want.Len()))
	}
	if f.fill() {
		return fmt.Errorf("bytes follow the trailer, at byte %d", f.inBase)
	}
	return nil
}
