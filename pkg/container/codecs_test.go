package container

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// xorCodec is the tests' own codec, added by its one row: a magic, then
// blocks (a 4-byte big-endian size, the bytes xor 0x5a), up to a block of
// size 0. TestEveryCodecHandled takes it where it takes every real codec:
// sniffed, read, written, and read as the segment after a raw cpio.
var xorCodec = compress.Register(compress.Spec{
	Name: "xortest", Aliases: []string{"xt"}, Suffix: ".xt",
	Magic:       func(b []byte) bool { return bytes.HasPrefix(b, xorMagic) },
	KernelMagic: xorMagic[:2], KernelName: "xortest",
	Decode: func(br *bufio.Reader, _ io.Reader) (io.Reader, func() error, error) {
		return &xorReader{r: br}, nil, nil
	},
	SegmentLen: xorLen,
	Encode: func(w io.Writer, _, _ int) (io.WriteCloser, error) {
		return &xorWriter{w: w}, nil
	},
	Levels: compress.Levels{Max: 1, Buildroot: 1, InitramfsTools: 1, Dracut: 1},
})

var xorMagic = []byte("\xa5XOR")

type xorWriter struct {
	w       io.Writer
	started bool
}

func (x *xorWriter) block(p []byte) error {
	b := xorMagic[:0:0]
	if !x.started {
		b, x.started = append(b, xorMagic...), true
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
	for _, c := range p {
		b = append(b, c^0x5a)
	}
	_, err := x.w.Write(b)
	return err
}

func (x *xorWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return len(p), x.block(p)
}

func (x *xorWriter) Close() error { return x.block(nil) }

type xorReader struct {
	r    *bufio.Reader
	in   bool   // past the magic
	left uint32 // bytes of the current block
	end  bool   // past the block of size 0
}

func (x *xorReader) Read(p []byte) (int, error) {
	var h [4]byte
	if !x.in {
		if _, err := io.ReadFull(x.r, h[:]); err != nil || !bytes.Equal(h[:], xorMagic) {
			return 0, fmt.Errorf("bad magic: %w", io.ErrUnexpectedEOF)
		}
		x.in = true
	}
	if x.left == 0 && !x.end {
		if _, err := io.ReadFull(x.r, h[:]); err != nil {
			return 0, io.ErrUnexpectedEOF
		}
		x.left = binary.BigEndian.Uint32(h[:])
		x.end = x.left == 0
	}
	if x.end {
		return 0, io.EOF
	}
	n, err := x.r.Read(p[:min(len(p), int(x.left))])
	for i := range n {
		p[i] ^= 0x5a
	}
	x.left -= uint32(n)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// xorLen walks the blocks to the one of size 0.
func xorLen(r io.ReaderAt, size int64) (int64, error) {
	at := int64(len(xorMagic))
	for {
		var h [4]byte
		if _, err := r.ReadAt(h[:], at); err != nil {
			return 0, fmt.Errorf("xortest: block at %d: %w", at, io.ErrUnexpectedEOF)
		}
		n := int64(binary.BigEndian.Uint32(h[:]))
		if at += 4 + n; n == 0 {
			return at, nil
		}
		if at > size {
			return 0, fmt.Errorf("xortest: block past the end: %w", io.ErrUnexpectedEOF)
		}
	}
}

// docTable returns the rows of the table in docs/formats.md whose header
// starts with header, keyed by their first cell (backticks dropped).
func docTable(t *testing.T, header string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/formats.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows[strings.Trim(cells[0], "`")] = cells
		case in:
			return rows
		}
	}
	if !in {
		t.Fatalf("docs/formats.md has no table %q", header)
	}
	return rows
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestEveryCodecHandled walks pkg/compress's codec table: each row's
// names, its stream (sniffed and read from what its tool, or else its own
// writer, writes), its writer (read back by us and by its tool, at each
// producer's level), and, for a codec the kernel reads, its segment after
// and before a raw cpio as unpack_to_rootfs takes them; each single-stream
// codec but the tests' own has its row in docs/formats.md, whose columns
// agree with the table and with splicers.
func TestEveryCodecHandled(t *testing.T) {
	doc := docTable(t, "| `--compress` |")
	documented := 0
	kernel := kernelMagicsInDoc(t)
	main := cpioOf(t, "etc/", "etc/crictl.yaml", strings.Repeat("usr/lib/x", 40))
	for _, c := range compress.All() {
		spec := compress.SpecOf(c)
		if spec.Decode != nil && c != xorCodec {
			documented++
		}
		if spec.KernelMagic != nil && c != xorCodec && !kernel[string(spec.KernelMagic)] {
			t.Errorf("%s: the kernel magic %x is not one docs/formats.md says the kernel knows", spec.Name, spec.KernelMagic)
		}
		delete(kernel, string(spec.KernelMagic))
		t.Run(spec.Name, func(t *testing.T) {
			checkCodecNames(t, c, spec)
			if spec.Decode != nil && c != xorCodec {
				checkCodecDoc(t, c, spec, doc[spec.Name])
			}
			stream := squeezeAs(t, c, main)
			checkCodecStream(t, c, spec, stream, main)
			checkCodecWriter(t, c, spec, main)
			checkCodecSegments(t, c, spec)
		})
	}
	if len(doc) != documented {
		t.Errorf("docs/formats.md's compressions table has %d rows, the codec table %d single-stream codecs", len(doc), documented)
	}
	for magic := range kernel {
		t.Errorf("docs/formats.md says the kernel knows the magic %x, which no codec's KernelMagic is", magic)
	}
	for c := range splicers {
		if !c.CanWrite() {
			t.Errorf("a splicer for %s, which is not written", c)
		}
	}
}

// kernelMagicsInDoc are the magics docs/formats.md says the kernel's
// decompress_method knows, but for 1f 9e, which no codec here reads.
func kernelMagicsInDoc(t *testing.T) map[string]bool {
	b, err := os.ReadFile("../../docs/formats.md")
	mustDo(t, err)
	_, list, _ := strings.Cut(string(b), "whose magic says its method:")
	list, _, _ = strings.Cut(list, "Each is decompressed")
	magics := map[string]bool{}
	for _, m := range regexp.MustCompile("\\(`([^`]+)`\\)").FindAllStringSubmatch(list, -1) {
		magic, err := hex.DecodeString(strings.ReplaceAll(m[1], " ", ""))
		if err != nil {
			magic = []byte(m[1])
		}
		magics[string(magic)] = true
	}
	if len(magics) == 0 {
		t.Fatal("docs/formats.md lists no method of the kernel's")
	}
	return magics
}

// squeezeAs compresses b as c: with its tool if it has one, else with its
// own writer.
func squeezeAs(t *testing.T, c compress.Codec, b []byte) []byte {
	t.Helper()
	if tool := compress.SpecOf(c).Tool; tool != nil {
		return squeeze(t, b, tool...)
	}
	var buf bytes.Buffer
	w, _, err := compress.NewWriter(&buf, c, compress.WriterOptions{Backend: compress.PureGo})
	mustDo(t, err)
	_, err = w.Write(b)
	mustDo(t, err)
	mustDo(t, w.Close())
	return buf.Bytes()
}

// checkCodecNames checks that Codec.String, ParseCodec and NamedCodec say
// the row's names.
func checkCodecNames(t *testing.T, c compress.Codec, spec compress.Spec) {
	t.Helper()
	if got := c.String(); got != spec.Name {
		t.Errorf("String %q, the row's Name %q", got, spec.Name)
	}
	for _, name := range append([]string{spec.Name}, spec.Aliases...) {
		got, err := compress.ParseCodec(name)
		if spec.Decode != nil && (err != nil || got != c) || spec.Decode == nil && err == nil {
			t.Errorf("ParseCodec(%q) = %v, %v", name, got, err)
		}
	}
	named, _, ok := compress.NamedCodec("rootfs.cpio" + spec.Suffix)
	if spec.Suffix == "" && ok || spec.Suffix != "" && (!ok || named != c) {
		t.Errorf("NamedCodec(rootfs.cpio%s) = %v, %v", spec.Suffix, named, ok)
	}
}

// checkCodecDoc checks the codec's row in docs/formats.md.
func checkCodecDoc(t *testing.T, c compress.Codec, spec compress.Spec, cells []string) {
	t.Helper()
	if len(cells) != 6 {
		t.Fatalf("no row (of 6 cells) for %q in docs/formats.md's compressions table: %q", spec.Name, cells)
	}
	suffix := ""
	if spec.Suffix != "" {
		suffix = "`" + spec.Suffix + "`"
	}
	want := []string{"`" + spec.Name + "`", suffix, cells[2], "yes", yesNo(c.CanWrite()), yesNo(splicers[c] != nil)}
	if diff := cmp.Diff(want, cells); diff != "" {
		t.Errorf("docs/formats.md's row (-want +got):\n%s", diff)
	}
	sig := strings.ReplaceAll(strings.Trim(cells[2], "`"), " ", "")
	if magic, err := hex.DecodeString(sig); err == nil && (spec.Magic == nil || !spec.Magic(append(magic, make([]byte, 16)...))) {
		t.Errorf("the signature %s is not the row's Magic", cells[2])
	}
}

// checkCodecStream checks that Sniff and NewReader read what the codec's
// tool wrote, and that KernelMagic says the row's magic.
func checkCodecStream(t *testing.T, c compress.Codec, spec compress.Spec, stream, data []byte) {
	t.Helper()
	got, err := compress.Sniff(bufio.NewReader(bytes.NewReader(stream)))
	switch {
	case spec.Decode == nil:
		if !errors.Is(err, compress.ErrUnsupported) {
			t.Errorf("Sniff = %v, %v; want it refused as unsupported, having no Decode", got, err)
		}
	case err != nil || got != c:
		t.Errorf("Sniff = %v, %v; want %v", got, err, c)
	default:
		r, got, err := compress.NewReader(bytes.NewReader(stream), compress.ReaderOptions{Backend: compress.PureGo})
		mustDo(t, err)
		defer r.Close()
		back, err := io.ReadAll(r)
		if err != nil || got != c || !bytes.Equal(back, data) {
			t.Errorf("NewReader: codec %v, %d bytes, %v; want %v and the %d bytes", got, len(back), err, c, len(data))
		}
	}
	kc, name, ok := compress.KernelMagic(stream)
	if spec.KernelMagic != nil && (!ok || kc != c || name != spec.KernelName) || spec.KernelMagic == nil && ok {
		t.Errorf("KernelMagic = %v, %q, %v; the row says %x, %q", kc, name, ok, spec.KernelMagic, spec.KernelName)
	}
}

// checkCodecWriter checks that what NewWriter writes at each producer's
// level reads back, with NewReader and with the codec's tool.
func checkCodecWriter(t *testing.T, c compress.Codec, spec compress.Spec, data []byte) {
	t.Helper()
	if !c.CanWrite() {
		return
	}
	levels := []int{spec.Levels.Buildroot, spec.Levels.InitramfsTools, spec.Levels.Dracut}
	for _, level := range levels {
		if c != compress.None && (level < 1 || level > spec.Levels.Max) {
			t.Errorf("a producer's level %d, out of 1-%d", level, spec.Levels.Max)
		}
		var buf bytes.Buffer
		w, _, err := compress.NewWriter(&buf, c, compress.WriterOptions{Level: level, Backend: compress.PureGo})
		mustDo(t, err)
		_, err = w.Write(data)
		mustDo(t, err)
		mustDo(t, w.Close())
		r, got, err := compress.NewReader(bytes.NewReader(buf.Bytes()), compress.ReaderOptions{Backend: compress.PureGo})
		mustDo(t, err)
		back, err := io.ReadAll(r)
		r.Close()
		if err != nil || got != c || !bytes.Equal(back, data) {
			t.Errorf("level %d: read back as %v, %d bytes, %v", level, got, len(back), err)
		}
		if spec.Tool != nil && !bytes.Equal(squeeze(t, buf.Bytes(), spec.Tool[0], "-d", "-c"), data) {
			t.Errorf("%s -d does not read back what compress writes", spec.Tool[0])
		}
	}
}

// checkCodecSegments reads an initrd of a raw cpio and a segment of c, in
// both orders, as init/initramfs.c unpack_to_rootfs reads it.
func checkCodecSegments(t *testing.T, c compress.Codec, spec compress.Spec) {
	t.Helper()
	if spec.KernelMagic == nil {
		return
	}
	early := cpioOf(t, "kernel/", "kernel/x86/", "kernel/x86/microcode/", "kernel/x86/microcode/GenuineIntel.bin")
	main := cpioOf(t, "etc/", "etc/crictl.yaml")
	bare := main[:bytes.LastIndex(main, []byte("070701"))]
	eN, mN := len(early), []string{"etc", "etc/crictl.yaml", "TRAILER!!!"}
	earlyNames := []string{"kernel", "kernel/x86", "kernel/x86/microcode", "kernel/x86/microcode/GenuineIntel.bin", "TRAILER!!!"}

	z := squeezeAs(t, c, main)
	names, segs, err := readSegments(t, cat(early, z))
	mustDo(t, err)
	want := []segRow{{0, int64(eN), 0, "none", 5}, {int64(eN), int64(len(z)), 0, spec.Name, 3}}
	if diff := cmp.Diff(want, segs); diff != "" {
		t.Errorf("early+%s: segments (-want +got):\n%s", spec.Name, diff)
	}
	if diff := cmp.Diff(append(append([]string{}, earlyNames...), mN...), names); diff != "" {
		t.Errorf("early+%s: entries (-want +got):\n%s", spec.Name, diff)
	}

	// Compressed, zero padding to a multiple of 4 and some, then a raw
	// cpio (the red team's case), the trailer left out.
	z = squeezeAs(t, c, bare)
	n := 8 - len(z)%4
	names, segs, err = readSegments(t, cat(pad(z, n), early))
	mustDo(t, err)
	want = []segRow{{0, int64(len(z)), int64(n), spec.Name, 2}, {int64(len(z) + n), int64(eN), 0, "none", 5}}
	if diff := cmp.Diff(want, segs); diff != "" {
		t.Errorf("%s+pad+raw: segments (-want +got):\n%s", spec.Name, diff)
	}
	if diff := cmp.Diff(append([]string{"etc", "etc/crictl.yaml"}, earlyNames...), names); diff != "" {
		t.Errorf("%s+pad+raw: entries (-want +got):\n%s", spec.Name, diff)
	}
}
