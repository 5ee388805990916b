package compress

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// xzVariants are .xz files as xz writes them: several blocks (xz -T with
// a block size) in each check type, with a branch filter, two streams with
// stream padding between them; and the ones left to xz -T: one block, and
// blocks bigger than the budget allows.
func xzVariants(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	blocks := func(args ...string) []byte {
		return mustRunTool(t, data, "xz", append([]string{"-T2", "--block-size=1MiB", "-c"}, args...)...)
	}
	half := len(data) / 2
	two := append(mustRunTool(t, data[:half], "xz", "-T2", "--block-size=1MiB", "-1", "-C", "crc32", "-c"), make([]byte, 8)...)
	two = append(two, mustRunTool(t, data[half:], "xz", "-T2", "--block-size=1MiB", "-1", "-C", "crc64", "-c")...)
	return map[string][]byte{
		"crc32":       blocks("-1", "-C", "crc32"),
		"crc64":       blocks("-1", "-C", "crc64"),
		"sha256":      blocks("-1", "-C", "sha256"),
		"none":        blocks("-1", "-C", "none"),
		"x86":         blocks("--x86", "--lzma2=preset=1", "-C", "crc32"),
		"two streams": two,
		"one block":   mustRunTool(t, data, "xz", "-1", "-T1", "-C", "crc32", "-c"),
		"tiny blocks": mustRunTool(t, data, "xz", "-T2", "--block-size=64KiB", "-1", "-C", "crc32", "-c"),
	}
}

// robotBlocks is what `xz --robot --list -vv` says of every block: its
// offset, header and data sizes, uncompressed size, check and filters.
func robotBlocks(t *testing.T, path string) []string {
	t.Helper()
	out := mustRunTool(t, nil, "xz", "--robot", "--list", "-vv", path)
	var rows []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if f[0] != "block" {
			continue
		}
		// block, stream, block in stream, in file, offset, uncompressed
		// offset, total size, size, ratio, check, check value, header
		// size, flags, compressed size, memory, filters.
		rows = append(rows, strings.Join([]string{f[4], f[11], f[13], f[7], f[10], f[15]}, " "))
	}
	return rows
}

func ourBlocks(t *testing.T, path string, blocks []xzBlock) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []string
	for _, b := range blocks {
		check := make([]byte, xzCheckSize(b.check))
		if _, err := f.ReadAt(check, b.checkOffset()); err != nil {
			t.Fatal(err)
		}
		if b.check == 1 || b.check == 4 {
			slices.Reverse(check) // --robot prints a CRC as its value, in hex
		}
		value := hex.EncodeToString(check)
		if b.check == 0 {
			value = "---" // --robot's word for no check
		}
		rows = append(rows, strings.Join([]string{strconv.FormatInt(b.offset, 10), strconv.FormatInt(b.headerSize, 10),
			strconv.FormatInt(b.dataSize, 10), strconv.FormatInt(b.size, 10), value, strings.Join(b.filters, " ")}, " "))
	}
	return rows
}

// TestXzBlocksAsXzListsThem reads the layout of each variant and compares
// it with what `xz --list` says of it.
func TestXzBlocksAsXzListsThem(t *testing.T) {
	requireTool(t, "xz")
	data := mixedData(5<<20, 3)
	for name, stream := range xzVariants(t, data) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.xz")
			if err := os.WriteFile(path, stream, 0o644); err != nil {
				t.Fatal(err)
			}
			blocks, err := xzBlocks(bytes.NewReader(stream), 0, int64(len(stream)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(robotBlocks(t, path), ourBlocks(t, path, blocks)); diff != "" {
				t.Errorf("blocks differ from xz --list's (-xz +ours):\n%s", diff)
			}
		})
	}
}

// TestXzBlocksRefuses lists what is left to xz reading the stream whole.
func TestXzBlocksRefuses(t *testing.T) {
	requireTool(t, "xz")
	stream := xzVariants(t, mixedData(3<<20, 5))["crc32"]
	flip := func(off int) []byte {
		b := bytes.Clone(stream)
		b[off] ^= 0x40
		return b
	}
	blocks, err := xzBlocks(bytes.NewReader(stream), 0, int64(len(stream)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"trailing junk", append(bytes.Clone(stream), "junk"...)},
		{"padding not in fours", append(bytes.Clone(stream), 0, 0)},
		{"truncated", stream[:len(stream)-1]},
		{"footer damaged", flip(len(stream) - 6)},
		{"index damaged", flip(len(stream) - 14)},
		{"stream header damaged", flip(7)},
		{"block header damaged", flip(int(blocks[1].offset) + 2)},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := xzBlocks(bytes.NewReader(tc.in), 0, int64(len(tc.in)))
			if !errors.Is(err, ErrXzLayout) {
				t.Fatalf("got %v, want ErrXzLayout", err)
			}
		})
	}
}

// openHanded opens path with the default backend as a FileSource that
// hands the tool the file.
func openHanded(t *testing.T, path string) (io.ReadCloser, *fileSource) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	src := &fileSource{f: f, path: path, allow: true}
	r, _, err := NewReader(src, ReaderOptions{Backend: External})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if src.handed != nil {
			src.handed.Close()
		}
	})
	return r, src
}

// TestXzParallel decodes each variant with the default backend and
// compares the bytes with xz -dc's; blocks are decoded one xz a block
// where the layout allows it, and xz -T reads the rest.
func TestXzParallel(t *testing.T) {
	requireTool(t, "xz")
	if runtime.NumCPU() < 2 {
		t.Skip("one core: xz -T reads every stream")
	}
	data := mixedData(5<<20, 3)
	for name, stream := range xzVariants(t, data) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.xz")
			if err := os.WriteFile(path, stream, 0o644); err != nil {
				t.Fatal(err)
			}
			r, src := openHanded(t, path)
			_, parallel := r.(*xzParallel)
			if want := name != "one block" && name != "tiny blocks"; parallel != want {
				t.Errorf("decoded by blocks: %v, want %v", parallel, want)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("decoded %d bytes that differ from the %d compressed", len(got), len(data))
			}
			if off, _ := src.handed.Seek(0, io.SeekCurrent); off != int64(len(stream)) {
				t.Errorf("progress at %d after the end, want %d", off, len(stream))
			}
		})
	}
}

// TestXzParallelDamage damages a block's data and a block's check: the
// error names the block, after the blocks before it were returned whole.
func TestXzParallelDamage(t *testing.T) {
	requireTool(t, "xz")
	if runtime.NumCPU() < 2 {
		t.Skip("one core: xz -T reads every stream")
	}
	data := mixedData(5<<20, 3)
	stream := xzVariants(t, data)["crc32"]
	blocks, err := xzBlocks(bytes.NewReader(stream), 0, int64(len(stream)))
	if err != nil {
		t.Fatal(err)
	}
	b := blocks[2]
	for _, tc := range []struct {
		name string
		off  int64
		want string
	}{
		{"data", b.offset + b.headerSize + b.dataSize/2, "block 3 at offset " + strconv.FormatInt(b.offset, 10) + ": "},
		{"check", b.checkOffset(), "block 3 at offset " + strconv.FormatInt(b.offset, 10) + ": check "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			damaged := bytes.Clone(stream)
			damaged[tc.off] ^= 0x55
			path := filepath.Join(t.TempDir(), "in.xz")
			if err := os.WriteFile(path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			r, _ := openHanded(t, path)
			got, err := io.ReadAll(r)
			r.Close()
			if n := openBlockFiles(t); n != 0 {
				t.Errorf("%d block files open after Close", n)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "xz: ") {
				t.Fatalf("got error %v, want one starting xz: and naming %q", err, tc.want)
			}
			if before := blocks[2].offset; len(got) < 2<<20 {
				t.Errorf("returned %d bytes before the damage at block 3 (offset %d), want the first two blocks whole", len(got), before)
			}
			if !bytes.Equal(got[:2<<20], data[:2<<20]) {
				t.Error("the blocks before the damage differ")
			}
		})
	}
}

// openBlockFiles counts this process's descriptors of block files.
func openBlockFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); strings.HasPrefix(target, "/memfd:xz block") {
			n++
		}
	}
	return n
}

// TestXzParallelCloseEarly stops reading after the first bytes: Close
// kills the xz still running, returns at once and leaves no block file
// open.
func TestXzParallelCloseEarly(t *testing.T) {
	requireTool(t, "xz")
	if runtime.NumCPU() < 2 {
		t.Skip("one core: xz -T reads every stream")
	}
	data := mixedData(8<<20, 9)
	stream := mustRunTool(t, data, "xz", "-T2", "--block-size=1MiB", "-6", "-C", "crc32", "-c")
	path := filepath.Join(t.TempDir(), "in.xz")
	if err := os.WriteFile(path, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := openHanded(t, path)
	if _, err := io.ReadFull(r, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	start := time.Now()
	r.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if _, err := r.Read(make([]byte, 1)); err == nil {
		t.Error("Read after Close gave no error")
	}
	if after := runtime.NumGoroutine(); after >= before {
		t.Errorf("%d goroutines after Close, %d before: the block goroutines did not end", after, before)
	}
	if n := openBlockFiles(t); n != 0 {
		t.Errorf("%d block files open after Close", n)
	}
}

// FuzzXzBlocks reads the layout of any bytes: no panic, and a layout it
// accepts lies within the input, block after block, each holding at least
// a header and a byte of data.
func FuzzXzBlocks(f *testing.F) {
	if _, err := exec.LookPath("xz"); err == nil {
		data := mixedData(4<<10, 13)
		for _, args := range [][]string{
			{"-T2", "--block-size=1KiB", "-1", "-C", "crc32"},
			{"-T2", "--block-size=1KiB", "-1", "-C", "sha256"},
			{"-T2", "--block-size=1KiB", "--x86", "--lzma2=preset=1", "-C", "none"},
			{"-1", "-T1"},
		} {
			f.Add(mustRunTool(f, data, "xz", append(args, "-c")...))
		}
	}
	f.Add(bytes.Clone(magicXz))
	f.Fuzz(func(t *testing.T, in []byte) {
		blocks, err := xzBlocks(bytes.NewReader(in), 0, int64(len(in)))
		if err != nil {
			if !errors.Is(err, ErrXzLayout) {
				t.Fatalf("error %v is not ErrXzLayout", err)
			}
			return
		}
		var prev int64 = 12
		for i, b := range blocks {
			if b.offset < prev || b.headerSize < 8 || b.dataSize < 1 || b.size < 0 || b.end() > int64(len(in)) {
				t.Fatalf("block %d %+v outside the input (%d bytes) or before the previous end %d", i+1, b, len(in), prev)
			}
			prev = b.end()
		}
	})
}

// resize rewrites what the header and the index of block k say it holds
// to size, an integer of the same encoded length, with every CRC32 made
// right again: a layout that lies consistently.
func resize(t *testing.T, stream []byte, blocks []xzBlock, k int, size int64) []byte {
	t.Helper()
	out := bytes.Clone(stream)
	vli := func(v uint64) []byte {
		var b []byte
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		return append(b, byte(v))
	}
	old, repl := vli(uint64(blocks[k].size)), vli(uint64(size))
	if len(old) != len(repl) {
		t.Fatalf("%d and %d encode to different lengths", blocks[k].size, size)
	}
	// The header: flags, then the compressed size (if there), then this.
	b := blocks[k]
	h := out[b.offset : b.offset+b.headerSize]
	p := 2
	if h[1]&0x40 != 0 {
		_, rest, _ := xzVLI(h[p:])
		p = len(h) - len(rest)
	}
	if h[1]&0x80 == 0 || !bytes.Equal(h[p:p+len(old)], old) {
		t.Fatal("the block header gives no uncompressed size")
	}
	copy(h[p:], repl)
	binary.LittleEndian.PutUint32(h[len(h)-4:], crc32.ChecksumIEEE(h[:len(h)-4]))
	// The index: indicator, count, then (unpadded, uncompressed) pairs.
	indexSize := (int64(binary.LittleEndian.Uint32(out[len(out)-8:])) + 1) * 4
	idx := out[int64(len(out))-12-indexSize : len(out)-12]
	_, rest, _ := xzVLI(idx[1:])
	for i := 0; i <= k; i++ {
		_, rest, _ = xzVLI(rest)
		if i == k {
			at := len(idx) - len(rest)
			copy(idx[at:], repl)
		}
		_, rest, _ = xzVLI(rest)
	}
	binary.LittleEndian.PutUint32(idx[len(idx)-4:], crc32.ChecksumIEEE(idx[:len(idx)-4]))
	return out
}

// TestXzParallelLyingIndex gives a block fewer or more bytes than it
// holds, consistently in its header and the index: the size xz wrote
// names the block, and nothing hangs. When every block says 2 MiB, the
// block files are 3 MiB and the first block's xz, with 8 MiB to give, is
// stopped at the file's end: a bomb costs no more than the file.
func TestXzParallelLyingIndex(t *testing.T) {
	requireTool(t, "xz")
	if runtime.NumCPU() < 2 {
		t.Skip("one core: xz -T reads every stream")
	}
	stream := mustRunTool(t, mixedData(24<<20, 3), "xz", "-T2", "--block-size=8MiB", "-1", "-C", "crc32", "-c")
	blocks, err := xzBlocks(bytes.NewReader(stream), 0, int64(len(stream)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		lied  []int // blocks given size
		size  int64
		named string
		want  string
	}{
		{"fewer", []int{1}, 2 << 20, "block 2", "more than the 2097152 bytes the index gives"},
		{"more", []int{1}, 8<<20 + 1, "block 2", "8388608 bytes, where the index gives 8388609"},
		{"every block fewer", []int{0, 1, 2}, 2 << 20, "block 1", "more than the 2097152 bytes the index gives"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lying := stream
			for _, k := range tc.lied {
				lying = resize(t, lying, blocks, k, tc.size)
			}
			if _, err := xzBlocks(bytes.NewReader(lying), 0, int64(len(lying))); err != nil {
				t.Fatalf("the lying layout does not read: %v", err)
			}
			path := filepath.Join(t.TempDir(), "in.xz")
			if err := os.WriteFile(path, lying, 0o644); err != nil {
				t.Fatal(err)
			}
			r, _ := openHanded(t, path)
			if _, ok := r.(*xzParallel); !ok {
				t.Fatal("not decoded by blocks")
			}
			done := make(chan error, 1)
			go func() {
				_, err := io.ReadAll(r)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.named+" at offset") || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v, want %s named and %q", err, tc.named, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("no end after a minute")
			}
			r.Close()
		})
	}
}
