package compress

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ulikunitz/xz"
)

// xzStreamFlags returns the check type from the stream header and from the
// stream footer of a single xz stream, after checking the CRC32 of each.
func xzStreamFlags(t *testing.T, b []byte) (header, footer byte) {
	t.Helper()
	if len(b) < 24 || !bytes.HasPrefix(b, magicXz) || !bytes.HasSuffix(b, []byte("YZ")) {
		t.Fatalf("not a single xz stream: % x", b[:min(len(b), 16)])
	}
	// Header: magic(6) flags(2) crc32(4); flags are 0x00 then the check type.
	hf := b[6:8]
	if got, want := binary.LittleEndian.Uint32(b[8:12]), crc32.ChecksumIEEE(hf); got != want {
		t.Fatalf("stream header CRC32 %#x, want %#x", got, want)
	}
	// Footer: crc32(4) backward size(4) flags(2) "YZ".
	f := b[len(b)-12:]
	if got, want := binary.LittleEndian.Uint32(f[0:4]), crc32.ChecksumIEEE(f[4:10]); got != want {
		t.Fatalf("stream footer CRC32 %#x, want %#x", got, want)
	}
	if hf[0] != 0 || f[8] != 0 {
		t.Fatalf("reserved stream flag bits set: header % x, footer % x", hf, f[8:10])
	}
	return hf[1], f[9]
}

// TestXzWriterUsesCRC32 is why the xz writer exists in this form: the
// kernel's xz decoder refuses CRC64, the format's default, and a rootfs
// with it would not boot.
func TestXzWriterUsesCRC32(t *testing.T) {
	const checkCRC32 = 0x01
	for _, level := range []int{0, 1, 6, 9} {
		for _, size := range []int{0, 1, 300 << 10} {
			t.Run(fmt.Sprintf("level%d/%d", level, size), func(t *testing.T) {
				data := compress(t, Xz, WriterOptions{Level: level}, mixedData(size, 41))
				if !bytes.Equal(data[6:8], []byte{0x00, checkCRC32}) {
					t.Errorf("stream flags % x, want 00 01 (CRC32)", data[6:8])
				}
				header, footer := xzStreamFlags(t, data)
				if diff := cmp.Diff([2]byte{checkCRC32, checkCRC32}, [2]byte{header, footer}); diff != "" {
					t.Errorf("check type in header and footer (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestXzWriterCLI has xz itself confirm the check type and the integrity of
// what we write.
func TestXzWriterCLI(t *testing.T) {
	requireTool(t, "xz")
	data := compress(t, Xz, WriterOptions{}, mixedData(300<<10, 42))
	path := filepath.Join(t.TempDir(), "rootfs.cpio.xz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// --list cannot read standard input.
	list := mustRunTool(t, nil, "xz", "--robot", "-lvv", path)
	if !regexp.MustCompile(`(?m)^file\t.*\tCRC32\t`).Match(list) {
		t.Errorf("xz --robot -lvv does not report CRC32:\n%s", list)
	}
	human := mustRunTool(t, nil, "xz", "-lvv", path)
	if !regexp.MustCompile(`(?m)^\s*Check:\s+CRC32\s*$`).Match(human) {
		t.Errorf("xz -lvv does not report CRC32:\n%s", human)
	}
	mustRunTool(t, data, "xz", "-t")
}

// TestXzReadCheckTypes reads every check type the format has: the kernel
// only needs CRC32, but existing images may come from anywhere.
func TestXzReadCheckTypes(t *testing.T) {
	data := mixedData(100<<10, 43)
	type source struct {
		name string
		xz   func(t *testing.T) []byte
	}
	var sources []source
	for _, ck := range []struct {
		name string
		cfg  xz.WriterConfig
		cli  string
	}{
		{"none", xz.WriterConfig{NoCheckSum: true}, "none"},
		{"crc32", xz.WriterConfig{CheckSum: xz.CRC32}, "crc32"},
		{"crc64", xz.WriterConfig{CheckSum: xz.CRC64}, "crc64"},
		{"sha256", xz.WriterConfig{CheckSum: xz.SHA256}, "sha256"},
	} {
		sources = append(sources,
			source{"ulikunitz/" + ck.name, func(t *testing.T) []byte {
				var buf bytes.Buffer
				w, err := ck.cfg.NewWriter(&buf)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write(data); err != nil {
					t.Fatal(err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				return buf.Bytes()
			}},
			source{"cli/" + ck.name, func(t *testing.T) []byte {
				return mustRunTool(t, data, "xz", "-6", "-C", ck.cli, "-c")
			}},
		)
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			in := src.xz(t)
			got, c, err := decompress(bytes.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(digestOf(Xz, data), digestOf(c, got)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if header, _ := xzStreamFlags(t, in); header == 0 {
				return // no check field to damage
			}
			// The check field ends where the index starts; the footer
			// gives the index size.
			indexSize := (int(binary.LittleEndian.Uint32(in[len(in)-8:])) + 1) * 4
			bad := bytes.Clone(in)
			bad[len(in)-12-indexSize-1] ^= 0x01
			if _, _, err := decompress(bytes.NewReader(bad)); err == nil {
				t.Error("damaged check value accepted")
			}
		})
	}
}

// TestXzMultiBlockTruncated cuts a many-block stream (what `xz -T` makes)
// at and around every block boundary: ulikunitz/xz alone takes a cut there
// for the end of the stream, see xzReader.
func TestXzMultiBlockTruncated(t *testing.T) {
	data := mixedData(24<<10, 44)
	full := mustRunTool(t, data, "xz", "-0", "-C", "crc32", "--block-size=4KiB", "-c")
	got, _, err := decompress(bytes.NewReader(full))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("mismatch")
	}
	ends := xzBlockEnds(t, full)
	if len(ends) < 5 {
		t.Fatalf("only %d blocks", len(ends))
	}
	cuts := cutPoints(signatureLen[Xz], len(full))
	for _, end := range ends {
		for d := -3; d <= 3; d++ {
			cuts = append(cuts, end+d)
		}
	}
	for _, cut := range cuts {
		if out, _, err := decompress(bytes.NewReader(full[:cut])); err == nil {
			t.Fatalf("cut at %d of %d (blocks end at %v): no error, %d of %d bytes out", cut, len(full), ends, len(out), len(data))
		}
	}
}

// xzBlockEnds returns the offsets at which the blocks of a single-stream xz
// file end, from its index.
func xzBlockEnds(t *testing.T, b []byte) []int {
	t.Helper()
	indexSize := (int(binary.LittleEndian.Uint32(b[len(b)-8:])) + 1) * 4
	index := bytes.NewReader(b[len(b)-12-indexSize+1:]) // past the indicator
	count, err := binary.ReadUvarint(index)
	if err != nil {
		t.Fatal(err)
	}
	var ends []int
	off := 12
	for range count {
		unpadded, err := binary.ReadUvarint(index)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := binary.ReadUvarint(index); err != nil { // uncompressed size
			t.Fatal(err)
		}
		off += (int(unpadded) + 3) &^ 3
		ends = append(ends, off)
	}
	return ends
}

// TestXzTailAnyChunking feeds xz streams, with and without stream padding
// and cut short, to tailReader in pieces of every size up to the whole: a
// footer split across reads, or ahead of zeros split across reads, is
// still found, and nothing else is taken for one.
func TestXzTailAnyChunking(t *testing.T) {
	stream := compress(t, Xz, WriterOptions{Backend: PureGo}, mixedData(2<<10, 45))
	for _, tc := range []struct {
		name string
		in   []byte
		want bool
	}{
		{"stream", stream, true},
		{"padding 4", concat(stream, make([]byte, 4)), true},
		{"padding 24", concat(stream, make([]byte, 24)), true},
		{"padding not in fours", concat(stream, make([]byte, 6)), false},
		{"footer cut", stream[:len(stream)-1], false},
		{"zeros in place of the footer", concat(stream[:len(stream)-12], make([]byte, 12)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for size := 1; size <= len(tc.in); size++ {
				tail := &tailReader{}
				for b := tc.in; len(b) > 0; b = b[min(size, len(b)):] {
					tail.track(b[:min(size, len(b))])
				}
				if got := tail.endsWithFooter(); got != tc.want {
					t.Fatalf("pieces of %d bytes: endsWithFooter = %v, want %v", size, got, tc.want)
				}
			}
		})
	}
}
