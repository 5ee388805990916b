package splice

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

// xzBlocks compresses p as `xz --block-size` does: one stream, blocks of
// blockSize bytes, CRC32 checks.
func xzBlocks(t testing.TB, p []byte, blockSize int64) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := xz.WriterConfig{CheckSum: xz.CRC32, BlockSize: blockSize, DictCap: 1 << 20}.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(p)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func unxz(t testing.TB, p []byte) []byte {
	t.Helper()
	return decodeWith(t, goXzDecode, p)
}

// goXzStream is the new-block compressor of --backend go.
func goXzStream(src []byte) ([]byte, error) {
	var out bytes.Buffer
	w, err := xz.WriterConfig{CheckSum: xz.CRC32, DictCap: 1 << 20}.NewWriter(&out)
	if err != nil {
		return nil, err
	}
	w.Write(src)
	err = w.Close()
	return out.Bytes(), err
}

func goXzDecode(r io.Reader) (io.Reader, error) { return xz.NewReader(r) }

func spliceXz(t testing.TB, comp, in, out []byte, chunk, window, removed int, stream func([]byte) ([]byte, error)) ([]byte, *BlockSplicer) {
	t.Helper()
	lay, err := ScanXz(bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	var res bytes.Buffer
	s := NewXz(&res, bytes.NewReader(comp), lay, XzOptions{BlockSize: int(lay.MaxLen()), Compress: stream, Decode: goXzDecode, Queue: 2})
	return spliceWith(t, s, &res, comp, in, out, chunk, window, removed)
}

func TestXzSplice(t *testing.T) {
	const bs = 64 << 10
	in := corpus(21, 20*bs+1234)
	comp := xzBlocks(t, in, bs)
	testBlockSplice(t, in, comp, bs, func(out []byte, chunk, removed int) ([]byte, *BlockSplicer) {
		return spliceXz(t, comp, in, out, chunk, 4<<20, removed, goXzStream)
	}, unxz, func(t *testing.T, chunk int, got []byte, s *BlockSplicer) {
		lay, err := ScanXz(bytes.NewReader(got), int64(len(got)))
		if err != nil {
			t.Fatalf("chunk %d: the splice's index: %v", chunk, err)
		}
		if len(lay.Blocks) != s.Copied+s.Compressed || lay.Check != XzCheckCRC32 {
			t.Errorf("chunk %d: index of %d blocks, check %d; wrote %d+%d", chunk, len(lay.Blocks), lay.Check, s.Copied, s.Compressed)
		}
	})
}

// TestXzSpliceTool: xz reads and checks a splice of its own multi-block
// output whose new blocks it compressed, as apply does.
func TestXzSpliceTool(t *testing.T) {
	runTool(t, nil, "xz", "--version") // skips, or fails, without xz
	xzPath, _ := exec.LookPath("xz")
	// Blocks over the lz4 splicer's 8 MiB, which new xz blocks must not
	// be cut to: the one changed block comes back as one block.
	in := corpus(22, 20<<20)
	comp := runTool(t, in, "xz", "-1", "-C", "crc32", "-T2", "--block-size=9MiB", "-c")
	out := applyEdits(in, []edit{{100, 5000, ""}, {2<<20 + 5, 0, "inserted"}, {len(in), 0, "the end, appended"}})
	tool := func(src []byte) ([]byte, error) {
		cmd := exec.Command(xzPath, "-1", "-C", "crc32", "-T1", "-c")
		cmd.Stdin = bytes.NewReader(src)
		cmd.Env = append(os.Environ(), "LC_ALL=C", "XZ_DEFAULTS=", "XZ_OPT=")
		return cmd.Output()
	}
	got, s := spliceXz(t, comp, in, out, 32<<10, 8<<20, 5000, tool)
	if s.Copied != 2 || s.Compressed != 2 {
		t.Errorf("%d blocks copied, %d compressed; want the first compressed as one block, the others copied, the appended bytes a block of their own", s.Copied, s.Compressed)
	}
	runTool(t, got, "xz", "-t")
	if !bytes.Equal(runTool(t, got, "xz", "-dc"), out) {
		t.Fatal("xz -dc of the splice differs from the edited stream")
	}
	file := filepath.Join(t.TempDir(), "splice.xz")
	if err := os.WriteFile(file, got, 0o644); err != nil {
		t.Fatal(err)
	}
	list := string(runTool(t, nil, "xz", "--robot", "-lvv", file))
	blocks := 0
	for _, line := range strings.Split(list, "\n") {
		f := strings.Split(line, "\t")
		if f[0] == "block" {
			blocks++
			if f[9] != "CRC32" {
				t.Errorf("xz -lvv: block with check %q: %s", f[9], line)
			}
		}
	}
	if blocks != s.Copied+s.Compressed {
		t.Errorf("xz -lvv lists %d blocks, %d were written", blocks, s.Copied+s.Compressed)
	}
}

func TestScanXz(t *testing.T) {
	in := corpus(23, 300000)
	comp := xzBlocks(t, in, 100000)
	lay, err := ScanXz(bytes.NewReader(comp), int64(len(comp)))
	if err != nil || len(lay.Blocks) != 3 || lay.Check != XzCheckCRC32 {
		t.Fatalf("ScanXz: %+v, %v", lay, err)
	}
	var at int64 = 12
	for i, b := range lay.Blocks {
		if b.Offset != at || b.Start != int64(i)*100000 || b.Len != min(100000, 300000-b.Start) {
			t.Errorf("block %d: %+v", i, b)
		}
		at += b.Size
	}
	two := append(append([]byte(nil), comp...), comp...)
	if _, err := ScanXz(bytes.NewReader(two), int64(len(two))); !errors.Is(err, ErrUnhandled) {
		t.Errorf("two streams: %v, want ErrUnhandled", err)
	}
	bad := append([]byte(nil), comp...)
	bad[len(bad)-20] ^= 1 // in the index
	if _, err := ScanXz(bytes.NewReader(bad), int64(len(bad))); err == nil {
		t.Error("a damaged index was accepted")
	}
}

// FuzzXzSplice applies random edits to random inputs cut into xz blocks:
// the splice decodes to the edited stream.
func FuzzXzSplice(f *testing.F) {
	f.Add(uint64(1), uint16(300), []byte{10, 20, 0, 200, 5, 5})
	f.Add(uint64(2), uint16(4000), []byte{0, 0, 0, 255, 255, 255})
	f.Fuzz(func(t *testing.T, seed uint64, size uint16, ops []byte) {
		fuzzSplice{
			compress: func(in []byte) []byte { return xzBlocks(t, in, 4096) },
			splice: func(comp, in, out []byte, chunk, removed int) []byte {
				got, _ := spliceXz(t, comp, in, out, chunk, 8192, removed, goXzStream)
				return got
			},
			decode: unxz,
			tool:   "xz",
		}.run(t, seed, size, ops)
	})
}
