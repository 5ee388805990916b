package splice

import (
	"bufio"
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/flate"
)

// readOnePass decodes comp with NewGzipReader, and returns the text, the
// map it made and what is left in the reader after the member.
func readOnePass(t testing.TB, comp []byte) ([]byte, *GzipLayout, []byte, error) {
	t.Helper()
	br := bufio.NewReaderSize(bytes.NewReader(comp), 64<<10)
	r, err := NewGzipReader(br)
	if err != nil {
		return nil, nil, nil, err
	}
	lay := r.Layout()
	got, err := io.ReadAll(r)
	rest, _ := io.ReadAll(br)
	return got, lay, rest, err
}

// TestGzipReaderOnePass: the one-pass reader gives the text klauspost's
// reader gives, maps the blocks ScanGzip maps, and reads the member only.
func TestGzipReaderOnePass(t *testing.T) {
	in := corpus(11, 700<<10)
	for _, c := range []struct {
		name string
		comp []byte
	}{
		{"store", kgz(t, in, flate.NoCompression)},
		{"huffman", kgz(t, in, flate.HuffmanOnly)},
		{"kgz1", kgz(t, in, 1)},
		{"kgz9", kgz(t, in, 9)},
		{"std6", stdgz(t, in, 6)},
		{"gnu9", runTool(t, in, "gzip", "-9", "-n", "-c")},
		{"empty", kgz(t, nil, 9)},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := in
			if c.name == "empty" {
				want = nil
			}
			comp := append(append([]byte(nil), c.comp...), "next"...)
			got, lay, rest, err := readOnePass(t, comp)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("decoded %d bytes, differ from the %d compressed", len(got), len(want))
			}
			if string(rest) != "next" {
				t.Fatalf("left %q after the member, want %q", rest, "next")
			}
			scan, err := ScanGzip(bytes.NewReader(c.comp), int64(len(c.comp)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := scan.Wait(nil, 0); err != nil {
				t.Fatal(err)
			}
			blocks, known := lay.known()
			if diff := cmp.Diff(scan.blocks, blocks); diff != "" || known < int64(len(want)) {
				t.Fatalf("map (-ScanGzip +one pass), known to %d:\n%s", known, diff)
			}
		})
	}
}

// TestGzipReaderCorrupt: damage is an error, never a short text.
func TestGzipReaderCorrupt(t *testing.T) {
	in := corpus(12, 300<<10)
	comp := kgz(t, in, 6)
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"no trailer", func(b []byte) []byte { return b[:len(b)-8] }},
		{"crc", func(b []byte) []byte { b[len(b)-6] ^= 1; return b }},
		{"size", func(b []byte) []byte { b[len(b)-2] ^= 1; return b }},
	} {
		b := c.edit(append([]byte(nil), comp...))
		if _, _, _, err := readOnePass(t, b); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// spliceGzipOnePass is spliceGzip with the map made by the GzipReader
// that decodes the input, as apply reads it: the reader is only as far
// ahead as the Matcher has been fed, so the splicer often needs blocks the
// reader has not finished. It returns the output's points and cells too.
func spliceGzipOnePass(t testing.TB, comp, in, out []byte, chunk, window, removed int) ([]byte, *Gzip, *GzipCells) {
	t.Helper()
	br := bufio.NewReaderSize(bytes.NewReader(comp), 64<<10)
	r, err := NewGzipReader(br)
	if err != nil {
		t.Fatal(err)
	}
	decoded := 0
	fed := func(n int) {
		if n > decoded {
			k, err := io.CopyN(io.Discard, r, int64(n-decoded))
			decoded += int(k)
			if err != nil && err != io.EOF {
				t.Fatal(err)
			}
		}
	}
	var res bytes.Buffer
	var s *Gzip
	begin := func(n int64, m *Matcher) error {
		s = NewGzip(&res, bytes.NewReader(comp), r.Layout())
		return s.Prefix(n, m.Bytes)
	}
	if copied := driveFed(t, in, out, chunk, window, removed, fed, begin, func(p []byte, src int64) error { return s.Write(p, src) }); copied {
		return comp, nil, nil
	}
	var cells GzipCells
	cells.Write(out)
	if cells.Sum() != crc32.ChecksumIEEE(out) {
		t.Fatal("GzipCells.Sum is not the CRC-32 of the text")
	}
	if err := s.Close(cells.Sum(), int64(len(out))); err != nil {
		t.Fatal(err)
	}
	return res.Bytes(), s, &cells
}

func smallPoints(t testing.TB, gap int64) {
	was := pointGap
	pointGap = gap
	t.Cleanup(func() { pointGap = was })
}

// TestGzipSpliceOnePass: with the map from the one decode, the splice is
// byte for byte what it is with ScanGzip's, and the parallel check passes
// it, in many chunks.
func TestGzipSpliceOnePass(t *testing.T) {
	smallPoints(t, 32<<10)
	in := corpus(7, 600<<10)
	inputs := map[string][]byte{
		"klauspost -9": kgz(t, in, 9),
		"stdlib -6":    stdgz(t, in, 6),
		"huffman-only": stdgz(t, in, stdgzip.HuffmanOnly),
		"stored":       stdgz(t, in, stdgzip.NoCompression),
		"gzip -9 -n":   runTool(t, in, "gzip", "-9", "-n", "-c"),
	}
	edits := map[string][]edit{
		"start":    {{0, 300, ""}},
		"end":      {{len(in) - 200, 200, "a new tail, of some length, for the final block"}},
		"appended": {{len(in), 0, string(corpus(8, 100<<10))}},
		"middle":   {{300 << 10, 1000, ""}},
		"several":  {{10 << 10, 5, ""}, {150 << 10, 40 << 10, ""}, {400 << 10, 0, "inserted, long enough to be told from padding"}, {590 << 10, 3000, ""}},
	}
	for name, comp := range inputs {
		for ename, e := range edits {
			out := applyEdits(in, e)
			for _, chunk := range []int{110, 32 << 10} {
				want, _ := spliceGzip(t, comp, in, out, chunk, 4<<20, removedBy(e))
				got, s, cells := spliceGzipOnePass(t, comp, in, out, chunk, 4<<20, removedBy(e))
				if !bytes.Equal(got, want) {
					t.Fatalf("%s, %s, chunk %d: %d bytes, differ from the %d with ScanGzip's map", name, ename, chunk, len(got), len(want))
				}
				pts := s.Points()
				if len(pts) < 4 {
					t.Fatalf("%s, %s: %d points", name, ename, len(pts))
				}
				if err := CheckGzip(bytes.NewReader(got), int64(len(got)), pts, cells, 3); err != nil {
					t.Fatalf("%s, %s, chunk %d: %v", name, ename, chunk, err)
				}
			}
		}
	}
}

// TestCheckGzipCorrupt: a byte changed in one chunk of a spliced output
// fails the parallel check, which names that chunk's offset, or the MiB
// of text that differs, and never a later one first.
func TestCheckGzipCorrupt(t *testing.T) {
	smallPoints(t, 256<<10)
	in := corpus(21, 3<<20)
	comp := runTool(t, in, "gzip", "-9", "-n", "-c")
	out := applyEdits(in, []edit{{100 << 10, 500, ""}, {len(in), 0, "the end"}})
	got, s, cells := spliceGzipOnePass(t, comp, in, out, 64<<10, 4<<20, 500)
	pts := s.Points()
	if len(pts) < 8 {
		t.Fatalf("%d points", len(pts))
	}
	if err := CheckGzip(bytes.NewReader(got), int64(len(got)), pts, cells, 2); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, len(pts) / 2, len(pts) - 2} {
		bad := append([]byte(nil), got...)
		at := (pts[k].Bit/8 + pts[k+1].Bit/8) / 2
		bad[at] ^= 0x10
		err := CheckGzip(bytes.NewReader(bad), int64(len(bad)), pts, cells, 2)
		if err == nil {
			t.Fatalf("byte %d changed (chunk %d): the check passed", at, k)
		}
		chunkAt := fmt.Sprintf("uncompressed offset %d ", pts[k].Off)
		cellOK := false
		for c := pts[k].Off / GzipCell; c <= pts[k+1].Off/GzipCell; c++ {
			cellOK = cellOK || strings.Contains(err.Error(), fmt.Sprintf("bytes %d to", c*GzipCell))
		}
		if !strings.Contains(err.Error(), chunkAt) && !cellOK {
			t.Errorf("byte %d changed, in the chunk at offset %d: %v", at, pts[k].Off, err)
		}
	}
}

// FuzzCheckGzip: the parallel check and the sequential one (klauspost's
// reader, the text compared) agree on every spliced output, whatever byte
// is changed in it.
func FuzzCheckGzip(f *testing.F) {
	f.Add(uint64(1), uint16(3000), uint8(9), []byte{10, 20, 0, 200, 5, 5}, uint32(0), uint8(0))
	f.Add(uint64(2), uint16(8000), uint8(1), []byte{0, 0, 0, 255, 255, 255}, uint32(5000), uint8(1))
	f.Add(uint64(3), uint16(4000), uint8(0), []byte{128, 1, 1}, uint32(77), uint8(0x80))
	f.Fuzz(func(t *testing.T, seed uint64, size uint16, level uint8, ops []byte, pos uint32, flip uint8) {
		smallPoints(t, 4<<10)
		in := corpus(seed, int(size)*16)
		edits := fuzzEdits(in, seed, ops)
		out := applyEdits(in, edits)
		comp := kgz(t, in, int(level%11)-2)
		got, s, cells := spliceGzipOnePass(t, comp, in, out, 1+int(seed%5000), 64<<10, removedBy(edits))
		if s == nil {
			return // a copy of the input: nothing to check
		}
		bad := append([]byte(nil), got...)
		bad[int(pos)%len(bad)] ^= flip
		seq := sequentialCheck(bad, out)
		par := CheckGzip(bytes.NewReader(bad), int64(len(bad)), s.Points(), cells, 2)
		if (seq == nil) != (par == nil) {
			t.Fatalf("byte %d ^ %#x: sequential check %v, parallel %v", int(pos)%len(bad), flip, seq, par)
		}
	})
}

// sequentialCheck is the check before rename as it was: the whole output
// decoded by klauspost's reader and compared with what was written.
func sequentialCheck(gz, want []byte) error {
	zr, err := kgzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return err
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("differs")
	}
	return nil
}

// FuzzGzipReader: on any bytes, the one-pass reader (apply's only decode
// of a gzip segment) gives what klauspost's reader gives for one member:
// the same text where that succeeds, an error where it fails, and no
// panic. A header it hands back (ErrUnhandled) goes klauspost's way in
// apply, so there is nothing to compare.
func FuzzGzipReader(f *testing.F) {
	// Small seeds: Go's fuzzer minimizes every input that finds new
	// code, at a cost that grows with the square of its length.
	in := corpus(5, 3<<10)
	for _, level := range []int{flate.NoCompression, flate.HuffmanOnly, 1, 6, 9} {
		var b bytes.Buffer
		zw, _ := kgzip.NewWriterLevel(&b, level)
		zw.Write(in)
		zw.Close()
		f.Add(b.Bytes())
		f.Add(b.Bytes()[:b.Len()/2])
		f.Add(append(b.Bytes()[:b.Len():b.Len()], 0, 0, 0, 0))
	}
	f.Fuzz(func(t *testing.T, comp []byte) {
		got, _, _, err := readOnePass(t, comp)
		if errors.Is(err, ErrUnhandled) {
			return
		}
		zr, zerr := kgzip.NewReader(bytes.NewReader(comp))
		var want []byte
		if zerr == nil {
			zr.Multistream(false)
			want, zerr = io.ReadAll(zr)
		}
		switch {
		case zerr == nil && err != nil:
			t.Fatalf("klauspost reads %d bytes, the one-pass reader fails: %v", len(want), err)
		case zerr != nil && err == nil:
			t.Fatalf("klauspost fails (%v), the one-pass reader reads %d bytes", zerr, len(got))
		case zerr == nil && !bytes.Equal(got, want):
			t.Fatalf("text differs: %d bytes, klauspost %d", len(got), len(want))
		}
	})
}
