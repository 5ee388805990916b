package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/digest"
)

// Input is an open archive or tree.
type Input struct {
	Reader
	Path   string
	Format Format
	// Size is the size of the file on disk (compressed), 0 for a tree.
	Size int64

	file    *os.File
	info    os.FileInfo // file's, as opened
	dir     *DirReader  // a tree's: holds an os.Root until closed
	counter *countingReader
	decomp  io.Closer
}

// FileInfo is the input file's, as it was opened; nil for a tree.
func (in *Input) FileInfo() os.FileInfo { return in.info }

// Consumed reports how many bytes of the file on disk have been read, for
// progress reporting.
func (in *Input) Consumed() int64 {
	if in.counter == nil {
		return 0
	}
	return in.counter.n
}

// Close releases the input.
func (in *Input) Close() error {
	if in.counter != nil && in.counter.h != nil && !in.counter.h.closed {
		in.counter.h.Sum() // stops the hashing goroutine
	}
	var err error
	if in.dir != nil {
		err = in.dir.Close()
	}
	if in.decomp != nil {
		err = in.decomp.Close()
	}
	if in.counter != nil {
		in.counter.unmap() // after the decoder, which may read the mapping until closed
	}
	if in.file != nil {
		if cerr := in.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Open opens a directory tree or an archive file, detecting compression and
// format from the content, never from the name.
func Open(path string) (*Input, error) {
	return OpenWith(path, OpenOptions{})
}

// OpenOptions bounds what an input may cost.
type OpenOptions struct {
	// MaxSize caps the uncompressed bytes read from an archive: a few
	// kilobytes of xz or zstd can expand without end, and the tool runs
	// unattended in build systems. 0 means DefaultMaxSize.
	MaxSize int64
	// Backend chooses the decompressor: an external tool (xz, zstd) where
	// it is much faster than the Go decoder, or pure Go.
	Backend compress.Backend
	// Digest makes Input.Digest available (the manifest's input digest);
	// it costs a sha256 pass, on another core.
	Digest bool
	// Tap, when set, sees the decompressed stream as it is read, so that
	// an output can be matched against it (see OutputOptions.Reuse).
	Tap Tap
}

// Tap watches an archive's decompressed stream.
type Tap interface {
	Feed(p []byte)
	End()
}

// DefaultMaxSize is far above any real rootfs (minikube's is ~0.9 GB) and
// far below what would fill a build machine's disk or time budget.
const DefaultMaxSize = 32 << 30

// ErrTooLarge reports an input that expands beyond OpenOptions.MaxSize.
var ErrTooLarge = errors.New("input expands beyond the size limit")

// OpenWith is Open with limits.
func OpenWith(path string, opt OpenOptions) (*Input, error) {
	if opt.MaxSize <= 0 {
		opt.MaxSize = DefaultMaxSize
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		r, err := NewDirReader(path)
		if err != nil {
			return nil, err
		}
		return &Input{Reader: r, Path: path, Format: Format{Kind: KindDir}, dir: r}, nil
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file or directory", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	in, err := openStream(f, f, opt)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	in.Path, in.Size, in.file = path, fi.Size(), f
	if in.info, err = f.Stat(); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// openStream reads the archive in f; file, if not nil, is f, an *os.File
// read from its start, which the decoder may map (countingReader.InPlace).
func openStream(f io.Reader, file *os.File, opt OpenOptions) (*Input, error) {
	maxSize := opt.MaxSize
	counter := &countingReader{r: f, file: file}
	if opt.Digest {
		counter.h = newAsyncHash()
	}
	dr, codec, err := compress.NewReaderWith(counter, opt.Backend)
	if err != nil {
		return nil, err
	}
	lim := &limitReader{r: dr, left: maxSize, max: maxSize}
	var src io.Reader = lim
	if opt.Tap != nil {
		src = &tapReader{r: src, tap: opt.Tap}
	}
	br := bufio.NewReaderSize(src, 256<<10)
	format, err := sniffContainer(br)
	if err != nil {
		dr.Close()
		counter.unmap()
		if codec != compress.None {
			return nil, fmt.Errorf("%s payload: %w", codec, err)
		}
		return nil, err
	}
	format.Codec = codec
	in := &Input{Format: format, counter: counter, decomp: dr}
	switch format.Kind {
	case KindTar:
		tr := NewTarReader(br)
		tr.holes = lim
		in.Reader = tr
	default:
		in.Reader = NewCpioReader(br)
	}
	return in, nil
}

// ErrUnknownFormat reports content that is neither cpio nor tar.
var ErrUnknownFormat = errors.New("unknown archive format")

func sniffContainer(br *bufio.Reader) (Format, error) {
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
	field := bytes.Trim(h[148:156], " \x00")
	if len(field) == 0 {
		return false
	}
	var want int64
	for _, c := range field {
		if c < '0' || c > '7' {
			return false
		}
		want = want*8 + int64(c-'0')
	}
	var sum int64
	for i, c := range h {
		if i >= 148 && i < 156 {
			c = ' '
		}
		sum += int64(c)
	}
	return sum == want
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

type tapReader struct {
	r   io.Reader
	tap Tap
}

func (t *tapReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.tap.Feed(p[:n])
	if err == io.EOF {
		t.tap.End()
	}
	return n, err
}

// countingReader counts what is read from the file on disk, for progress,
// and hashes it when the manifest needs the input's digest.
type countingReader struct {
	r io.Reader
	n int64
	h *asyncHash // nil when no digest was asked for

	file *os.File // r, when it may be mapped
	m    []byte   // file, mapped, once InPlace said yes
	fd   int      // file's, holding the lease while m is mapped
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.m != nil {
		return c.readMapped(p)
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.h != nil && n > 0 {
		c.h.Write(p[:n])
	}
	return n, err
}

// asyncHash computes sha256 on another goroutine: hashing a rootfs costs as
// much CPU as decompressing it, and the second core is otherwise idle while
// the first reads.
type asyncHash struct {
	ch     chan []byte
	done   chan struct{}
	h      hash.Hash
	pool   sync.Pool
	closed bool
	sum    []byte
}

func newAsyncHash() *asyncHash {
	a := &asyncHash{ch: make(chan []byte, 16), done: make(chan struct{}), h: digest.New()}
	a.pool.New = func() any { return make([]byte, 0, 64<<10) }
	go func() {
		defer close(a.done)
		for b := range a.ch {
			a.h.Write(b)
			//lint:ignore SA6002 the slice header allocation is cheaper than the copy it saves
			a.pool.Put(b[:0])
		}
	}()
	return a
}

func (a *asyncHash) Write(p []byte) {
	b := append(a.pool.Get().([]byte)[:0], p...)
	a.ch <- b
}

// Sum waits for the hashing to finish; later calls return the same sum.
func (a *asyncHash) Sum() []byte {
	if !a.closed {
		a.closed = true
		close(a.ch)
		<-a.done
		a.sum = a.h.Sum(nil)
	}
	return a.sum
}

// Digest returns "sha256:<hex>" of the whole input file. Decompressors may
// stop short of the end (trailing padding after the last frame), so the
// rest of the file is read first. For a tree it returns "".
func (in *Input) Digest() (string, error) {
	if in.counter == nil {
		return "", nil
	}
	if in.counter.h == nil {
		return "", errors.New("input opened without OpenOptions.Digest")
	}
	if _, err := io.Copy(io.Discard, in.counter); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(in.counter.h.Sum()), nil
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
