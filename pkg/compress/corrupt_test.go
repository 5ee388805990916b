package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// signatureLen is how many leading bytes Sniff needs to recognise each
// codec. Damage inside them turns the input into "None", which passes
// through unchanged: it is then the archive layer that fails, so the
// corruption tests below start after the signature.
var signatureLen = map[Codec]int{Gzip: 4, Xz: 6, Lz4Legacy: 4, Lz4Frame: 4, Zstd: 4, Bzip2: 10}

// corruptionCodecs are the codecs whose damaged input we check.
var corruptionCodecs = []Codec{Gzip, Xz, Lz4Legacy, Lz4Frame, Zstd, Bzip2}

// sample compresses data with c: with our writer, or for bzip2, which we
// cannot write, with the CLI. xz and bzip2 use their smallest dictionary or
// block size, which changes nothing in the format but the memory that each
// of the thousands of decodes below allocates up front.
func sample(t testing.TB, c Codec, data []byte) []byte {
	t.Helper()
	switch c {
	case Bzip2:
		return mustRunTool(t, data, "bzip2", "-1", "-c")
	case Xz:
		return compress(t, c, WriterOptions{Level: 1}, data)
	}
	return compress(t, c, WriterOptions{}, data)
}

// lz4LegacyBoundaries returns the offsets at which a legacy stream could
// end: after the magic and after each block. The format has no end marker,
// so a stream cut there is a valid, shorter stream.
func lz4LegacyBoundaries(b []byte) map[int]bool {
	ends := map[int]bool{4: true}
	for off := 4; off+4 <= len(b); {
		off += 4 + int(binary.LittleEndian.Uint32(b[off:]))
		ends[off] = true
	}
	return ends
}

// checkCorruptErr fails t unless err names codec c and is no panic.
func checkCorruptErr(t *testing.T, c Codec, what string, err error) {
	t.Helper()
	if errors.Is(err, ErrDecoderPanic) {
		t.Errorf("%s: decoder panicked: %v", what, err)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.Codec != c || !strings.HasPrefix(err.Error(), c.String()+": ") {
		t.Errorf("%s: error %q does not name %v", what, err, c)
	}
}

// cutPoints returns the offsets in [from, to) at which to cut a stream:
// all of them near both ends, where headers and trailers are, and a sample
// in between.
func cutPoints(from, to int) []int {
	const edge, stride = 300, 7
	var cuts []int
	for cut := from; cut < to; cut++ {
		if cut < from+edge || cut >= to-edge || (cut-from)%stride == 0 {
			cuts = append(cuts, cut)
		}
	}
	return cuts
}

// TestTruncated cuts each stream at offsets past the signature: the
// reader must report an error, never a clean but short end of data.
func TestTruncated(t *testing.T) {
	data := mixedData(16<<10, 31)
	for _, c := range corruptionCodecs {
		t.Run(c.String(), func(t *testing.T) {
			full := sample(t, c, data)
			valid := map[int]bool{}
			if c == Lz4Legacy {
				valid = lz4LegacyBoundaries(full)
			}
			failures := 0
			for _, cut := range cutPoints(signatureLen[c], len(full)) {
				if valid[cut] {
					continue
				}
				if failures == 5 {
					t.Fatal("too many failures")
				}
				out, got, err := decompress(bytes.NewReader(full[:cut]))
				what := fmt.Sprintf("cut at %d of %d", cut, len(full))
				if err == nil {
					failures++
					t.Errorf("%s: no error, %d of %d bytes out, codec %v", what, len(out), len(data), got)
					continue
				}
				checkCorruptErr(t, c, what, err)
			}
		})
	}
}

// TestBitFlips flips bits at every offset past the signature. A codec with
// checksums must never return wrong data without an error; returning the
// right data is fine (a flipped gzip mtime, say). The lz4 legacy format has
// no checksum at all, so for it we only require no panic and count the
// silent corruptions.
func TestBitFlips(t *testing.T) {
	data := mixedData(4<<10, 32)
	for _, c := range corruptionCodecs {
		t.Run(c.String(), func(t *testing.T) {
			full := sample(t, c, data)
			var silent []string
			in := make([]byte, len(full))
			for pos := signatureLen[c]; pos < len(full); pos++ {
				for _, mask := range []byte{0x01, 0x08, 0x80} {
					copy(in, full)
					in[pos] ^= mask
					what := fmt.Sprintf("offset %d ^ %#02x", pos, mask)
					out, _, err := decompress(bytes.NewReader(in))
					if err != nil {
						checkCorruptErr(t, c, what, err)
						continue
					}
					if !bytes.Equal(out, data) {
						silent = append(silent, what)
					}
				}
			}
			switch {
			case c == Lz4Legacy:
				t.Logf("%d of %d bit flips undetected, as the format has no checksum", len(silent), 3*(len(full)-signatureLen[c]))
			case len(silent) > 0:
				t.Errorf("%d bit flips gave wrong data without an error, first %q", len(silent), silent[:min(len(silent), 10)])
			}
		})
	}
}

// TestCorruptHeaders covers damage that the sweeps above would not reach
// or that deserves a readable case of its own.
func TestCorruptHeaders(t *testing.T) {
	data := mixedData(2<<10, 33)
	flip := func(b []byte, pos int, mask byte) []byte {
		b = bytes.Clone(b)
		if pos < 0 {
			pos += len(b)
		}
		b[pos] ^= mask
		return b
	}
	xzData := compress(t, Xz, WriterOptions{Level: 1}, data)
	tests := []struct {
		name  string
		codec Codec
		in    []byte
	}{
		{"xz unknown check type", Xz, flip(xzData, 7, 0x02)}, // 0x03 is reserved
		{"xz footer magic", Xz, flip(xzData, -1, 0x01)},
		{"xz garbage after stream", Xz, concat(xzData, []byte("junk"))},
		{"gzip garbage after member", Gzip, concat(compress(t, Gzip, WriterOptions{}, data), []byte("junk junk junk"))},
		{"zstd garbage after frame", Zstd, concat(compress(t, Zstd, WriterOptions{}, data), []byte("junk"))},
		{"lz4 frame header checksum", Lz4Frame, flip(compress(t, Lz4Frame, WriterOptions{}, data), 6, 0x01)},
		{"lz4 legacy oversized block", Lz4Legacy, flip(compress(t, Lz4Legacy, WriterOptions{}, data), 7, 0x40)},
		{"lz4 legacy magic only plus junk", Lz4Legacy, concat(magicLz4Legacy, []byte{1, 2})},
		{"zstd huge window", Zstd, hugeWindowZstd(t)},
		{"skippable frame cut short", None, skippable(0, make([]byte, 100))[:50]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, c, err := decompress(bytes.NewReader(tt.in))
			if err == nil {
				t.Fatalf("no error: %d bytes out, codec %v", len(out), c)
			}
			t.Logf("error: %v", err)
			if tt.codec != None {
				checkCorruptErr(t, tt.codec, tt.name, err)
			}
		})
	}
}

// hugeWindowZstd returns a frame whose header asks for a 256 MiB window,
// more than ZstdMaxWindow, which the reader must refuse rather than
// allocate.
func hugeWindowZstd(t *testing.T) []byte {
	t.Helper()
	// Frame header: magic, descriptor 0x00 (no single segment, no
	// checksum, no size, no dictionary), window descriptor
	// exponent 28-10=18 (256 MiB), then one raw last block of 1 byte.
	b := concat(magicZstd, []byte{0x00, 18 << 3})
	b = append(b, 0x09, 0x00, 0x00, 'x') // last block, raw, size 1
	return b
}
