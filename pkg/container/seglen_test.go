package container

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// TestXzLenAgrees: reading the streams from the end gives the end the
// scan for the first footer gives, on what xz writes and on what follows
// it in an initrd, and it is the path taken where the file is only xz.
func TestXzLenAgrees(t *testing.T) {
	main := cpioOf(t, "etc/", "etc/crictl.yaml", strings.Repeat("usr/lib/x", 40))
	big := bytes.Repeat(main, 64)
	one := squeeze(t, main, "xz", "-T1", "-C", "crc32", "-c")
	blocks := squeeze(t, big, "xz", "-T2", "--block-size=4KiB", "-c")
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
		{name: "then a raw cpio", file: cat(one, main), want: len(one)},
		{name: "then gzip", file: cat(blocks, squeeze(t, main, "gzip", "-n", "-c")), want: len(blocks)},
		{name: "then junk", file: cat(one, []byte("junk")), want: len(one)},
		{name: "cut", file: blocks[:len(blocks)-4], wantErr: "no stream footer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bytes.NewReader(tc.file)
			size := int64(len(tc.file))
			_, err := compress.XzStreams(r, 0, size)
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
// Nothing then reads another view than the kernel's: xz decodes the stream
// and finds the appended index where a next stream would start, so the
// file is refused, as the kernel refuses what follows the stream.
func TestXzLenCraftedIndex(t *testing.T) {
	main := cpioOf(t, "etc/", "etc/crictl.yaml")
	stream := squeeze(t, main, "xz", "-T1", "-C", "crc32", "-c")
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
	if _, _, err := readSegments(t, file); err == nil {
		t.Fatal("the file was read; want it refused")
	} else {
		t.Logf("refused: %v", err)
	}
}
