package pinflate

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
)

func gzipped(t testing.TB, data []byte, level int) []byte {
	var b bytes.Buffer
	w, err := gzip.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// result is what a decoder gave: its output, its error, and where the
// member ended.
type result struct {
	Out []byte
	Err string
	End int64
}

func sequential(in []byte) result {
	br := bytes.NewReader(in)
	zr, err := gzip.NewReader(br)
	if err != nil {
		return result{Err: err.Error(), End: -1}
	}
	zr.Multistream(false)
	out, err := io.ReadAll(zr)
	res := result{Out: out, End: -1}
	if err != nil {
		res.Err = err.Error()
	} else {
		res.End = int64(len(in)) - int64(br.Len())
	}
	return res
}

func parallel(in []byte, opt Options) result {
	r, err := NewReader(bytes.NewReader(in), 0, int64(len(in)), opt)
	if err != nil {
		return result{Err: err.Error(), End: -1}
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	res := result{Out: out, End: r.End()}
	if err != nil {
		res.Err = err.Error()
	}
	return res
}

// compare fails unless the parallel reader gives what klauspost's does.
func compare(t *testing.T, in []byte, opt Options) {
	t.Helper()
	want, got := sequential(in), parallel(in, opt)
	if !bytes.Equal(got.Out, want.Out) {
		t.Fatalf("output differs: %d bytes, want %d", len(got.Out), len(want.Out))
	}
	got.Out, want.Out = nil, nil
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-sequential +parallel):\n%s", d)
	}
}

var smallChunks = Options{Workers: 3, ChunkSize: 64 << 10, ChunkCap: 1 << 20}

func TestReaderMatchesSequential(t *testing.T) {
	for _, level := range []int{0, 1, 6, 9, -2} {
		for _, n := range []int{0, 1, 5000, 100 << 10, 1 << 20} {
			data := sample(n, uint64(n+level))
			in := gzipped(t, data, level)
			for _, opt := range []Options{{}, smallChunks, {Workers: 1, ChunkSize: 16 << 10}} {
				t.Run(fmt.Sprintf("level%d/%d/%d", level, n, opt.ChunkSize), func(t *testing.T) {
					compare(t, in, opt)
				})
			}
		}
	}
}

func TestReaderBomb(t *testing.T) {
	// 16 MiB of zeros is some 16 KiB compressed: every chunk is far over
	// its cap and is decoded by the reader itself.
	in := gzipped(t, make([]byte, 16<<20), 9)
	compare(t, in, Options{Workers: 2, ChunkSize: 1 << 10, ChunkCap: 256 << 10})
}

func TestReaderDamage(t *testing.T) {
	data := sample(1<<20, 7)
	in := gzipped(t, data, 6)
	for _, at := range []int{3, 12, 100, 5000, 70000, len(in) / 2, len(in) - 20, len(in) - 6, len(in) - 1} {
		t.Run(fmt.Sprintf("flip%d", at), func(t *testing.T) {
			bad := bytes.Clone(in)
			bad[at] ^= 0x10
			compare(t, bad, smallChunks)
		})
		t.Run(fmt.Sprintf("cut%d", at), func(t *testing.T) {
			compare(t, in[:at], smallChunks)
		})
	}
	t.Run("junk after", func(t *testing.T) {
		compare(t, append(bytes.Clone(in), "junk after the member"...), smallChunks)
	})
	t.Run("two members", func(t *testing.T) {
		compare(t, append(bytes.Clone(in), in...), smallChunks)
	})
}

func TestReaderSpeculates(t *testing.T) {
	for _, level := range []int{1, 6, 9} {
		in := gzipped(t, sample(2<<20, 3), level)
		r, err := NewReader(bytes.NewReader(in), 0, int64(len(in)), smallChunks)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			t.Fatal(err)
		}
		r.Close()
		st := r.Stats()
		t.Logf("level %d: %d bytes, %+v", level, len(in), st)
		if st.Replay || st.Chunks < (len(in)/smallChunks.ChunkSize)*3/4 {
			t.Errorf("level %d: %+v: want most of %d chunks decoded speculatively", level, st, len(in)/smallChunks.ChunkSize)
		}
	}
}
