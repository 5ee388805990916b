package compress

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

// ZstdMaxWindow is the largest Zstandard window NewReader accepts, the zstd
// CLI's default --memory. `zstd -19` uses 8 MiB, --ultra -22 and --long
// stay within it; a bigger window is far more likely corruption than a
// rootfs, and would cost that much memory.
const ZstdMaxWindow = 128 << 20

// readBufSize is the buffer NewReader puts in front of the source, so that
// the decoders, which read in small pieces, do not issue tiny reads to a
// file or pipe.
const readBufSize = 64 << 10

// ReaderOptions tune NewReader.
type ReaderOptions struct {
	// Backend chooses the decoder. The zero value, Auto, runs an external
	// decompressor where it is clearly faster than the Go one (xz);
	// PureGo never runs a program.
	Backend Backend
}

// NewReader detects the compression of r with Sniff and returns a reader of
// the decompressed data and the codec found; data without a known signature
// is passed through as None. Concatenated streams are read as one, as the
// CLIs and the kernel do, after any leading skippable frames. Corrupt or
// truncated input gives an *Error naming the codec, not a short read; the
// lz4 legacy format has no checksum and no end marker, so damage to its
// payload and a cut at a block boundary go unseen, by the kernel too.
//
// Close releases the decoder's buffers, not r. Damage is reported by Read
// alone: a caller that stops early gets no error for what it never read.
func NewReader(r io.Reader, opt ReaderOptions) (io.ReadCloser, Codec, error) {
	br, c, err := sniffStream(r)
	if err != nil {
		return nil, None, err
	}
	if opt.Backend != PureGo {
		if path, args, ok := decompressCommand(c, Threads(), opt.Backend); ok {
			var in io.Reader = br
			if fs, ok := r.(FileSource); ok {
				if f, ok := fs.ToolInput(br.Buffered()); ok {
					if c == Xz {
						if px, err := newXzParallel(path, f, Threads()); err == nil {
							return px, c, nil
						}
					}
					in = f
				}
			}
			rc, err := startDecompressor(in, c, path, args)
			return rc, c, err
		}
		if opt.Backend == External && spec(c).Decompressor != nil {
			return nil, c, fmt.Errorf("%v: no external decompressor on PATH (--backend external)", c)
		}
	}
	d, err := goDecoder(c, br, r)
	return d, c, err
}

// sniffStream buffers r, drops leading skippable frames and detects the
// codec.
func sniffStream(r io.Reader) (*bufio.Reader, Codec, error) {
	br := bufio.NewReaderSize(r, readBufSize)
	if err := discardSkippable(br); err != nil {
		return nil, None, err
	}
	c, err := Sniff(br)
	if err != nil {
		return nil, None, err
	}
	return br, c, nil
}

// goDecoder decodes c from br, which buffers src, in process.
func goDecoder(c Codec, br *bufio.Reader, src io.Reader) (io.ReadCloser, error) {
	d, err := newDecoder(c, br, src)
	if err != nil {
		return nil, wrapErr(c, err)
	}
	if !spec(c).ReadAhead {
		return d, nil
	}
	return newReadahead(d, d.Close, wrapErr(c, errReadClosed)), nil
}

// newDecoder sets up the decoder for c. Several libraries parse the stream
// header right away, so this recovers from panics like decoder.Read does.
func newDecoder(c Codec, br *bufio.Reader, src io.Reader) (d *decoder, err error) {
	defer func() {
		if v := recover(); v != nil {
			d, err = nil, fmt.Errorf("%w: %v", ErrDecoderPanic, v)
		}
	}()
	d = &decoder{codec: c} // c has a Decode: Sniff found it
	if d.r, d.close, err = spec(c).Decode(br, src); err != nil {
		return nil, err
	}
	return d, nil
}

// The Decode of each codec. None, legacy lz4 (on every core already) and
// zstd do not read ahead: zstd's decoder is quick enough that the extra
// copy of every byte costs more than it overlaps (make bench, list-zstd).

func decodeGzip(br *bufio.Reader, _ io.Reader) (io.Reader, func() error, error) {
	// klauspost's reader is multistream by default, like gzip -d.
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, nil, err
	}
	// gzip's Close only repeats the error Read already returned; Close
	// is about resources, not about the data.
	return zr, func() error { _ = zr.Close(); return nil }, nil
}

func decodeXz(br *bufio.Reader, _ io.Reader) (io.Reader, func() error, error) {
	// Multistream, stream padding and every check type are the defaults.
	// The tail is tracked below a buffer, as the decoder reads a byte at a
	// time; at EOF it has drained the input, so the tails are the same.
	tail := &tailReader{r: br}
	zr, err := xz.ReaderConfig{}.NewReader(bufio.NewReader(tail))
	if err != nil {
		return nil, nil, err
	}
	return &xzReader{zr: zr, tail: tail}, nil, nil
}

func decodeLz4Legacy(br *bufio.Reader, src io.Reader) (io.Reader, func() error, error) {
	inPlace, _ := src.(InPlaceReader)
	lr := newLz4LegacyReader(br, inPlace)
	return lr, lr.Close, nil
}

func decodeLz4Frame(br *bufio.Reader, _ io.Reader) (io.Reader, func() error, error) {
	// Concurrency 1 keeps decoding in the caller's goroutine, where a
	// panic can be recovered. (Legacy streams, with their independent
	// blocks, get a parallel decoder of our own.)
	zr := lz4.NewReader(br)
	if err := zr.Apply(lz4.ConcurrencyOption(1)); err != nil {
		return nil, nil, err
	}
	return zr, func() error {
		zr.Reset(nil) // hands the block buffers back to the pool
		return nil
	}, nil
}

func decodeZstd(br *bufio.Reader, _ io.Reader) (io.Reader, func() error, error) {
	// Concurrency 1 decodes in the caller's goroutine, for the same
	// reason as lz4, and leaves no goroutines behind if a caller forgets
	// Close.
	zr, err := zstd.NewReader(br,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(ZstdMaxWindow),
		zstd.WithDecoderLowmem(true),
	)
	if err != nil {
		return nil, nil, err
	}
	return zr, func() error { zr.Close(); return nil }, nil
}

// discardSkippable consumes leading skippable frames, which may be of any
// size up to 4 GiB and so cannot always be peeked past. Both decoders that
// could follow accept their absence.
func discardSkippable(br *bufio.Reader) error {
	for {
		b, err := peek(br, 8)
		if err != nil {
			return err
		}
		if !isSkippable(b) {
			return nil
		}
		if len(b) < 8 {
			return fmt.Errorf("compress: skippable frame: %w", io.ErrUnexpectedEOF)
		}
		n := 8 + int64(binary.LittleEndian.Uint32(b[4:8]))
		if _, err := io.CopyN(io.Discard, br, n); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("compress: skippable frame: %w", err)
		}
	}
}

// decoder gives every codec the same error behaviour: errors name the codec,
// stay sticky (some decoders would otherwise resume on garbage) and a panic
// in a decoder library becomes an error instead of killing the build.
type decoder struct {
	codec  Codec
	r      io.Reader
	close  func() error
	err    error
	closed bool
}

var errReadClosed = errors.New("read after close")

func (d *decoder) Read(p []byte) (n int, err error) {
	if d.err != nil {
		return 0, d.err
	}
	defer func() {
		if v := recover(); v != nil {
			n, err = 0, fmt.Errorf("%w: %v", ErrDecoderPanic, v)
		}
		if err != nil {
			if err != io.EOF {
				err = wrapErr(d.codec, err)
			}
			d.err = err
		}
	}()
	return d.r.Read(p)
}

func (d *decoder) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	d.err = wrapErr(d.codec, errReadClosed)
	if d.close == nil {
		return nil
	}
	return wrapErr(d.codec, d.close())
}

// xzReader works around ulikunitz/xz taking an end of input inside or just
// before a block header for the end of the stream (ulikunitz/xz#83, open as
// of v0.5.17): a file cut at a block boundary would read as complete. A
// stream only ends properly with a footer, so at EOF the input must end
// with one, possibly followed by stream padding.
type xzReader struct {
	zr   *xz.Reader
	tail *tailReader
}

func (x *xzReader) Read(p []byte) (int, error) {
	n, err := x.zr.Read(p)
	if err == io.EOF && !x.tail.endsWithFooter() {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// xzFooterLen is the size of an xz stream footer: CRC32, backward size,
// stream flags, "YZ".
const xzFooterLen = 12

// tailReader remembers the last xzFooterLen bytes read before any trailing
// run of zero bytes, which is where a footer sits when stream padding
// follows it.
type tailReader struct {
	r      io.Reader
	total  int64
	footer [xzFooterLen]byte // last bytes up to the last non-zero byte
	zeros  int64             // zero bytes read since the last non-zero one
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.track(p[:n])
	return n, err
}

// track moves the footer on to the last non-zero byte of b, past the
// zeros read before b (of which the last xzFooterLen are enough).
func (t *tailReader) track(b []byte) {
	t.total += int64(len(b))
	k := len(bytes.TrimRight(b, "\x00"))
	if k == 0 {
		t.zeros += int64(len(b))
		return
	}
	var w [3 * xzFooterLen]byte // footer, zeros, b's end
	n := copy(w[:], t.footer[:]) + int(min(t.zeros, xzFooterLen))
	n += copy(w[n:], b[max(0, k-xzFooterLen):k])
	copy(t.footer[:], w[n-xzFooterLen:n])
	t.zeros = int64(len(b) - k)
}

func (t *tailReader) endsWithFooter() bool {
	f := t.footer[:]
	return t.total >= xzFooterLen+t.zeros && t.zeros%4 == 0 &&
		f[10] == 'Y' && f[11] == 'Z' && f[8] == 0 &&
		crc32.ChecksumIEEE(f[4:10]) == binary.LittleEndian.Uint32(f[0:4])
}
