package splice

import (
	"bufio"
	"bytes"
	"io"
	"testing"

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
