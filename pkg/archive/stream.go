package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrUnknownFormat reports content that is neither cpio nor tar.
var ErrUnknownFormat = errors.New("unknown archive format")

// SniffFormat reads the archive format (newc, crc or tar) from the start of
// a decompressed stream, without consuming it. The codec around the stream
// is pkg/container's to find; Format.Codec is left unset.
func SniffFormat(br *bufio.Reader) (Format, error) {
	head, err := br.Peek(512)
	if len(head) == 0 {
		if err == io.EOF || err == nil {
			return Format{}, errors.New("empty input")
		}
		return Format{}, err
	}
	switch {
	case bytes.HasPrefix(head, []byte(magicNewc)):
		return Format{Kind: KindCpio}, nil
	case bytes.HasPrefix(head, []byte(magicCRC)):
		return Format{Kind: KindCpioCRC}, nil
	case bytes.HasPrefix(head, []byte(magicOldASCII)):
		return Format{}, fmt.Errorf("%w: old portable ASCII cpio (070707); the kernel refuses it, rebuild with -H newc", ErrUnknownFormat)
	case len(head) >= 2 && (head[0] == 0xc7 && head[1] == 0x71 || head[0] == 0x71 && head[1] == 0xc7):
		return Format{}, fmt.Errorf("%w: binary cpio; the kernel refuses it, rebuild with -H newc", ErrUnknownFormat)
	}
	if len(head) == 512 {
		switch {
		case bytes.Equal(head[257:265], []byte("ustar  \x00")):
			return Format{Kind: KindTar, Tar: tar.FormatGNU}, nil
		case bytes.Equal(head[257:263], []byte("ustar\x00")):
			// PAX and USTAR share the magic; PAX shows as extended headers,
			// which archive/tar reports per entry.
			if head[156] == 'x' || head[156] == 'g' {
				return Format{Kind: KindTar, Tar: tar.FormatPAX}, nil
			}
			return Format{Kind: KindTar, Tar: tar.FormatUSTAR}, nil
		case validV7Checksum(head):
			return Format{Kind: KindTar}, nil
		}
	}
	return Format{}, fmt.Errorf("%w: starts with %s", ErrUnknownFormat, printable(head[:min(len(head), 8)]))
}

// validV7Checksum recognises pre-POSIX tar headers, which have no magic.
func validV7Checksum(h []byte) bool {
	want, err := strconv.ParseUint(string(bytes.Trim(h[148:156], " \x00")), 8, 64)
	return err == nil && tarChecksum(h) == want
}

// tarChecksum is what a tar header's checksum field holds: the sum of its
// bytes, the field's own taken as spaces.
func tarChecksum(h []byte) uint64 {
	var sum uint64
	for i, c := range h {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += uint64(c)
	}
	return sum
}

// NewReaderFor returns the entry reader of format f (as SniffFormat found
// it) over r. The holes of a tar's sparse files are charged to holes, the
// Budget the decompressed stream was read through, so that they count
// against the same limit; nil leaves them unlimited.
func NewReaderFor(r io.Reader, f Format, holes Budget) Reader {
	if f.Kind == KindTar {
		tr := NewTarReader(r)
		tr.holes = holes // a nil Budget is a nil expandBudget
		return tr
	}
	return NewCpioReader(r)
}

// NewWriterFor returns an entry writer of kind k over w (already compressed
// as wanted). For KindDir use NewDirWriter.
func NewWriterFor(w io.Writer, f Format) (Writer, error) {
	switch f.Kind {
	case KindCpio:
		return NewCpioWriter(w, Newc), nil
	case KindCpioCRC:
		return NewCpioWriter(w, CRC), nil
	case KindTar:
		return NewTarWriter(w, f.Tar), nil
	}
	return nil, fmt.Errorf("no stream writer for %s", f.Kind)
}

// ErrTooLarge reports an input that expands beyond its size limit
// (container.OpenOptions.MaxSize, --max-size).
var ErrTooLarge = errors.New("input expands beyond the size limit")

// Budget is a decompressed stream capped in size: more than its limit
// fails, rather than truncating. What a reader makes up rather than reads
// (a sparse file's holes) is charged to it too: only this package makes
// one (NewBudget).
type Budget interface {
	io.Reader
	expandBudget
}

// NewBudget caps what comes out of r, a decompressor, at max bytes.
func NewBudget(r io.Reader, max int64) Budget {
	return &limitReader{r: r, left: max, max: max}
}

// limitReader fails, rather than truncating, once more than max bytes come
// out of the decompressor.
type limitReader struct {
	r         io.Reader
	left, max int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more tells a stream of exactly max bytes from a bomb.
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("%w (--max-size %d bytes): a compression bomb, or raise --max-size", ErrTooLarge, l.max)
		}
		return l.r.Read(p)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// charge counts n bytes a reader made up (a sparse file's holes) as if they
// had come out of the decompressor.
func (l *limitReader) charge(n int64) error {
	if n > l.left {
		l.left = 0
		return fmt.Errorf("%w (--max-size %d bytes): a sparse bomb, or raise --max-size", ErrTooLarge, l.max)
	}
	l.left -= n
	return nil
}
