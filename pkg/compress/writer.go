package compress

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

// WriterOptions tune NewWriter. The zero value gives what Buildroot's
// fs/common.mk produces: `gzip -9 -n`, `xz -9 -C crc32`, `lz4 -l -9`,
// `zstd -19`.
type WriterOptions struct {
	// Level is the codec's compression level, on the scale of its CLI,
	// 1 to its Levels.Max (the table); 0 selects Buildroot's choice. Each
	// Go encoder (encodeXz, encodeLz4, encodeZstd) says how it takes it.
	Level int

	// Threads is the number of goroutines compressing; 0 means 1. zstd's
	// output with several differs from its output with one (the input is
	// cut into independently matched sections); lz4's does not; gzip and
	// xz ignore it.
	Threads int

	// SingleBlock makes xz output one block, as `xz -9` single-threaded
	// writes it (and Buildroot does): about 5% smaller than the blocks
	// the threads need, on one core. The Go encoder always writes one.
	SingleBlock bool

	// Backend chooses the compressor: Auto the reference tool where on
	// PATH (as Buildroot does), else the Go encoder; PureGo never a tool.
	Backend Backend
}

// xzDictSizes are the dictionary sizes of the xz presets -1 to -9.
var xzDictSizes = [...]int{1: 1 << 20, 2: 2 << 20, 3: 4 << 20, 4: 4 << 20, 5: 8 << 20, 6: 8 << 20, 7: 16 << 20, 8: 32 << 20, 9: 64 << 20}

// Lz4Levels are pierrec/lz4's levels for the CLI's, 1 to 12: those of
// NewWriter and of the lz4 splicer's new blocks.
var Lz4Levels = [...]lz4.CompressionLevel{
	1: lz4.Fast, 2: lz4.Fast,
	3: lz4.Level3, 4: lz4.Level4, 5: lz4.Level5, 6: lz4.Level6, 7: lz4.Level7, 8: lz4.Level8, 9: lz4.Level9,
	10: lz4.Level9, 11: lz4.Level9, 12: lz4.Level9,
}

// newGoWriter is NewWriter's in-process compressor, used with PureGo and
// where no tool is on PATH.
func newGoWriter(w io.Writer, c Codec, opt WriterOptions) (io.WriteCloser, error) {
	if opt.Threads < 0 {
		return nil, fmt.Errorf("%v: negative thread count %d", c, opt.Threads)
	}
	threads := max(opt.Threads, 1)
	s := spec(c)
	switch {
	case int(c) >= len(table):
		return nil, fmt.Errorf("compress: no writer for %v", c)
	case s.Encode == nil:
		return nil, fmt.Errorf("%v: writing is %w (no Go encoder; use %s)", c, ErrUnsupported, kernelWritable())
	}
	level := opt.Level
	switch {
	case s.Levels.Max == 0:
	case level == 0:
		level = s.Levels.Buildroot
	case level < 1 || level > s.Levels.Max:
		return nil, fmt.Errorf("%v: level %d out of range 1-%d", c, level, s.Levels.Max)
	}
	zw, err := s.Encode(w, level, threads)
	if err != nil {
		return nil, wrapErr(c, err)
	}
	return &encoder{codec: c, w: zw}, nil
}

// kernelWritable names the codecs that are written and that the kernel
// reads: "gzip, xz, lz4-legacy or zstd".
func kernelWritable() string {
	names := names(func(_ Codec, s *Spec) bool { return s.Encode != nil && s.KernelMagic != nil })
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// The Encode of each codec.

func encodeGzip(w io.Writer, level, _ int) (io.WriteCloser, error) {
	// The zero Header already means no name and mtime 0, as `gzip -n`;
	// nothing to set, but nothing may be added either.
	return gzip.NewWriterLevel(w, level)
}

// encodeXz takes the level for the dictionary size of `xz -N`, since
// ulikunitz/xz has one match finder and no other knob.
func encodeXz(w io.Writer, level, _ int) (io.WriteCloser, error) {
	cfg := xz.WriterConfig{
		// The kernel's decoder (lib/xz) supports no CRC64 or SHA-256.
		CheckSum: xz.CRC32,
		DictCap:  xzDictSizes[level],
	}
	return cfg.NewWriter(w)
}

// encodeLz4 compresses at levels 1-2 with the fast compressor, 3-9 with
// the high-compression one at that depth; 10-12 are treated as 9, as
// pierrec/lz4 has no optimal parser. format is the frame's options.
func encodeLz4(format ...lz4.Option) func(w io.Writer, level, threads int) (io.WriteCloser, error) {
	return func(w io.Writer, level, threads int) (io.WriteCloser, error) {
		l := lz4.NewWriter(w)
		opts := []lz4.Option{lz4.CompressionLevelOption(Lz4Levels[level]), lz4.ConcurrencyOption(threads)}
		if err := l.Apply(append(opts, format...)...); err != nil {
			return nil, err
		}
		return l, nil
	}
}

// encodeZstd maps the level onto klauspost's four encoder levels: 1-2
// fastest, 3-5 default, 6-9 better, 10+ best.
func encodeZstd(w io.Writer, level, threads int) (io.WriteCloser, error) {
	return zstd.NewWriter(w,
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithEncoderConcurrency(threads),
		// Split the input into sections for the threads; with a single
		// thread this has no effect and the output is the plain
		// sequential one.
		zstd.WithConcurrentBlocks(threads > 1),
		zstd.WithEncoderCRC(true),
		// An empty archive must still be a valid .zst file.
		zstd.WithZeroFrames(true),
	)
}

var errWriteClosed = errors.New("write after close")

// encoder names the codec in errors and makes Close idempotent, which not
// every library's writer is.
type encoder struct {
	codec  Codec
	w      io.WriteCloser
	closed bool
	err    error // result of the first Close
}

func (e *encoder) Write(p []byte) (int, error) {
	if e.closed {
		return 0, wrapErr(e.codec, errWriteClosed)
	}
	n, err := e.w.Write(p)
	return n, wrapErr(e.codec, err)
}

func (e *encoder) Close() error {
	if !e.closed {
		e.closed = true
		e.err = wrapErr(e.codec, e.w.Close())
	}
	return e.err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
