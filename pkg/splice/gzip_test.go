package splice

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"
)

// requireToolsEnv makes a missing CLI a failure instead of a skip, as in
// the other packages' interop tests; CI sets it.
const requireToolsEnv = "ROOTFS_TRIM_REQUIRE_TOOLS"

func runTool(t testing.TB, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(requireToolsEnv) == "1" {
			t.Fatalf("%s not found and %s=1: %v", name, requireToolsEnv, err)
		}
		t.Skipf("%s not found: %v", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GZIP=")
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, stderr.String())
	}
	return out
}

func kgz(t testing.TB, p []byte, level int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := kgzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(p)
	w.Close()
	return b.Bytes()
}

func stdgz(t testing.TB, p []byte, level int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := stdgzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(p)
	w.Close()
	return b.Bytes()
}

func gunzip(t testing.TB, p []byte) []byte {
	t.Helper()
	return decodeWith(t, func(r io.Reader) (io.Reader, error) { return stdgzip.NewReader(r) }, p)
}

// spliceGzip is spliceLz4 for gzip: the input fed to a Matcher, the output
// written through it in pieces of chunk bytes into a Gzip splicer.
func spliceGzip(t testing.TB, comp, in, out []byte, chunk, window, removed int) ([]byte, *Gzip) {
	t.Helper()
	var res bytes.Buffer
	var s *Gzip
	var lay *GzipLayout
	begin := func(n int64, m *Matcher) error {
		var err error
		lay, err = ScanGzip(bytes.NewReader(comp), int64(len(comp)))
		if err != nil {
			return err
		}
		s = NewGzip(&res, bytes.NewReader(comp), lay)
		return s.Prefix(n, m.Bytes)
	}
	if copied := drive(t, in, out, chunk, window, removed, begin, func(p []byte, src int64) error { return s.Write(p, src) }); copied {
		return comp, nil
	}
	if err := s.Close(crc32.ChecksumIEEE(out), int64(len(out))); err != nil {
		t.Fatal(err)
	}
	lay.Stop()
	return res.Bytes(), s
}

func TestGzipSplice(t *testing.T) {
	in := corpus(7, 600<<10)
	inputs := []struct {
		name string
		gz   func(t testing.TB) []byte
	}{
		{"klauspost -9", func(t testing.TB) []byte { return kgz(t, in, 9) }},
		{"klauspost -1", func(t testing.TB) []byte { return kgz(t, in, 1) }},
		{"stdlib -9", func(t testing.TB) []byte { return stdgz(t, in, 9) }},
		{"stdlib huffman-only", func(t testing.TB) []byte { return stdgz(t, in, stdgzip.HuffmanOnly) }},
		{"stdlib stored", func(t testing.TB) []byte { return stdgz(t, in, stdgzip.NoCompression) }},
		{"gzip -9 -n", func(t testing.TB) []byte { return runTool(t, in, "gzip", "-9", "-n", "-c") }},
		{"gzip -1 -n", func(t testing.TB) []byte { return runTool(t, in, "gzip", "-1", "-n", "-c") }},
		{"pigz -9 -n", func(t testing.TB) []byte { return runTool(t, in, "pigz", "-9", "-n", "-c", "-b", "32") }},
		{"pigz -9 -n -i", func(t testing.TB) []byte { return runTool(t, in, "pigz", "-9", "-n", "-i", "-c", "-b", "32") }},
	}
	edits := []struct {
		name  string
		edits []edit
	}{
		{"none", nil},
		{"start", []edit{{0, 300, ""}}},
		{"end", []edit{{len(in) - 200, 200, "a new tail, of some length, for the final block"}}},
		{"appended", []edit{{len(in), 0, string(corpus(8, 100<<10))}}},
		{"middle", []edit{{300 << 10, 1000, ""}}},
		{"inside the window", []edit{{200 << 10, 100, ""}, {200<<10 + 20<<10, 50, "x"}}},
		{"several", []edit{{10 << 10, 5, ""}, {150 << 10, 40 << 10, ""}, {400 << 10, 0, "inserted, long enough to be told from padding"}, {590 << 10, 3000, ""}}},
	}
	for _, ti := range inputs {
		t.Run(ti.name, func(t *testing.T) {
			comp := ti.gz(t)
			for _, te := range edits {
				out := applyEdits(in, te.edits)
				for _, chunk := range []int{110, 32 << 10} {
					got, s := spliceGzip(t, comp, in, out, chunk, 4<<20, removedBy(te.edits))
					if !bytes.Equal(gunzip(t, got), out) {
						t.Fatalf("%s, chunk %d: decoded splice differs from the edited stream", te.name, chunk)
					}
					if te.edits == nil {
						if !bytes.Equal(got, comp) {
							t.Fatalf("%s: no edit, yet not a copy", te.name)
						}
						continue
					}
					if len(got) > len(comp)+len(comp)/5+1000 {
						t.Errorf("%s, chunk %d: %d bytes from %d", te.name, chunk, len(got), len(comp))
					}
					if te.name == "middle" && s.Copied == 0 {
						t.Errorf("%s, chunk %d: no block copied", te.name, chunk)
					}
				}
			}
		})
	}
}

func TestGzipSpliceGNU(t *testing.T) {
	// The real tools read the splice: gzip -t, and gzip -dc gives the
	// edited stream.
	in := corpus(9, 300<<10)
	comp := runTool(t, in, "gzip", "-9", "-n", "-c")
	out := applyEdits(in, []edit{{1000, 10, ""}, {100 << 10, 0, "something new here, as apply injects"}, {len(in), 0, "tail"}})
	got, s := spliceGzip(t, comp, in, out, 512, 1<<20, 20)
	if s.Copied == 0 {
		t.Error("no block copied")
	}
	runTool(t, got, "gzip", "-t")
	if !bytes.Equal(runTool(t, got, "gzip", "-dc"), out) {
		t.Fatal("gzip -dc of the splice differs from the edited stream")
	}
	if !bytes.Equal(runTool(t, got, "pigz", "-dc"), out) {
		t.Fatal("pigz -dc of the splice differs from the edited stream")
	}
}

func TestScanGzip(t *testing.T) {
	in := corpus(10, 200<<10)
	for _, level := range []int{flate.NoCompression, flate.HuffmanOnly, 1, 6, 9} {
		comp := kgz(t, in, level)
		lay, err := ScanGzip(bytes.NewReader(comp), int64(len(comp)))
		if err != nil {
			t.Fatal(err)
		}
		more, err := lay.Wait(nil, 0)
		if err != nil || more {
			t.Fatalf("level %d: more %v, %v", level, more, err)
		}
		var at int64
		for i, b := range lay.blocks {
			if b.Start != at || (b.Final != (i == len(lay.blocks)-1)) {
				t.Fatalf("level %d: block %d: %+v", level, i, b)
			}
			at = b.End()
		}
		if at != int64(len(in)) {
			t.Fatalf("level %d: blocks cover %d bytes, want %d", level, at, len(in))
		}
	}
	// Reserved flags are valid but not known here.
	odd := kgz(t, in[:100], 9)
	odd[3] |= 0x80
	if _, err := ScanGzip(bytes.NewReader(odd), int64(len(odd))); !errors.Is(err, ErrUnhandled) {
		t.Fatalf("reserved flag: %v, want ErrUnhandled", err)
	}
	// A second member is reported.
	two := append(kgz(t, in[:1000], 9), kgz(t, in[1000:2000], 9)...)
	lay, err := ScanGzip(bytes.NewReader(two), int64(len(two)))
	if err != nil {
		t.Fatal(err)
	}
	if more, err := lay.Wait(nil, 0); !more || err != nil {
		t.Fatalf("two members: more %v, %v", more, err)
	}
}

func TestGzipSpliceTwoMembers(t *testing.T) {
	// Only the first member's blocks are mapped: an edit inside it splices,
	// and the second member's data is compressed anew.
	in := corpus(11, 200<<10)
	comp := append(kgz(t, in[:100<<10], 9), kgz(t, in[100<<10:], 9)...)
	out := applyEdits(in, []edit{{50 << 10, 100, ""}})
	got, s := spliceGzip(t, comp, in, out, 4096, 1<<20, 100)
	if !bytes.Equal(gunzip(t, got), out) {
		t.Fatal("decoded splice differs")
	}
	if s.Copied == 0 {
		t.Error("no block copied")
	}
	// Unchanged past the first member: the prefix cannot be spliced, and
	// the caller compresses everything again.
	lay, err := ScanGzip(bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	defer lay.Stop()
	err = NewGzip(io.Discard, bytes.NewReader(comp), lay).Prefix(150<<10, func(from, to int64) ([]byte, bool) { return in[from:to], true })
	if !errors.Is(err, ErrUnhandled) {
		t.Fatalf("prefix past the first member: %v, want ErrUnhandled", err)
	}
}

func FuzzGzipSplice(f *testing.F) {
	f.Add(uint64(1), uint16(300), uint8(9), []byte{10, 20, 0, 200, 5, 5})
	f.Add(uint64(2), uint16(4000), uint8(1), []byte{0, 0, 0, 255, 255, 255})
	f.Add(uint64(3), uint16(2000), uint8(0), []byte{128, 1, 1})
	f.Fuzz(func(t *testing.T, seed uint64, size uint16, level uint8, ops []byte) {
		fuzzSplice{
			compress: func(in []byte) []byte { return kgz(t, in, int(level%11)-2) }, // -2 (Huffman only) to 8
			splice: func(comp, in, out []byte, chunk, removed int) []byte {
				got, _ := spliceGzip(t, comp, in, out, chunk, 64<<10, removed)
				return got
			},
			decode: gunzip,
			tool:   "gzip",
		}.run(t, seed, size, ops)
	})
}
