package splice

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// XzBlocks counts the blocks of the xz file r of size bytes, from the
// index at its end, so that an output can be written the way the input
// was: one block (`xz -9` single-threaded, as Buildroot runs it) or
// several (`xz -T0`). Only a file of one stream is counted; for several
// streams it reports ErrUnhandled.
func XzBlocks(r io.ReaderAt, size int64) (int, error) {
	end := size
	var pad [4]byte
	for end >= 4 {
		if _, err := r.ReadAt(pad[:], end-4); err != nil {
			return 0, err
		}
		if pad != [4]byte{} {
			break
		}
		end -= 4 // stream padding
	}
	if end < 24 {
		return 0, errors.New("xz: too short")
	}
	var foot [12]byte
	if _, err := r.ReadAt(foot[:], end-12); err != nil {
		return 0, err
	}
	if foot[10] != 'Y' || foot[11] != 'Z' || crc32.ChecksumIEEE(foot[4:10]) != binary.LittleEndian.Uint32(foot[:4]) {
		return 0, errors.New("xz: bad stream footer")
	}
	isize := (int64(binary.LittleEndian.Uint32(foot[4:8])) + 1) * 4
	at := end - 12 - isize
	if at < 12 || isize > 1<<30 {
		return 0, errors.New("xz: bad index size")
	}
	idx := make([]byte, min(isize, 1<<16))
	if _, err := r.ReadAt(idx, at); err != nil {
		return 0, err
	}
	if idx[0] != 0 {
		return 0, errors.New("xz: bad index")
	}
	n, k := binary.Uvarint(idx[1:])
	if k <= 0 {
		return 0, errors.New("xz: bad index")
	}
	// One stream: its blocks fill the space from the header to the index.
	var total int64
	p := idx[1+k:]
	for i := uint64(0); i < n; i++ {
		unpadded, k1 := binary.Uvarint(p)
		if k1 <= 0 {
			return 0, fmt.Errorf("xz: index of %d blocks: %w", n, ErrUnhandled)
		}
		_, k2 := binary.Uvarint(p[k1:])
		if k2 <= 0 {
			return 0, fmt.Errorf("xz: index of %d blocks: %w", n, ErrUnhandled)
		}
		p = p[k1+k2:]
		total += (int64(unpadded) + 3) &^ 3
	}
	if 12+total != at {
		return 0, fmt.Errorf("xz: several streams: %w", ErrUnhandled)
	}
	return int(n), nil
}
