package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
)

// The SegmentLen of each codec whose structure says its end: an initrd's
// segment is cut to it, then read by the codec's usual reader.

// zstdLen walks the skippable frames and the one Zstandard frame (RFC
// 8878, 3.1) at the start of r: frame headers and block headers, never the
// data. One frame: the kernel's unzstd (lib/decompress_unzstd.c) stops at
// the end of the first ("returns zero when the frame is complete"), so a
// next frame is a segment of its own.
func zstdLen(r io.ReaderAt, size int64) (int64, error) {
	var at int64
	for at+4 <= size {
		var m [4]byte
		if _, err := r.ReadAt(m[:], at); err != nil {
			return 0, err
		}
		switch {
		case isSkippable(m[:]):
			var n [4]byte
			if _, err := r.ReadAt(n[:], at+4); err != nil {
				return 0, fmt.Errorf("zstd: skippable frame at %d: %w", at, io.ErrUnexpectedEOF)
			}
			at += 8 + int64(binary.LittleEndian.Uint32(n[:]))
			continue
		case !bytes.Equal(m[:], magicZstd):
			return at, nil
		}
		n, err := zstdFrameLen(r, at, size)
		if err != nil {
			return 0, err
		}
		return at + n, nil
	}
	if at > size {
		return 0, fmt.Errorf("zstd: frame past the end: %w", io.ErrUnexpectedEOF)
	}
	return at, nil
}

// zstdHeaderLen is the length of a Zstandard frame header (RFC 8878,
// 3.1.1.1) whose descriptor is fhd, magic included, and where in it the
// content size starts and how long it is.
func zstdHeaderLen(fhd byte) (n, fcsAt, fcsLen int) {
	fcsAt = 6 + [4]int{0, 1, 2, 4}[fhd&3] // magic, descriptor, window, dictionary ID
	fcsLen = [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd&0x20 != 0 { // single segment: no window, always a content size
		fcsAt, fcsLen = fcsAt-1, max(fcsLen, 1)
	}
	return fcsAt + fcsLen, fcsAt, fcsLen
}

func zstdFrameLen(r io.ReaderAt, at, size int64) (int64, error) {
	var h [2]byte
	if _, err := r.ReadAt(h[:1], at+4); err != nil {
		return 0, fmt.Errorf("zstd: frame at %d: %w", at, io.ErrUnexpectedEOF)
	}
	headerLen, _, _ := zstdHeaderLen(h[0])
	n := int64(headerLen)
	for {
		var b [3]byte
		if _, err := r.ReadAt(b[:], at+n); err != nil {
			return 0, fmt.Errorf("zstd: block header at %d: %w", at+n, io.ErrUnexpectedEOF)
		}
		v := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		last, typ, bsize := v&1 != 0, (v>>1)&3, int64(v>>3)
		n += 3
		switch typ {
		case 1:
			n++ // RLE: one byte
		case 3:
			return 0, fmt.Errorf("zstd: reserved block type at %d", at+n-3)
		default:
			n += bsize
		}
		if at+n > size {
			return 0, fmt.Errorf("zstd: block past the end: %w", io.ErrUnexpectedEOF)
		}
		if last {
			break
		}
	}
	if h[0]&4 != 0 {
		n += 4 // content checksum
	}
	return n, nil
}

// lz4LegacyLen walks the blocks of the legacy lz4 stream at the start of
// r. It ends at the end of the input, at a block size of 0 (which the
// kernel's unlz4 takes for the end: the zeros are then padding), and at
// the kernel build's 4-byte size trailer when nothing follows it.
func lz4LegacyLen(r io.ReaderAt, size int64) (int64, error) {
	at := int64(4)
	for at+4 <= size {
		var b [4]byte
		if _, err := r.ReadAt(b[:], at); err != nil {
			return 0, err
		}
		n := binary.LittleEndian.Uint32(b[:])
		switch {
		case n == lz4LegacyMagic32: // a concatenated stream
			at += 4
			continue
		case n == 0:
			return at, nil
		case at+4 == size:
			return size, nil // the size trailer
		case int64(n) > int64(lz4LegacyBound):
			// unlz4's "chunk length is longer than allowed".
			return 0, fmt.Errorf("lz4: block at %d: chunk length is longer than allowed (%d bytes)", at, n)
		case at+4+int64(n) > size:
			return 0, fmt.Errorf("lz4: block at %d: %w", at, io.ErrUnexpectedEOF)
		}
		at += 4 + int64(n)
	}
	return at, nil
}

// xzLen finds the end of the xz stream at the start of r. Where r is only
// xz streams, as a rootfs.cpio.xz is, their footers and indexes, read from
// the end as `xz --list` reads them, say where the first ends, sparing a
// scan of the file before decoding starts (XzStreams); otherwise
// xzLenScan finds it. Both agree unless an index and footer are crafted to
// span the first stream's, a file xz and the kernel refuse
// (TestXzLenAgrees, TestXzLenCraftedIndex).
func xzLen(r io.ReaderAt, size int64) (int64, error) {
	if streams, err := XzStreams(r, 0, size); err == nil {
		return streams[0].End, nil
	}
	return xzLenScan(r, size)
}

// xzLenScan finds the end of the xz stream at the start of r: the first
// footer, at a multiple of 4, whose index checks (xzIndex) and whose flags
// are the header's. Block headers need not say their sizes (single-
// threaded xz leaves them out); the footer is always there.
func xzLenScan(r io.ReaderAt, size int64) (int64, error) {
	var h [12]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return 0, fmt.Errorf("xz: stream header: %w", io.ErrUnexpectedEOF)
	}
	const chunk = 1 << 20
	buf := make([]byte, chunk+12)
	for base := int64(12); base < size; base += chunk {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-base)], base)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		b := buf[:n]
		for i := 0; i+2 <= len(b); {
			j := bytes.Index(b[i:], []byte("YZ"))
			if j < 0 {
				break
			}
			k := i + j
			i = k + 1
			// A footer ends at a multiple of 4: its "YZ" is at 4n+2.
			if (base+int64(k))%4 != 2 {
				continue
			}
			end := base + int64(k) + 2
			if flags, _, _, err := xzIndex(r, 0, end); err == nil && bytes.Equal(flags, h[6:8]) {
				return end, nil
			}
		}
	}
	return 0, fmt.Errorf("xz: no stream footer: %w", io.ErrUnexpectedEOF)
}

// lzop's header flags (lzop's conf.h) that say which fields follow.
const (
	lzoAdler32D = 0x1
	lzoAdler32C = 0x2
	lzoExtra    = 0x40
	lzoCRC32D   = 0x100
	lzoCRC32C   = 0x200
	lzoFilter   = 0x800
)

// lzoLen returns the length of the lzop stream at the start of r: its
// header, then blocks (uncompressed and compressed size, checksums as the
// flags say, the data) up to the block of uncompressed size 0.
func lzoLen(r io.ReaderAt, size int64) (int64, error) {
	at := int64(0)
	var err error
	// skip passes n bytes; read returns the next n (at most 13), zeros
	// after the first error, which lzoLen returns.
	skip := func(n int64) {
		if err == nil && at+n > size {
			err = fmt.Errorf("compress: lzo: cut short at byte %d: %w", at, io.ErrUnexpectedEOF)
		}
		at += n
	}
	read := func(n int) []byte {
		b := make([]byte, n)
		if skip(int64(n)); err == nil {
			_, err = r.ReadAt(b, at-int64(n))
		}
		return b
	}
	h := read(9 + 2 + 2)
	if err == nil && !bytes.Equal(h[:9], magicLzop) {
		return 0, errors.New("compress: lzo: bad magic")
	}
	version := binary.BigEndian.Uint16(h[9:])
	fixed, flagsAt := 1+4+4+4, 1 // method, flags, mode, mtime
	if version >= 0x0940 {
		fixed, flagsAt = fixed+2+1+4, 2+1+1 // version needed, level, mtime high
	}
	flags := binary.BigEndian.Uint32(read(fixed)[flagsAt:])
	if flags&lzoFilter != 0 {
		skip(4)
	}
	skip(int64(read(1)[0]) + 4) // name, header checksum
	if flags&lzoExtra != 0 {
		skip(int64(binary.BigEndian.Uint32(read(4))) + 4)
	}
	for err == nil {
		dst := binary.BigEndian.Uint32(read(4))
		if err != nil || dst == 0 {
			break
		}
		src := binary.BigEndian.Uint32(read(4))
		sums := 4 * bits.OnesCount32(flags&(lzoAdler32D|lzoCRC32D))
		if src < dst { // the compressed data's sums, where it is compressed
			sums += 4 * bits.OnesCount32(flags&(lzoAdler32C|lzoCRC32C))
		}
		if err == nil && (src > dst || dst > 64<<20) {
			return 0, fmt.Errorf("compress: lzo: block at byte %d: %d bytes for %d", at-8, src, dst)
		}
		if at += int64(sums) + int64(src); err == nil && at > size {
			return 0, fmt.Errorf("compress: lzo: cut short: %w", io.ErrUnexpectedEOF)
		}
	}
	if err != nil {
		return 0, err
	}
	return at, nil
}
