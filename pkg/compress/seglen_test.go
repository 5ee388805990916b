package compress

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"
)

// TestXzLenAgrees: reading the streams from the end gives the end the
// scan for the first footer gives, on what xz writes and on what follows
// it in an initrd, and it is the path taken where the file is only xz.
func TestXzLenAgrees(t *testing.T) {
	main := mixedData(4<<10, 1)
	big := bytes.Repeat(main, 64)
	one := mustRunTool(t, main, "xz", "-T1", "-C", "crc32", "-c")
	blocks := mustRunTool(t, big, "xz", "-T2", "--block-size=4KiB", "-c")
	for _, tc := range []struct {
		name    string
		file    []byte
		want    int // the first stream's length
		fromEnd bool
		wantErr string
	}{
		{name: "one block", file: one, want: len(one), fromEnd: true},
		{name: "several blocks", file: blocks, want: len(blocks), fromEnd: true},
		{name: "two streams", file: cat(blocks, one), want: len(blocks), fromEnd: true},
		{name: "stream padding between", file: cat(one, make([]byte, 8), blocks), want: len(one), fromEnd: true},
		{name: "stream padding after", file: cat(one, make([]byte, 4)), want: len(one), fromEnd: true},
		{name: "then a raw cpio", file: cat(one, []byte("070701")), want: len(one)},
		{name: "then gzip", file: cat(blocks, mustRunTool(t, main, "gzip", "-n", "-c")), want: len(blocks)},
		{name: "then junk", file: cat(one, []byte("junk")), want: len(one)},
		{name: "cut", file: blocks[:len(blocks)-4], wantErr: "no stream footer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bytes.NewReader(tc.file)
			size := int64(len(tc.file))
			_, err := XzStreams(r, 0, size)
			if fromEnd := err == nil; fromEnd != tc.fromEnd {
				t.Errorf("read from the end: %v (%v), want %v", fromEnd, err, tc.fromEnd)
			}
			got, err := xzLen(r, size)
			scanned, scanErr := xzLenScan(r, size)
			if got != scanned || (err == nil) != (scanErr == nil) {
				t.Errorf("xzLen = %d, %v; the scan gives %d, %v", got, err, scanned, scanErr)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != int64(tc.want) {
				t.Errorf("xzLen = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestXzLenCraftedIndex: an index and footer appended after a stream, that
// claim one block from offset 0 over the stream's own index and footer,
// make the end read from the file's end differ from the first footer's.
// pkg/container's TestXzLenCraftedIndex shows the file refused, as the
// kernel refuses what follows the stream.
func TestXzLenCraftedIndex(t *testing.T) {
	main := mixedData(1<<10, 2)
	stream := mustRunTool(t, main, "xz", "-T1", "-C", "crc32", "-c")
	// 4.3: indicator, one record (unpadded, uncompressed), padding, CRC32.
	index := []byte{0, 1}
	index = binary.AppendUvarint(index, uint64(len(stream)-12))
	index = binary.AppendUvarint(index, uint64(len(main)))
	index = append(index, make([]byte, (4-len(index)%4)%4)...)
	index = binary.LittleEndian.AppendUint32(index, crc32.ChecksumIEEE(index))
	// 2.1.2: CRC32, backward size, the stream header's flags, magic.
	tail := binary.LittleEndian.AppendUint32(nil, uint32(len(index)/4-1))
	tail = append(tail, stream[6:8]...)
	footer := binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(tail))
	footer = append(append(footer, tail...), 'Y', 'Z')
	file := cat(stream, index, footer)

	r, size := bytes.NewReader(file), int64(len(file))
	got, err := xzLen(r, size)
	if err != nil || got != size {
		t.Fatalf("xzLen = %d, %v; want the whole file, %d (the crafted index read from the end)", got, err, size)
	}
	if scanned, err := xzLenScan(r, size); err != nil || scanned != int64(len(stream)) {
		t.Fatalf("xzLenScan = %d, %v; want the stream's own end, %d", scanned, err, len(stream))
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestLzoLen: an lzop stream's length, from its header and block sizes,
// with and without what follows it, and the refusals.
func TestLzoLen(t *testing.T) {
	requireTool(t, "lzop")
	one := mustRunTool(t, mixedData(300<<10, 4), "lzop", "-c")
	named := mustRunTool(t, mixedData(1<<10, 5), "lzop", "-c", "--name", "-1")
	for _, tc := range []struct {
		name    string
		file    []byte
		want    int64
		wantErr string
	}{
		{name: "alone", file: one, want: int64(len(one))},
		{name: "then a cpio", file: cat(one, []byte("070701")), want: int64(len(one))},
		{name: "two", file: cat(named, one), want: int64(len(named))},
		{name: "cut in a block", file: one[:len(one)-100], wantErr: "cut short"},
		{name: "cut in the header", file: one[:20], wantErr: "cut short at byte"},
		{name: "no end block", file: one[:len(one)-4], wantErr: "cut short"},
		{name: "not lzop", file: cat([]byte("070701"), one), wantErr: "bad magic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := lzoLen(bytes.NewReader(tc.file), int64(len(tc.file)))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("lzoLen = %d, %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("lzoLen = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}
