package container

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
	"github.com/rootfs-trim/rootfs-trim/pkg/splice"
)

// Input is an open archive or tree.
type Input struct {
	archive.Reader
	Path string
	// Format is what the input is: its container and its archive.
	Format Shape
	// Size is the size of the file on disk (compressed), 0 for a tree;
	// for an archive in a container, the size of its parts.
	Size int64
	// Parts are where the archive is in its container, when that is not
	// the archive file itself (an ISO image); nil otherwise.
	Parts []Part
	// ISO is the image, for an archive read from an ISO image.
	ISO *ISO

	file *os.File    // the input file, nil for a tree, an image or standard input
	info os.FileInfo // file's, as opened
	src  source      // what its container holds open besides the file
}

// source is what an input holds open besides its file, one type per way
// of reading a container: a stream (streamSource), a tree (treeSource), an
// image (imageSource), an initrd of segments (segReader), an ISO image
// around either (isoSource).
type source interface {
	// digest is "sha256:<hex>" of the input (Input.Digest).
	digest() (string, error)
	// consumed is how far into the file on disk the reading has come.
	consumed() int64
	close() error
	// describe is Input.Describe's.
	describe() (*Description, error)
}

// Segments returns the initrd segments read so far (all of them once the
// entries are read to the end), nil when the input is not read as
// segments: a tree, a tar, or one stream of a codec read whole.
func (in *Input) Segments() []Segment {
	if s := in.segs(); s != nil {
		return s.segs
	}
	return nil
}

// segs is the segment reader of an initrd read as segments, nil otherwise.
func (in *Input) segs() *segReader {
	s, _ := in.Reader.(*segReader)
	return s
}

// Image is the image the input is, nil for an archive or a tree.
func (in *Input) Image() *ociimage.Image {
	if s, ok := in.src.(imageSource); ok {
		return s.img
	}
	return nil
}

// FileInfo is the input file's, as it was opened; nil for a tree.
func (in *Input) FileInfo() os.FileInfo { return in.info }

// Consumed reports how many bytes of the file on disk have been read, for
// progress reporting.
func (in *Input) Consumed() int64 { return in.src.consumed() }

// Digest returns "sha256:<hex>" of the whole input file. Decompressors may
// stop short of the end (trailing padding after the last frame), so the
// rest of the file is read first. For a tree it returns "", for an image
// its config's digest (its ID).
func (in *Input) Digest() (string, error) { return in.src.digest() }

func (in *Input) Close() error {
	err := in.src.close()
	if in.file != nil {
		if cerr := in.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
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
	// Platform (os/arch[/variant]) picks the image of a multi-platform
	// image; "" takes the only one.
	Platform string
	// ref is the TAG of a DIR:TAG input (Open sets it).
	ref string
	// taps, when set, watch the input's decompressed streams (Rewrite
	// sets them, for an output that reuses its bytes).
	taps taps
	// ImageData, when set, says which files of an image (by clean name)
	// the caller will read the data of, so that the first pass over its
	// layers keeps it and no layer is decompressed twice
	// (ociimage.Options.Keep).
	ImageData func(name string) bool
}

// taps are the matchers that watch an input's decompressed streams as
// they are read, so that an output can be matched against them (reuse.go):
// one per segment of an initrd read as segments, from its start; 0 for a
// lone stream.
type taps map[int]*splice.Matcher

// at is segment k's (0-based) matcher, made when it starts; nil without
// taps.
func (t taps) at(k int) *splice.Matcher {
	if t == nil {
		return nil
	}
	if t[k] == nil {
		t[k] = splice.NewMatcher(0)
	}
	return t[k]
}

// DefaultMaxSize is far above any real rootfs (minikube's is ~0.9 GB) and
// far below what would fill a build machine's disk or time budget.
const DefaultMaxSize = 32 << 30

// Open opens a directory tree or an archive file, detecting compression and
// format from the content, never from the name. The zero OpenOptions are
// the defaults.
func Open(path string, opt OpenOptions) (*Input, error) {
	if opt.MaxSize <= 0 {
		opt.MaxSize = DefaultMaxSize
	}
	if path == Stdin {
		return openPipe(path, os.Stdin, false, opt)
	}
	fi, err := os.Stat(path)
	if dir, ref, ok := ociimage.SplitRef(path); err != nil && ok {
		// DIR:TAG, one image of a layout by its name, as skopeo's
		// oci:DIR:TAG; reported under the name the user gave.
		opt.ref = ref
		in, err := openImage(dir, opt)
		if err != nil {
			return nil, err
		}
		in.Path = path
		return in, nil
	}
	if err != nil {
		return nil, err
	}
	c, ok := containerOf(path, fi)
	if !ok && IsPipe(fi) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		return openPipe(path, f, true, opt)
	}
	if !ok {
		return nil, fmt.Errorf("%s: not a regular file or directory", path)
	}
	return c.Open(path, fi, opt)
}

// Source opens an input, as often as a pass over it needs: what a command
// hands trim, check and diff (SourceOf, with the user's options), which
// never choose how an input is opened.
type Source func() (*Input, error)

// SourceOf is the input at path, opened with opt.
func SourceOf(path string, opt OpenOptions) Source {
	return func() (*Input, error) { return Open(path, opt) }
}

// Stdin is the input name that reads standard input, as a stream.
const Stdin = "-"

// IsPipe reports whether fi is a pipe or a socket (a shell's <(...) is
// /dev/fd/N, a pipe): read once, from its start, as a single stream.
func IsPipe(fi os.FileInfo) bool { return fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0 }

// openPipe reads f as one stream that can be read only once: it is never
// mapped, and its size is unknown (0). own says whether Close closes f
// (not standard input, which the process keeps).
func openPipe(path string, f *os.File, own bool, opt OpenOptions) (*Input, error) {
	in, err := openStream(f, nil, opt, true)
	if err != nil {
		if own {
			f.Close()
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// No FileInfo: nothing may open the input again to reuse its bytes.
	in.Path = path
	if own {
		in.file = f
	}
	return in, nil
}

// streamImageGuard refuses a tar read as a stream that is a container
// image (docker save's tarball, an OCI archive): `docker load` and `podman
// load` read one from a pipe, and `docker load` a compressed one (gzip,
// bzip2, xz, zstd, as its documentation says). Read as the plain tar it
// also is, its layers' files would never be judged, and it could pass as
// clean. An image's
// parts are read by name, so it must be given as an uncompressed file,
// which the image detection (ociimage.Detect) judges whole.
type streamImageGuard struct {
	archive.Reader
}

func (g *streamImageGuard) Next() (*archive.Entry, error) {
	e, err := g.Reader.Next()
	if err == nil && ociimage.Marker(e.Name) {
		return nil, fmt.Errorf("member %s: this tar is a container image (docker save, an OCI archive), which rootfs-trim reads only from an uncompressed file (its layers are read by name); give it as one", names.Quote(e.Name))
	}
	return e, err
}

// openImage opens an image: its parts are its layers, read as the merged
// filesystem (ociimage.Reader).
func openImage(path string, opt OpenOptions) (*Input, error) {
	img, err := ociimage.Open(path, ociimage.Options{Platform: opt.Platform, Ref: opt.ref, MaxSize: opt.MaxSize, Backend: opt.Backend, Keep: opt.ImageData})
	if err != nil {
		return nil, err
	}
	// Its compression is its top layer's, which a layer apply adds takes
	// where a new layer may have it (Codec.IsLayer), else gzip (what
	// every consumer reads).
	f := archive.Format{Kind: archive.KindTar, Codec: compress.Gzip}
	if n := len(img.Layers); n > 0 {
		if c := img.Layers[n-1].Codec(); c.IsLayer() {
			f.Codec = c
		}
	}
	r := img.Reader()
	return &Input{Reader: r, Path: path, Format: Shape{imageContainer{kind: img.Kind}, f}, src: imageSource{img, r}}, nil
}

// streamFile reads the file f at path as one stream.
func streamFile(path string, f *os.File, fi os.FileInfo, opt OpenOptions) (*Input, error) {
	in, err := openStream(f, f, opt, false)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fileInput(in, path, f, fi)
}

// fileInput makes in, read from f, the input of the file at path.
func fileInput(in *Input, path string, f *os.File, fi os.FileInfo) (*Input, error) {
	in.Path, in.Size, in.file = path, fi.Size(), f
	var err error
	if in.info, err = f.Stat(); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

// openStream reads the archive in f; file, if not nil, is f, an *os.File
// read from its start, which the decoder may map (countingReader.InPlace).
// pipe says f is a pipe or standard input, where a raw cpio is read as an
// initrd's first segment (streamSegment).
func openStream(f io.Reader, file *os.File, opt OpenOptions, pipe bool) (*Input, error) {
	maxSize := opt.MaxSize
	counter := &countingReader{r: f, file: file}
	if opt.Digest {
		counter.h = newAsyncHash()
	}
	dr, codec, err := compress.NewReader(counter, compress.ReaderOptions{Backend: opt.Backend})
	if err != nil {
		return nil, err
	}
	lim := archive.NewBudget(dr, maxSize)
	var src io.Reader = lim
	if tap := opt.taps.at(0); tap != nil {
		src = &tapReader{r: src, tap: tap}
	}
	br := bufio.NewReaderSize(src, 256<<10)
	format, err := archive.SniffFormat(br)
	if err != nil {
		dr.Close()
		counter.unmap()
		if codec != compress.None {
			return nil, fmt.Errorf("%s payload: %w", codec, err)
		}
		return nil, err
	}
	format.Codec = codec
	in := &Input{Format: Shape{streamContainer{}, format}, src: &streamSource{counter: counter, decomp: dr}}
	in.Reader = archive.NewReaderFor(br, format, lim)
	if format.Kind == archive.KindTar && (file == nil || codec != compress.None) {
		in.Reader = &streamImageGuard{Reader: in.Reader}
	}
	if pipe && codec == compress.None && format.Kind != archive.KindTar {
		in.Reader = streamSegment{archive.NewSegmentCpioReader(br, true)}
	}
	return in, nil
}

type tapReader struct {
	r   io.Reader
	tap *splice.Matcher
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

	file *os.File // r, when it may be mapped or handed to a tool
	tool *os.File // file, reopened for the tool that reads it (ToolInput)
	m    []byte   // file, mapped, once InPlace said yes
	fd   int      // file's, holding the lease while m is mapped
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.m != nil { // InPlace mapped it
		if c.n >= int64(len(c.m)) {
			return 0, io.EOF
		}
		n := copy(p, c.m[c.n:])
		c.n += int64(n)
		return n, nil
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
	ch   chan []byte
	done chan struct{}
	h    hash.Hash
	pool sync.Pool
	sum  []byte // once Sum has stopped the hashing
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

func (a *asyncHash) Write(p []byte) (int, error) {
	a.ch <- append(a.pool.Get().([]byte)[:0], p...)
	return len(p), nil
}

// Sum waits for the hashing to finish; later calls return the same sum.
func (a *asyncHash) Sum() []byte {
	if a.sum == nil {
		close(a.ch)
		<-a.done
		a.sum = a.h.Sum(nil)
	}
	return a.sum
}

// streamSource is a stream's: the counted file (or pipe) and its decoder.
type streamSource struct {
	counter *countingReader
	decomp  io.Closer
}

func (s *streamSource) consumed() int64 { return s.counter.consumed() }

func (s *streamSource) digest() (string, error) {
	if s.counter.h == nil {
		return "", errors.New("input opened without OpenOptions.Digest")
	}
	if _, err := io.Copy(io.Discard, s.counter); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(s.counter.h.Sum()), nil
}

func (s *streamSource) close() error {
	if s.counter.h != nil {
		s.counter.h.Sum() // stops the hashing goroutine
	}
	err := s.decomp.Close()
	s.counter.unmap() // after the decoder, which may read the mapping until closed
	if s.counter.tool != nil {
		s.counter.tool.Close()
	}
	return err
}

// treeSource is a tree's: its reader holds an os.Root until closed.
type treeSource struct{ r *archive.DirReader }

func (treeSource) consumed() int64         { return 0 }
func (treeSource) digest() (string, error) { return "", nil }
func (s treeSource) close() error          { return s.r.Close() }

// imageSource is an image's: its digest is its config's (its ID).
type imageSource struct {
	img *ociimage.Image
	r   *ociimage.Reader
}

func (imageSource) consumed() int64           { return 0 }
func (s imageSource) digest() (string, error) { return s.img.ID(), nil }
func (s imageSource) close() error {
	s.r.Close()
	return s.img.Close()
}
