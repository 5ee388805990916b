package pinflate

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/flate"
)

// sample is data shaped like a rootfs: text, repeats and random bytes.
func sample(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	words := []string{"usr/lib/", "libc.so.6", "systemd", "\x00\x00\x00\x00", "ELF\x7f", "containerd", "\n"}
	for b.Len() < n {
		switch r.IntN(4) {
		case 0:
			k := r.IntN(2000)
			for range k {
				b.WriteByte(byte(r.Uint32()))
			}
		default:
			for range r.IntN(300) {
				b.WriteString(words[r.IntN(len(words))])
			}
		}
	}
	return b.Bytes()[:n]
}

func deflate(t testing.TB, data []byte, level int) []byte {
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func TestInflateMatchesFlate(t *testing.T) {
	for _, level := range []int{0, 1, 6, 9, -2} {
		data := sample(3<<20, uint64(level+10))
		comp := deflate(t, data, level)
		got, end, err := Inflate(comp)
		if err != nil {
			t.Fatalf("level %d: %v", level, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("level %d: output differs (%d bytes, want %d)", level, len(got), len(data))
		}
		if want := int64(len(comp)) * 8; end > want || end <= want-8 {
			t.Errorf("level %d: ended at bit %d of %d", level, end, want)
		}
	}
}

func TestInflateFile(t *testing.T) {
	p := os.Getenv("PINFLATE_FILE") // a raw deflate stream, for by-hand runs
	if p == "" {
		t.Skip("PINFLATE_FILE not set")
	}
	comp, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(flate.NewReader(bytes.NewReader(comp)))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := Inflate(comp)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(len(want), len(got)); d != "" || !bytes.Equal(got, want) {
		t.Fatalf("output differs: %s", d)
	}
}
