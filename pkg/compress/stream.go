package compress

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/ulikunitz/xz/lzma"
)

// KernelMagic is the codec whose magic starts b, as the kernel's
// decompress_method (lib/decompress.c) matches it at the start of an
// initrd's compressed segment: gzip (1f 8b; 1f 9e, the old form, is named
// but has no decoder here), bzip2, lzma, xz, lzo, lz4 legacy and zstd.
// name is the kernel's name for a magic it knows that no codec here reads
// ("gzip" for 1f 9e); ok is false for a magic the kernel does not know.
func KernelMagic(b []byte) (c Codec, name string, ok bool) {
	switch {
	case len(b) < 2:
		return None, "", false
	case b[0] == 0x1f && b[1] == 0x8b:
		return Gzip, "gzip", true
	case b[0] == 0x1f && b[1] == 0x9e:
		return None, "gzip (1f 9e)", true
	case b[0] == 'B' && b[1] == 'Z':
		return Bzip2, "bzip2", true
	case b[0] == 0x5d && b[1] == 0x00:
		return Lzma, "lzma", true
	case b[0] == 0xfd && b[1] == '7':
		return Xz, "xz", true
	case b[0] == 0x89 && b[1] == 'L':
		return Lzo, "lzo", true
	case b[0] == 0x02 && b[1] == 0x21:
		return Lz4Legacy, "lz4", true
	case b[0] == 0x28 && b[1] == 0xb5:
		return Zstd, "zstd", true
	}
	return None, "", false
}

// NewStreamReader decodes one stream of c (gzip: one member; bzip2: one
// stream; lzma) from br and nothing after it, for the codecs whose end
// is only found by decoding. Once Read has returned io.EOF, the stream
// ended over() bytes before what br has delivered to the decoder (bzip2
// reads two bytes past its end to look for a next stream). Every other
// codec's segment is cut to its length first and read with NewReader.
func NewStreamReader(br *bufio.Reader, c Codec) (r io.ReadCloser, over func() int64, err error) {
	none := func() int64 { return 0 }
	switch c {
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, wrapErr(c, err)
		}
		zr.Multistream(false)
		d := &decoder{codec: c, r: zr, close: func() error { _ = zr.Close(); return nil }}
		return newReadahead(d, d.Close, wrapErr(c, errReadClosed)), none, nil
	case Bzip2:
		b := &bzip2Stream{r: bzip2.NewReader(br)}
		return &decoder{codec: c, r: b}, func() int64 { return b.over }, nil
	case Lzma:
		zr, err := lzma.NewReader(br)
		if err != nil {
			return nil, nil, wrapErr(c, err)
		}
		return &decoder{codec: c, r: zr}, none, nil
	}
	return nil, nil, fmt.Errorf("compress: %s: its segments are cut to length, not decoded to their end", c)
}

// WrapStreamDecoder gives r, one stream of c decoded by a reader made
// outside this package (the gzip splice's, which maps the deflate blocks
// as it decodes: splice.NewGzipReader), what NewStreamReader's readers
// have: errors that name the codec and stay, panics turned into errors,
// and decoding ahead on another core.
func WrapStreamDecoder(c Codec, r io.Reader) io.ReadCloser {
	d := &decoder{codec: c, r: r}
	return newReadahead(d, d.Close, wrapErr(c, errReadClosed))
}

// bzip2Stream ends compress/bzip2's reader at the end of its first stream:
// the reader takes whatever follows for another stream and fails on its
// magic ("bad magic value in continuation file"), having read two bytes
// of it, or one if the input ends there.
type bzip2Stream struct {
	r    io.Reader
	over int64
	done bool
}

func (b *bzip2Stream) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	var se bzip2.StructuralError
	switch {
	case errors.As(err, &se) && string(se) == "bad magic value in continuation file":
		b.done, b.over = true, 2
		return n, io.EOF
	}
	return n, err
}

// Lzo segments are read by Debian's lzop (no Go decoder of lzop's format
// is maintained); LzoLen finds where one ends without decoding it.

// lzop's header flags (lzop's conf.h) that say which fields follow.
const (
	lzoAdler32D = 0x1
	lzoAdler32C = 0x2
	lzoExtra    = 0x40
	lzoCRC32D   = 0x100
	lzoCRC32C   = 0x200
	lzoFilter   = 0x800
)

// LzoLen returns the length of the lzop stream at the start of r: its
// header, then blocks (uncompressed and compressed size, checksums as the
// flags say, the data) up to the block of uncompressed size 0.
func LzoLen(r io.ReaderAt, size int64) (int64, error) {
	at := int64(0)
	read := func(n int) ([]byte, error) {
		if at+int64(n) > size {
			return nil, fmt.Errorf("compress: lzo: cut short at byte %d: %w", at, io.ErrUnexpectedEOF)
		}
		b := make([]byte, n)
		if _, err := r.ReadAt(b, at); err != nil {
			return nil, err
		}
		at += int64(n)
		return b, nil
	}
	h, err := read(9 + 2 + 2)
	if err != nil {
		return 0, err
	}
	if !bytes.Equal(h[:9], magicLzop) {
		return 0, errors.New("compress: lzo: bad magic")
	}
	version := binary.BigEndian.Uint16(h[9:])
	fixed := 1 + 4 + 4 + 4 // method, flags, mode, mtime
	if version >= 0x0940 {
		fixed += 2 + 1 + 4 // version needed, level, mtime high
	}
	f, err := read(fixed)
	if err != nil {
		return 0, err
	}
	flagsAt := 1
	if version >= 0x0940 {
		flagsAt = 2 + 1 + 1
	}
	flags := binary.BigEndian.Uint32(f[flagsAt:])
	if flags&lzoFilter != 0 {
		if _, err := read(4); err != nil {
			return 0, err
		}
	}
	nl, err := read(1)
	if err != nil {
		return 0, err
	}
	if _, err := read(int(nl[0]) + 4); err != nil { // name, header checksum
		return 0, err
	}
	if flags&lzoExtra != 0 {
		l, err := read(4)
		if err != nil {
			return 0, err
		}
		if _, err := read(int(binary.BigEndian.Uint32(l)) + 4); err != nil {
			return 0, err
		}
	}
	for {
		b, err := read(4)
		if err != nil {
			return 0, err
		}
		dst := binary.BigEndian.Uint32(b)
		if dst == 0 {
			return at, nil
		}
		b, err = read(4)
		if err != nil {
			return 0, err
		}
		src := binary.BigEndian.Uint32(b)
		sums := 0
		for _, bit := range []uint32{lzoAdler32D, lzoCRC32D} {
			if flags&bit != 0 {
				sums += 4
			}
		}
		if src < dst {
			for _, bit := range []uint32{lzoAdler32C, lzoCRC32C} {
				if flags&bit != 0 {
					sums += 4
				}
			}
		}
		if src > dst || dst > 64<<20 {
			return 0, fmt.Errorf("compress: lzo: block at byte %d: %d bytes for %d", at-8, src, dst)
		}
		at += int64(sums) + int64(src)
		if at > size {
			return 0, fmt.Errorf("compress: lzo: cut short: %w", io.ErrUnexpectedEOF)
		}
	}
}

// NewLzoReader decodes the lzop stream in r (cut to its length, LzoLen)
// with Debian's lzop, the reference tool; without one on PATH it says so.
func NewLzoReader(r io.Reader) (io.ReadCloser, error) {
	path, err := lookPath("lzop")
	if err != nil {
		return nil, fmt.Errorf("compress: lzo: no Go decoder, and no lzop on PATH to read it (Debian: apt-get install lzop): %w", ErrUnsupported)
	}
	return startDecompressor(r, Lzo, path, []string{"-d", "-c", "-q"})
}
