package compress

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// decodeWith reads data through NewReader with workers frames at a time
// (1: the sequential decoder) and says what came out: the bytes (by size
// and digest, and the first difference is found by the caller), and the
// errors of NewReader and Read, as text.
func decodeWith(t testing.TB, data []byte, workers int) (out []byte, openErr, readErr string) {
	t.Helper()
	old := zstdWorkers
	zstdWorkers = func() int { return workers }
	defer func() { zstdWorkers = old }()
	r, _, err := NewReader(bytes.NewReader(data), ReaderOptions{Backend: PureGo})
	if err != nil {
		return nil, err.Error(), ""
	}
	defer r.Close()
	var buf bytes.Buffer
	_, err = io.Copy(&buf, io.LimitReader(r, 256<<20))
	if err != nil {
		readErr = err.Error()
	}
	return buf.Bytes(), "", readErr
}

// sameAsSequential fails unless the frame reader gives what the
// sequential decoder gives for data: the same bytes, the same errors.
func sameAsSequential(t testing.TB, data []byte) {
	t.Helper()
	want, wantOpen, wantRead := decodeWith(t, data, 1)
	for _, w := range []int{2, 3} {
		got, gotOpen, gotRead := decodeWith(t, data, w)
		if gotOpen != wantOpen || gotRead != wantRead {
			t.Fatalf("%d workers: errors %q, %q; sequential %q, %q", w, gotOpen, gotRead, wantOpen, wantRead)
		}
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%d workers: %d bytes, sequential %d; first difference at %d", w, len(got), len(want), i)
		}
	}
}

// zstdFrame is one frame of data at level, with or without its content
// size and checksum.
func zstdFrame(t testing.TB, data []byte, level zstd.EncoderLevel, size, crc bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(level), zstd.WithEncoderCRC(crc), zstd.WithSingleSegment(false))
	if err != nil {
		t.Fatal(err)
	}
	if size {
		w.ResetContentSize(&buf, int64(len(data)))
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zstdStreams are the inputs the frame reader is compared on: one frame,
// several (with and without content sizes, checksums, skippable frames
// between as pzstd writes them), frames too big to hold, and each cut,
// corrupted and followed by junk.
func zstdStreams(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdefgh ijklmnop\n"[rng.IntN(18)]
		}
		return b
	}
	var several, pz, big []byte
	for i := range 7 {
		several = append(several, zstdFrame(t, text(100<<10+i*1000), zstd.SpeedDefault, i%2 == 0, i%3 != 0)...)
		pz = append(append(pz, skippable(0, []byte{1, 2, 3, 4})...), zstdFrame(t, text(300<<10), zstd.SpeedFastest, false, true)...)
	}
	noise := make([]byte, zstdFrameIn+(1<<20))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	big = append(zstdFrame(t, text(50<<10), zstd.SpeedDefault, true, true), zstdFrame(t, noise, zstd.SpeedFastest, false, true)...)
	big = append(big, zstdFrame(t, text(10<<10), zstd.SpeedDefault, true, true)...)
	in := map[string][]byte{
		"one frame": zstdFrame(t, text(1<<20), zstd.SpeedDefault, true, true),
		"several":   several,
		"pzstd":     pz,
		"too big":   big,
		"empty":     zstdFrame(t, nil, zstd.SpeedDefault, false, true),
	}
	for _, name := range []string{"several", "pzstd", "too big"} {
		s := in[name]
		in[name+", cut"] = s[:len(s)*3/5]
		in[name+", junk after"] = append(append([]byte{}, s...), "junk after the frames"...)
		in[name+", zeros after"] = append(append([]byte{}, s...), make([]byte, 16)...)
		for _, at := range []int{len(s) / 3, len(s) * 2 / 3, len(s) - 2} {
			c := append([]byte{}, s...)
			c[at] ^= 0x55
			in[fmt.Sprintf("%s, byte %d flipped", name, at)] = c
		}
	}
	return in
}

// TestZstdFramesSequential: on every stream, the frame reader gives the
// bytes and errors of the sequential decoder.
func TestZstdFramesSequential(t *testing.T) {
	for name, data := range zstdStreams(t) {
		t.Run(name, func(t *testing.T) { sameAsSequential(t, data) })
	}
}

// TestZstdFramesTools: what pzstd and `cat` of zstd's frames make reads
// as zstd -dc reads it, on two cores as on one.
func TestZstdFramesTools(t *testing.T) {
	archivetest.RequireTool(t, "pzstd")
	archivetest.RequireTool(t, "zstd")
	data := bytes.Repeat([]byte("rootfs-trim reads zstd frames in parallel\n"), 600<<10)
	for _, cmd := range [][]string{{"pzstd", "-q", "-1", "-p", "2", "-c"}, {"sh", "-c", "zstd -q -c; printf x | zstd -q -c"}} {
		c := exec.Command(cmd[0], cmd[1:]...)
		c.Stdin = bytes.NewReader(data)
		z, err := c.Output()
		if err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		got, openErr, readErr := decodeWith(t, z, 2)
		want := data
		if cmd[0] == "sh" {
			want = append(append([]byte{}, data...), 'x')
		}
		if openErr != "" || readErr != "" || !bytes.Equal(got, want) {
			t.Errorf("%v: %d bytes, errors %q %q; want %d bytes", cmd, len(got), openErr, readErr, len(want))
		}
		sameAsSequential(t, z)
	}
}

// FuzzZstdFrames: on any input, the frame reader and the sequential
// decoder agree, bytes and errors.
func FuzzZstdFrames(f *testing.F) {
	for _, data := range zstdStreams(f) {
		if len(data) < 1<<20 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameAsSequential(t, data) })
}

// TestZstdFramesWhole: the frames that can be are decoded whole, the
// others (one too big to hold, and what follows it) sequentially.
func TestZstdFramesWhole(t *testing.T) {
	in := zstdStreams(t)
	for name, want := range map[string]int{"several": 7, "pzstd": 7, "too big": 1, "one frame": 1, "several, cut": 4} {
		z, err := newZstdFrames(bufioOf(in[name]), 2)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, z)
		z.Close()
		if z.decoded != want {
			t.Errorf("%s: %d frames decoded whole, want %d", name, z.decoded, want)
		}
	}
}

func TestZstdFrameWalk(t *testing.T) {
	frame := zstdFrame(t, bytes.Repeat([]byte("x"), 1000), zstd.SpeedDefault, true, true)
	two := append(append([]byte{}, frame...), frame...)
	raw, err := walkZstdFrame(bufioOf(two), nil)
	if err != nil || !bytes.Equal(raw, frame) {
		t.Fatalf("walk: %d bytes, %v; want the first frame, %d bytes", len(raw), err, len(frame))
	}
	if diff := cmp.Diff(len(frame), len(raw)); diff != "" {
		t.Error(diff)
	}
}

func bufioOf(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
