package splice

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/flate"
	"github.com/pierrec/lz4/v4"
)

// corpus returns n bytes that compress somewhat, like a rootfs: runs of
// text with random bytes between, from a fixed seed.
func corpus(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := []string{"usr/lib/", "etc/systemd/", "070701000", "libc.so.6", "\x00\x00\x00\x00", "ELF", "kubernetes"}
	var b bytes.Buffer
	for b.Len() < n {
		if rng.IntN(4) == 0 {
			for range rng.IntN(64) {
				b.WriteByte(byte(rng.Uint32()))
			}
		} else {
			b.WriteString(words[rng.IntN(len(words))])
		}
	}
	return b.Bytes()[:n]
}

// lz4Legacy compresses p as `lz4 -l` does, in blocks of blockSize bytes.
func lz4Legacy(t testing.TB, p []byte, blockSize int) []byte {
	t.Helper()
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, uint32(lz4LegacyMagic))
	for len(p) > 0 {
		k := min(len(p), blockSize)
		dst := make([]byte, lz4.CompressBlockBound(k))
		n, err := lz4.CompressBlock(p[:k], dst, nil)
		if err != nil || n == 0 {
			t.Fatalf("compress: %d, %v", n, err)
		}
		binary.Write(&out, binary.LittleEndian, uint32(n))
		out.Write(dst[:n])
		p = p[k:]
	}
	return out.Bytes()
}

// unlz4Legacy decodes a legacy stream with the library's own reader.
func unlz4Legacy(t testing.TB, p []byte) []byte {
	t.Helper()
	return decodeWith(t, func(r io.Reader) (io.Reader, error) { return lz4.NewReader(r), nil }, p)
}

// decodeWith decodes a whole splice with a library's reader.
func decodeWith(t testing.TB, newReader func(io.Reader) (io.Reader, error), p []byte) []byte {
	t.Helper()
	r, err := newReader(bytes.NewReader(p))
	if err != nil {
		t.Fatalf("decoding the splice: %v", err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding the splice: %v", err)
	}
	return got
}

// fuzzSplice is the body of the splice fuzz targets: seed and size make
// an input, ops edit it, and the splice of the compressed input must
// decode to the edited stream, by the library and by the codec's own
// tool (GNU gzip, lz4, xz), which is what users and CI decode with.
type fuzzSplice struct {
	compress func(in []byte) []byte
	splice   func(comp, in, out []byte, chunk, removed int) []byte
	decode   func(testing.TB, []byte) []byte
	tool     string // decodes with -dc
}

func (f fuzzSplice) run(t *testing.T, seed uint64, size uint16, ops []byte) {
	in := corpus(seed, int(size)*16)
	edits := fuzzEdits(in, seed, ops)
	out := applyEdits(in, edits)
	got := f.splice(f.compress(in), in, out, 1+int(seed%5000), removedBy(edits))
	if !bytes.Equal(f.decode(t, got), out) {
		t.Fatal("decoded splice differs from the edited stream")
	}
	if !bytes.Equal(runTool(t, got, f.tool, "-dc"), out) {
		t.Fatalf("%s -dc of the splice differs from the edited stream", f.tool)
	}
}

// edit is a change made to an input stream: n bytes at off replaced by ins.
type edit struct {
	off, n int
	ins    string
}

func removedBy(edits []edit) int {
	n := 0
	for _, e := range edits {
		n += e.n
	}
	return n
}

// fuzzEdits turns a fuzzer's ops into ordered, non-overlapping edits of
// in: each triple is where (scaled to the input, after the last edit), how
// many bytes to remove, and how many to insert.
func fuzzEdits(in []byte, seed uint64, ops []byte) []edit {
	var edits []edit
	at := 0
	for i := 0; i+2 < len(ops) && at <= len(in); i += 3 {
		off := at + int(ops[i])*len(in)/256/4
		if off > len(in) {
			break
		}
		n := min(int(ops[i+1])*8, len(in)-off)
		edits = append(edits, edit{off, n, string(corpus(seed+uint64(i), int(ops[i+2])))})
		at = off + n
	}
	return edits
}

func applyEdits(in []byte, edits []edit) []byte {
	var out []byte
	at := 0
	for _, e := range edits {
		out = append(out, in[at:e.off]...)
		out = append(out, e.ins...)
		at = e.off + e.n
	}
	return append(out, in[at:]...)
}

// spliceLz4 runs the whole machinery: the input fed to a Matcher, the
// output written through it in pieces of chunk bytes into an Lz4 splicer.
func spliceLz4(t testing.TB, comp, in, out []byte, chunk int, window int, removed int) ([]byte, *BlockSplicer) {
	t.Helper()
	blocks, err := ScanLz4Legacy(bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	var res bytes.Buffer
	s := NewLz4(&res, bytes.NewReader(comp), blocks, lz4.Fast)
	return spliceWith(t, s, &res, comp, in, out, chunk, window, removed)
}

// spliceWith runs the machinery with splicer s writing to res.
func spliceWith(t testing.TB, s *BlockSplicer, res *bytes.Buffer, comp, in, out []byte, chunk int, window int, removed int) ([]byte, *BlockSplicer) {
	t.Helper()
	if copied := drive(t, in, out, chunk, window, removed, func(n int64, _ *Matcher) error { return s.Prefix(n) }, s.Write); copied {
		return comp, s
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return res.Bytes(), s
}

// drive is what reuse.go does with a splicer: in is fed to a Matcher
// running ahead of the output, as the archive reader does (past what was
// removed, and a little more), and out is matched in pieces of chunk
// bytes. Output equal to the input's start is only counted; at the first
// difference, or at the end if out is a strict prefix, start(n) takes the
// n equal bytes, and every run from then on goes to write. It reports
// whether out equals in: a copy, start never called.
func drive(t testing.TB, in, out []byte, chunk, window, removed int, start func(n int64, m *Matcher) error, write func(p []byte, src int64) error) bool {
	t.Helper()
	return driveFed(t, in, out, chunk, window, removed, nil, start, write)
}

// driveFed is drive with fed told how much of the input is fed to the
// Matcher before it is: what a decoder must have delivered by then.
func driveFed(t testing.TB, in, out []byte, chunk, window, removed int, fed func(n int), start func(n int64, m *Matcher) error, write func(p []byte, src int64) error) bool {
	t.Helper()
	feed := func(m *Matcher, p []byte, upTo int) {
		if fed != nil {
			fed(upTo)
		}
		m.Feed(p)
	}
	m := NewMatcher(window)
	at := 0
	started := false
	var n int64
	emit := func(run []byte, src int64) error {
		if !started {
			if src == n {
				n += int64(len(run))
				return nil
			}
			started = true
			if err := start(n, m); err != nil {
				return err
			}
		}
		return write(run, src)
	}
	for o := 0; o < len(out); o += chunk {
		ahead := min(len(in), o+chunk+300+removed)
		if ahead > at {
			feed(m, in[at:ahead], ahead)
			at = ahead
		}
		if err := m.Match(out[o:min(len(out), o+chunk)], emit); err != nil {
			t.Fatal(err)
		}
	}
	feed(m, in[at:], len(in))
	m.End()
	if !started {
		if n == int64(len(in)) {
			return true
		}
		if err := start(n, m); err != nil {
			t.Fatal(err)
		}
	}
	return false
}

// blockCase is an edit of a stream of 20 blocks of bs bytes and a short
// one, and how many blocks a block splicer must at least copy.
type blockCase struct {
	name   string
	edits  []edit
	copied int
}

func blockCases(in []byte, bs int) []blockCase {
	return []blockCase{
		{"none", nil, 21},
		{"start", []edit{{0, 200, ""}}, 19},
		{"end", []edit{{len(in) - 100, 100, "new tail, longer than the old one.............."}}, 19},
		{"on a block boundary", []edit{{5 * bs, 300, ""}}, 18},
		{"just before a boundary", []edit{{5*bs - 10, 10, ""}}, 18},
		{"insert", []edit{{7*bs + 99, 0, "inserted bytes that were not in the input at all, long enough"}}, 18},
		{"several", []edit{{bs + 5, 1000, ""}, {9 * bs, 40, ""}, {15*bs + 7, 3, "xyz"}}, 14},
		{"a whole block", []edit{{3 * bs, bs, ""}}, 19},
		{"appended", []edit{{len(in), 0, string(corpus(2, 3*bs))}}, 20},
	}
}

// testBlockSplice runs blockCases through splice at several write sizes:
// the splice must decode to the edited stream, be the input itself when
// nothing changed, and copy at least the blocks the case says; check, if
// not nil, looks at a splice further.
func testBlockSplice(t *testing.T, in, comp []byte, bs int, splice func(out []byte, chunk, removed int) ([]byte, *BlockSplicer), decode func(testing.TB, []byte) []byte, check func(t *testing.T, chunk int, got []byte, s *BlockSplicer)) {
	for _, tt := range blockCases(in, bs) {
		t.Run(tt.name, func(t *testing.T) {
			out := applyEdits(in, tt.edits)
			for _, chunk := range []int{110, 32 << 10, 1 << 20} {
				got, s := splice(out, chunk, removedBy(tt.edits))
				if !bytes.Equal(out, decode(t, got)) {
					t.Fatalf("chunk %d: decoded splice differs from the edited stream", chunk)
				}
				if tt.edits == nil {
					if !bytes.Equal(got, comp) {
						t.Fatalf("chunk %d: no edit, yet not a copy", chunk)
					}
					continue
				}
				if check != nil {
					check(t, chunk, got, s)
				}
				if s.Copied < tt.copied {
					t.Errorf("chunk %d: %d blocks copied, %d compressed; want at least %d copied", chunk, s.Copied, s.Compressed, tt.copied)
				}
			}
		})
	}
}

func TestLz4Splice(t *testing.T) {
	const bs = 64 << 10 // small blocks: the logic is the same at 8 MiB
	in := corpus(1, 20*bs+1234)
	comp := lz4Legacy(t, in, bs)
	testBlockSplice(t, in, comp, bs, func(out []byte, chunk, removed int) ([]byte, *BlockSplicer) {
		return spliceLz4(t, comp, in, out, chunk, 4<<20, removed)
	}, unlz4Legacy, nil)
}

func TestLz4SpliceSmallWindow(t *testing.T) {
	// Removing more than the Matcher keeps loses the thread; the output
	// must still be right, only less is copied.
	const bs = 16 << 10
	in := corpus(3, 30*bs)
	comp := lz4Legacy(t, in, bs)
	out := applyEdits(in, []edit{{2 * bs, 10 * bs, ""}})
	got, _ := spliceLz4(t, comp, in, out, 4096, 4096, 10*bs)
	if !bytes.Equal(unlz4Legacy(t, got), out) {
		t.Fatal("decoded splice differs")
	}
}

func TestScanLz4Legacy(t *testing.T) {
	in := corpus(4, 100000)
	comp := lz4Legacy(t, in, 30000)
	blocks, err := ScanLz4Legacy(bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	var lens []int64
	for _, b := range blocks {
		lens = append(lens, b.Len)
	}
	if diff := cmp.Diff([]int64{30000, 30000, 30000, 10000}, lens); diff != "" {
		t.Fatal(diff)
	}
	// The kernel's size trailer is valid but not spliced.
	withSize := binary.LittleEndian.AppendUint32(append([]byte(nil), comp...), uint32(len(in)))
	if _, err := ScanLz4Legacy(bytes.NewReader(withSize), int64(len(withSize))); !errors.Is(err, ErrUnhandled) {
		t.Fatalf("size trailer: got %v, want ErrUnhandled", err)
	}
	for _, cut := range []int{5, 9, len(comp) - 3} {
		if _, err := ScanLz4Legacy(bytes.NewReader(comp[:cut]), int64(cut)); err == nil || errors.Is(err, ErrUnhandled) {
			t.Errorf("cut at %d: got %v, want an error", cut, err)
		}
	}
}

func TestMatcher(t *testing.T) {
	in := corpus(5, 50000)
	out := applyEdits(in, []edit{{1000, 500, ""}, {20000, 0, "a fresh header that the input never had, 0707010000"}})
	m := NewMatcher(1 << 20)
	m.Feed(in)
	m.End()
	var got []byte
	var literal int
	err := m.Match(out, func(run []byte, src int64) error {
		if src >= 0 && !bytes.Equal(run, in[src:src+int64(len(run))]) {
			t.Fatalf("run at %d does not match the input", src)
		}
		if src < 0 {
			literal += len(run)
		}
		got = append(got, run...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, out) {
		t.Fatal("runs do not add up to the output")
	}
	if m.Identical() {
		t.Error("Identical after edits")
	}
	if literal > literalStep+60 {
		t.Errorf("%d literal bytes; want only the insertion's", literal)
	}
}

// TestMatcherKeepsBehind: while the output follows the input closely, a
// slide keeps keepBehind bytes behind the output's place (a gzip splice's
// dictionary) and drops the rest, so that it copies little.
func TestMatcherKeepsBehind(t *testing.T) {
	const window = 8 << 20
	in := corpus(7, 3*window)
	m := NewMatcher(window)
	const step = 64 << 10
	var out int64
	emit := func(run []byte, src int64) error {
		if src != out {
			t.Fatalf("output at %d matched input at %d", out, src)
		}
		out += int64(len(run))
		return nil
	}
	slides := 0
	for off := 0; off < len(in); off += step {
		base := m.base
		m.Feed(in[off:min(off+step, len(in))])
		if m.base != base {
			// A slide: it kept keepBehind bytes behind the output.
			slides++
			if behind := out - m.base; behind > keepBehind {
				t.Fatalf("after a slide %d bytes are held behind the output's place, want %d", behind, keepBehind)
			}
		}
		// The output lags by one step, as behind the reader's buffer.
		if lag := off - step; lag >= 0 {
			if err := m.Match(in[lag:off], emit); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !m.Identical() {
		t.Fatal("not identical")
	}
	if _, ok := m.Bytes(out-keepBehind, out); !ok {
		t.Errorf("the %d bytes behind the output's place are gone (base %d, output at %d)", keepBehind, m.base, out)
	}
	if slides == 0 {
		t.Error("no slide")
	}
}

func FuzzLz4Splice(f *testing.F) {
	f.Add(uint64(1), uint16(300), []byte{10, 20, 0, 200, 5, 5})
	f.Add(uint64(2), uint16(4000), []byte{0, 0, 0, 255, 255, 255})
	f.Fuzz(func(t *testing.T, seed uint64, size uint16, ops []byte) {
		fuzzSplice{
			compress: func(in []byte) []byte { return lz4Legacy(t, in, 4096) },
			splice: func(comp, in, out []byte, chunk, removed int) []byte {
				got, _ := spliceLz4(t, comp, in, out, chunk, 8192, removed)
				return got
			},
			decode: unlz4Legacy,
			tool:   "lz4",
		}.run(t, seed, size, ops)
	})
}

func TestLz4SpliceTool(t *testing.T) {
	// lz4 -d reads a splice of its own output: copied 8 MiB blocks with a
	// short recompressed block between them.
	in := corpus(12, 3*Lz4LegacyBlock+5000)
	comp := runTool(t, in, "lz4", "-l", "-9", "-q", "-c")
	out := applyEdits(in, []edit{{Lz4LegacyBlock + 100, 5000, ""}, {len(in), 0, "the end, appended"}})
	got, s := spliceLz4(t, comp, in, out, 32<<10, 16<<20, 5000)
	if s.Copied < 2 {
		t.Errorf("%d blocks copied, want 2", s.Copied)
	}
	runTool(t, got, "lz4", "-t")
	if !bytes.Equal(runTool(t, got, "lz4", "-dc"), out) {
		t.Fatal("lz4 -dc of the splice differs from the edited stream")
	}
}

// FuzzScan gives the block scanners arbitrary bytes: they must return, with
// blocks that tile what they cover, or an error.
func FuzzScan(f *testing.F) {
	in := corpus(13, 5000)
	f.Add(lz4Legacy(f, in, 1000))
	var gz bytes.Buffer
	w, _ := flate.NewWriter(&gz, 9)
	w.Write(in)
	w.Close()
	f.Add(append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3}, gz.Bytes()...))
	f.Add(xzBlocks(f, in, 2000))
	f.Fuzz(func(t *testing.T, data []byte) {
		if lay, err := ScanXz(bytes.NewReader(data), int64(len(data))); err == nil {
			var at, off int64 = 0, 12
			for _, b := range lay.Blocks {
				if b.Start != at || b.Offset != off || b.Size != (b.Unpadded+3)&^3 {
					t.Fatalf("xz block %+v at %d, offset %d", b, at, off)
				}
				at, off = b.End(), off+b.Size
			}
		}
		if blocks, err := ScanLz4Legacy(bytes.NewReader(data), int64(len(data))); err == nil {
			var at int64
			for _, b := range blocks {
				if b.Start != at || b.Len > Lz4LegacyBlock {
					t.Fatalf("lz4 block %+v at %d", b, at)
				}
				at = b.End()
			}
		}
		lay, err := ScanGzip(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		lay.Wait(nil, 0)
		var at int64
		for _, b := range lay.blocks {
			if b.Start != at || b.EndBit <= b.Bit {
				t.Fatalf("deflate block %+v at %d", b, at)
			}
			at = b.End()
		}
	})
}

// TestScanXzBlocks: ScanXz counts the blocks startFull writes the output
// in (one in, one out).
func TestScanXzBlocks(t *testing.T) {
	in := corpus(14, 3<<20)
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-1", "-C", "crc32", "-T1"}, 1},
		{[]string{"-1", "-C", "crc32", "-T2", "--block-size=1MiB"}, 3},
	} {
		comp := runTool(t, in, "xz", append(tc.args, "-c")...)
		lay, err := ScanXz(bytes.NewReader(comp), int64(len(comp)))
		if err != nil || len(lay.Blocks) != tc.want {
			t.Fatalf("xz %v: %v, %v; want %d blocks", tc.args, lay, err, tc.want)
		}
		padded := append(append([]byte(nil), comp...), 0, 0, 0, 0)
		if lay, err := ScanXz(bytes.NewReader(padded), int64(len(padded))); err != nil || len(lay.Blocks) != tc.want {
			t.Errorf("xz %v with padding: %v, %v", tc.args, lay, err)
		}
		two := append(append([]byte(nil), comp...), comp...)
		if _, err := ScanXz(bytes.NewReader(two), int64(len(two))); !errors.Is(err, ErrUnhandled) {
			t.Errorf("two streams: %v, want ErrUnhandled", err)
		}
	}
}

// TestLz4SpliceHeap holds the splicer's big buffers off the Go heap
// (bigbuf): on it, the pending bytes, the decoded head, the Matcher's
// window and each new block's copy came to four times the input, and
// the collections they started waited on memmoves into fresh pages
// (make bench: apply-lz4). What stays on the heap is the scan's block
// buffer and each new block's compressed output.
func TestLz4SpliceHeap(t *testing.T) {
	const bs = Lz4LegacyBlock
	in := corpus(5, 3*bs)
	comp := lz4Legacy(t, in, bs)
	blocks, err := ScanLz4Legacy(bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	out := applyEdits(in, []edit{{bs + 1000, 200, ""}})
	var res bytes.Buffer
	res.Grow(len(comp) + 1<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := NewLz4(&res, bytes.NewReader(comp), blocks, lz4.Fast)
	if copied := drive(t, in, out, 256<<10, 0, 200, func(n int64, _ *Matcher) error { return s.Prefix(n) }, s.Write); copied {
		t.Fatal("an edited stream came out as a copy")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if !bytes.Equal(unlz4Legacy(t, res.Bytes()), out) {
		t.Fatal("decoded splice differs from the edited stream")
	}
	heap := after.TotalAlloc - before.TotalAlloc
	limit := uint64((s.Compressed+1)*lz4.CompressBlockBound(bs) + 2<<20)
	t.Logf("%d blocks copied, %d compressed: %d MiB on the Go heap", s.Copied, s.Compressed, heap>>20)
	if heap > limit {
		t.Errorf("splicing %d MiB put %d MiB on the Go heap, want at most %d MiB", len(in)>>20, heap>>20, limit>>20)
	}
}
