package container

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// ErrSegmentsOnStream refuses an initrd of several segments read from a
// pipe or standard input: the segmented reader finds each segment and
// its end by seeking in the file (segReader.find, zstdLen, rawLen), which
// a stream cannot give.
var ErrSegmentsOnStream = errors.New("an initrd of several segments must be given as a file: its segments are found by seeking in it, which a pipe or standard input cannot do; save it to a file first")

// streamSegment reads a raw cpio from a stream as the kernel's
// unpack_to_rootfs (init/initramfs.c) reads an initrd's first segment: its
// entries, then the zeros its Reset state skips, up to a byte that starts
// no header. What comes there is the next segment, which a file's reader
// goes on to (Debian's and dracut's initrds: the microcode raw, the main
// cpio compressed after it) and a stream's cannot: it is refused, naming
// it, never taken for the end of the input (a partial audit) nor for a
// bad cpio header. Anything else there is what the kernel calls it.
type streamSegment struct {
	*archive.CpioReader
}

func (s streamSegment) Next() (*archive.Entry, error) {
	e, err := s.CpioReader.Next()
	if err == io.EOF && s.Foreign {
		return nil, s.nextSegment()
	}
	return e, err
}

// nextSegment is the error for what follows the first segment, worded as
// the file's reader words segment 2.
func (s streamSegment) nextSegment() error {
	head, _ := s.PeekHead(16)
	where := fmt.Sprintf("segment 2 at offset %d (after segment 1, %s at offset 0)", s.Offset(), compress.None)
	if _, name, ok := compress.KernelMagic(head); ok {
		return fmt.Errorf("%s: %s: %w", where, name, ErrSegmentsOnStream)
	}
	return fmt.Errorf("%s: invalid magic at start of compressed archive (%s)", where, hex.EncodeToString(head[:min(len(head), 4)]))
}
