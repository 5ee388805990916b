package container

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// TestXzLenCraftedIndex: an index and footer appended after a stream, that
// claim one block from offset 0 over the stream's own index and footer,
// make the end read from the file's end differ from the first footer's
// (pkg/compress's TestXzLenCraftedIndex). Nothing then reads another view than the kernel's: xz decodes the stream
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
	got, cut, err := compress.SegmentLen(compress.Xz, r, size)
	if err != nil || !cut || got != size {
		t.Fatalf("SegmentLen = %d, %v, %v; want the whole file, %d (the crafted index read from the end)", got, cut, err, size)
	}
	if _, _, err := readSegments(t, file); err == nil {
		t.Fatal("the file was read; want it refused")
	} else {
		t.Logf("refused: %v", err)
	}
}
