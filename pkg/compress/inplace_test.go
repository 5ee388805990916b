package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// memInPlace is an InPlaceReader over memory, which records what the
// decoder took from it in place.
type memInPlace struct {
	data    []byte
	off     int
	refuse  bool  // InPlace says no
	readMax int   // bytes a Read returns at most, if not 0
	broken  error // what Check says

	mu     sync.Mutex
	nexted int // bytes handed out by Next
	done   int // bytes handed back by Done
}

func (m *memInPlace) Read(p []byte) (int, error) {
	if m.off == len(m.data) {
		return 0, io.EOF
	}
	if m.readMax > 0 && len(p) > m.readMax {
		p = p[:m.readMax]
	}
	n := copy(p, m.data[m.off:])
	m.off += n
	return n, nil
}

func (m *memInPlace) InPlace() bool { return !m.refuse }

func (m *memInPlace) Check() error { return m.broken }

func (m *memInPlace) Next(n int) ([]byte, error) {
	rest := m.data[m.off:]
	var err error
	switch {
	case len(rest) == 0:
		err = io.EOF
	case len(rest) < n:
		err = io.ErrUnexpectedEOF
	default:
		rest = rest[:n]
	}
	m.off += len(rest)
	m.mu.Lock()
	m.nexted += len(rest)
	m.mu.Unlock()
	return rest, err
}

func (m *memInPlace) Done(p []byte) {
	m.mu.Lock()
	m.done += len(p)
	m.mu.Unlock()
}

func decompressInPlace(src *memInPlace) ([]byte, Codec, error) {
	return decompress(src)
}

// TestLz4LegacyInPlace reads legacy streams from a source that hands out
// its bytes in place: the bytes the sniffing buffer read ahead come first,
// a block may straddle them and the rest, and every block decoded in
// place is handed back.
func TestLz4LegacyInPlace(t *testing.T) {
	big := mixedData(3*lz4LegacyBlock+777, 61)
	one := big[:lz4LegacyBlock+999] // a size trailer is at most a block's bound
	small := mixedData(20000, 62)
	bigStream := compress(t, Lz4Legacy, WriterOptions{Level: 1}, big)
	oneStream := compress(t, Lz4Legacy, WriterOptions{Level: 1}, one)
	smallStream := compress(t, Lz4Legacy, WriterOptions{Level: 1}, small)
	if len(oneStream) <= readBufSize || len(smallStream) >= readBufSize {
		t.Fatalf("streams of %d and %d bytes do not straddle the %d-byte buffer", len(bigStream), len(smallStream), readBufSize)
	}
	le32 := func(v int) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
	tests := []struct {
		name       string
		stream     []byte
		refuse     bool
		broken     error
		want       []byte
		wantErr    error
		wantNexted bool // blocks were taken in place
	}{
		{name: "several blocks", stream: bigStream, want: big, wantNexted: true},
		{name: "within the read-ahead", stream: smallStream, want: small},
		{name: "refused", stream: bigStream, refuse: true, want: big},
		{name: "size trailer", stream: concat(oneStream, le32(len(one))), want: one, wantNexted: true},
		{name: "concatenated", stream: concat(smallStream, bigStream), want: concat(small, big), wantNexted: true},
		{name: "check fails", stream: bigStream, broken: errBroken, wantErr: errBroken},
		{name: "truncated in a block", stream: bigStream[:len(bigStream)-100], wantErr: io.ErrUnexpectedEOF},
		{name: "truncated in a header", stream: concat(bigStream, []byte{1, 0}), wantErr: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &memInPlace{data: tt.stream, refuse: tt.refuse, broken: tt.broken}
			got, c, err := decompressInPlace(src)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				checkCorruptErr(t, Lz4Legacy, tt.name, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(digestOf(Lz4Legacy, tt.want), digestOf(c, got)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if got := src.nexted > 0; got != tt.wantNexted {
				t.Errorf("took %d bytes in place, want some: %v", src.nexted, tt.wantNexted)
			}
			// Headers are taken in place too, 4 bytes each, and not
			// handed back; every block is.
			if src.done == 0 && tt.wantNexted || src.done > src.nexted {
				t.Errorf("handed back %d of the %d bytes taken in place", src.done, src.nexted)
			}
		})
	}
}

var errBroken = errors.New("lease broken")

// TestLz4LegacyInPlaceFault maps a stream from a file, then truncates the
// file in its first block, which straddles the read-ahead and so is
// copied out of the mapping in Go code: the fault (SIGBUS) there must be
// an error naming the cause, not a crash. (A fault in the lz4 assembly
// could not be caught; the source's Check is what keeps that away.)
func TestLz4LegacyInPlaceFault(t *testing.T) {
	stream := compress(t, Lz4Legacy, WriterOptions{Level: 1}, mixedData(4*lz4LegacyBlock, 63))
	firstEnd := 8 + int64(binary.LittleEndian.Uint32(stream[4:8])) // magic, size, block
	path := filepath.Join(t.TempDir(), "in.lz4")
	if err := os.WriteFile(path, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, len(stream), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Skipf("mmap: %v", err) // not a fault of the code under test
	}
	defer unix.Munmap(m)
	// At a page boundary: past a partial last page, a read gets zeros.
	cut := (firstEnd - 1) &^ int64(os.Getpagesize()-1)
	if cut <= readBufSize {
		t.Fatalf("first block ends at %d, within the read-ahead", firstEnd)
	}
	if err := os.Truncate(path, cut); err != nil {
		t.Fatal(err)
	}
	_, _, err = decompressInPlace(&memInPlace{data: m})
	if !errors.Is(err, errInputChanged) {
		t.Fatalf("got %v, want %v", err, errInputChanged)
	}
	checkCorruptErr(t, Lz4Legacy, "file truncated while mapped", err)
	if !bytes.Contains([]byte(err.Error()), []byte("shrank")) {
		t.Errorf("error %q does not say what happened", err)
	}
}
