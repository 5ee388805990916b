package compress

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// writableCodecs are the codecs NewWriter supports (the table's rows with
// Encode), None first.
var writableCodecs = slices.DeleteFunc(All(), func(c Codec) bool { return !c.CanWrite() })

// compressedCodecs are the writable codecs that actually compress.
var compressedCodecs = writableCodecs[1:]

var words = strings.Fields(`the kernel unpacks the initramfs archive into rootfs
before init runs busybox mounts proc sys dev and starts the shell libc so
usr lib bin sbin etc passwd group shadow inittab fstab hostname network
interfaces modules firmware share locale zoneinfo terminfo udev rules`)

// mixedData returns n deterministic bytes that look roughly like a rootfs:
// runs of text, of structured binary (tables of little-endian records, as in
// ELF files), of random bytes (already compressed content) and of zeros.
// Each codec then meets both easy and hopeless input.
func mixedData(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x726f6f7466732d74))
	out := make([]byte, 0, n)
	// Small inputs get small runs so that they still mix all four kinds.
	maxChunk := min(max(n/8, 64), 32<<10)
	for len(out) < n {
		chunk := 16 + rng.IntN(maxChunk)
		switch rng.IntN(4) {
		case 0: // text
			for end := len(out) + chunk; len(out) < end; {
				out = append(out, words[rng.IntN(len(words))]...)
				if rng.IntN(12) == 0 {
					out = append(out, '\n')
				} else {
					out = append(out, ' ')
				}
			}
		case 1: // records: an address, a small index and a name offset
			base := rng.Uint32()
			for i := 0; i < chunk/16; i++ {
				out = binary.LittleEndian.AppendUint32(out, base+uint32(i)*16)
				out = binary.LittleEndian.AppendUint32(out, uint32(rng.IntN(64)))
				out = binary.LittleEndian.AppendUint64(out, uint64(i)*24)
			}
		case 2: // random
			for i := 0; i < chunk; i++ {
				out = append(out, byte(rng.Uint32()))
			}
		case 3: // zeros
			out = append(out, make([]byte, chunk)...)
		}
	}
	return out[:n]
}

// compress returns data compressed with c and opt, failing t on error.
func compress(t testing.TB, c Codec, opt WriterOptions, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	opt.Backend = PureGo
	w, _, err := NewWriter(&buf, c, opt)
	if err != nil {
		t.Fatalf("NewWriter(%v): %v", c, err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatalf("%v write: %v", c, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("%v close: %v", c, err)
	}
	return buf.Bytes()
}

// decompress reads all of r through NewReader and closes it.
func decompress(r io.Reader) ([]byte, Codec, error) {
	zr, c, err := NewReader(r, ReaderOptions{Backend: PureGo})
	if err != nil {
		return nil, c, err
	}
	out, err := io.ReadAll(zr)
	if cerr := zr.Close(); err == nil {
		err = cerr
	}
	return out, c, err
}

// digest summarises a large payload so that cmp.Diff output stays readable
// when payloads differ.
type digest struct {
	Codec  Codec
	Size   int
	SHA256 string
}

func digestOf(c Codec, b []byte) digest {
	sum := sha256.Sum256(b)
	return digest{Codec: c, Size: len(b), SHA256: hex.EncodeToString(sum[:8])}
}

func concat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}
