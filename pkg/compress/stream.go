package compress

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/ulikunitz/xz/lzma"
)

// KernelMagic is the codec whose magic starts b, as the kernel's
// decompress_method (lib/decompress.c) matches it at the start of an
// initrd's segment, and the kernel's name for it; also 1f 9e, the old
// gzip the kernel names and nothing here reads ("gzip (1f 9e)", None).
func KernelMagic(b []byte) (c Codec, name string, ok bool) {
	for c := range table {
		if m := table[c].KernelMagic; m != nil && bytes.HasPrefix(b, m) {
			return Codec(c), table[c].KernelName, true
		}
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x9e}) {
		return None, "gzip (1f 9e)", true
	}
	return None, "", false
}

// SegmentLen is the length of the c segment at the start of r, for the
// codecs whose structure says it (cut: read it cut to that length, with
// NewSegmentReader); the others are decoded to their end
// (NewStreamReader).
func SegmentLen(c Codec, r io.ReaderAt, size int64) (n int64, cut bool, err error) {
	segLen := spec(c).SegmentLen
	if segLen == nil {
		return 0, false, nil
	}
	n, err = segLen(r, size)
	return n, err == nil, err
}

// NewSegmentReader reads a c segment cut to its length (SegmentLen): with
// NewReader, or for a codec with no Go decoder (lzo) with its tool.
func NewSegmentReader(c Codec, r io.Reader, opt ReaderOptions) (io.ReadCloser, error) {
	s := spec(c)
	if s.Decode != nil {
		rc, _, err := NewReader(r, opt)
		return rc, err
	}
	path, args, ok := decompressCommand(c, Threads(), External)
	if !ok {
		tool := s.Decompressor(0)[0]
		return nil, fmt.Errorf("compress: %s: no Go decoder, and no %s on PATH to read it (Debian: apt-get install %s): %w", c, tool, tool, ErrUnsupported)
	}
	return startDecompressor(r, c, path, args)
}

// NewStreamReader decodes one stream of c (a gzip member, a bzip2 stream,
// lzma) from br and nothing after it, for the codecs whose end only
// decoding finds (DecodeOne). After io.EOF, the stream ended over() bytes
// before what br delivered (bzip2 reads two bytes past its end).
func NewStreamReader(br *bufio.Reader, c Codec) (r io.ReadCloser, over func() int64, err error) {
	decodeOne := spec(c).DecodeOne
	if decodeOne == nil {
		return nil, nil, fmt.Errorf("compress: %s: its segments are cut to length, not decoded to their end", c)
	}
	if r, over, err = decodeOne(br); err != nil {
		return nil, nil, wrapErr(c, err)
	}
	return r, over, nil
}

func noOver() int64 { return 0 }

func gzipMember(br *bufio.Reader) (io.ReadCloser, func() int64, error) {
	zr, release, err := decodeGzip(br, nil)
	if err != nil {
		return nil, nil, err
	}
	zr.(*gzip.Reader).Multistream(false)
	d := &decoder{codec: Gzip, r: zr, close: release}
	return newReadahead(d, d.Close, wrapErr(Gzip, errReadClosed)), noOver, nil
}

func bzip2One(br *bufio.Reader) (io.ReadCloser, func() int64, error) {
	b := &bzip2Stream{r: bzip2.NewReader(br)}
	return &decoder{codec: Bzip2, r: b}, func() int64 { return b.over }, nil
}

func lzmaOne(br *bufio.Reader) (io.ReadCloser, func() int64, error) {
	zr, err := lzma.NewReader(br)
	if err != nil {
		return nil, nil, err
	}
	return &decoder{codec: Lzma, r: zr}, noOver, nil
}

// WrapStreamDecoder gives r, one stream of c decoded outside this package
// (splice.NewGzipReader, which maps the deflate blocks as it decodes), what
// NewStreamReader's readers have: sticky errors naming the codec, panics
// made errors, and decoding ahead on another core.
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
	if errors.As(err, &se) && string(se) == "bad magic value in continuation file" {
		b.done, b.over = true, 2
		return n, io.EOF
	}
	return n, err
}
