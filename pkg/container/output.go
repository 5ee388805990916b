package container

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
)

// OutputOptions configures Create.
type OutputOptions struct {
	// Compress chooses the level, threads and backend of the compressor.
	Compress compress.WriterOptions
	Dir      archive.DirWriterOptions
	// Digest makes Output.Digest available (the manifest's output
	// digest), at the cost of a sha256 pass on another core.
	Digest bool
	// From is the input the output is rewritten from: an ISO image output
	// is From's image with its initrd replaced. Rewrite sets it.
	From *Input
	// Reuse, when set and the output has the input's format and codec,
	// reuses the input's compressed bytes where the output's content is
	// the same: the whole file when nothing changed, the unchanged blocks
	// of an lz4 legacy stream otherwise (see reuse.go).
	Reuse *Reuse
	// Image says how an image output is made (Format.Image set).
	Image ImageOptions
}

// ImageOptions is what an image output needs besides its entries.
type ImageOptions struct {
	// Squash writes one layer; else the source's layers are kept and one
	// layer of the changes is added.
	Squash    bool
	CreatedBy string
	Epoch     *time.Time
	// Source is the input image; nil makes a new image of one layer.
	Source *ociimage.Image
}

// Output is an archive or tree being written. Nothing appears at Path until
// Commit: the content goes to a temporary file (or directory) beside it,
// renamed into place when complete, so a failure or an interrupt never
// leaves a partial output behind and never clobbers an existing one.
type Output struct {
	archive.Writer
	Path   string
	Format archive.Format
	// Compressor says what compressed the output: the codec, and the
	// external command or "go".
	Compressor string

	opt     OutputOptions
	iso     *isoOutput // an ISO image: the initrd is written to iso.inner
	reuse   *reuseWriter
	tmp     string
	file    *os.File
	buf     *bufio.Writer
	comp    io.WriteCloser
	counter *countingWriter
	done    bool
	image   *ociimage.Writer

	// direct: an external compressor writes to file itself, so the bytes
	// are counted by the file's offset and hashed once it is complete.
	direct    bool
	toTool    *bufio.Writer // entries on their way to the tool
	digest    bool
	directSum []byte
	written   int64 // at finish, for a direct output
}

// Discards passes on the writer's archive.Discarder: an image's, given
// back an entry of a layer it keeps.
func (o *Output) Discards() bool { return archive.Discards(o.Writer) }

// Written reports the bytes written to disk so far (compressed).
func (o *Output) Written() int64 {
	if o.iso != nil && o.iso.inner != nil {
		return o.iso.inner.Written()
	}
	if o.direct {
		if o.written > 0 || o.file == nil {
			return o.written
		}
		// The tool shares the file's offset: it is how far it got.
		off, _ := o.file.Seek(0, io.SeekCurrent)
		return off
	}
	if o.counter == nil {
		return 0
	}
	return o.counter.n
}

// userPathError names path, not the temporary file beside it that could not
// be made: the user knows the one, not the other.
func userPathError(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return &os.PathError{Op: "create", Path: path, Err: pe.Err}
	}
	return err
}

// Create starts writing f at path.
func Create(path string, f archive.Format, opt OutputOptions) (*Output, error) {
	if f.Kind == archive.KindDir {
		// "tree/", as a shell completes a directory name, is the tree.
		path = filepath.Clean(path)
	}
	if fi, err := os.Lstat(path); err == nil {
		if f.Kind == archive.KindDir || f.Image == ociimage.LayoutName {
			return nil, fmt.Errorf("%s: already exists; a tree is only written to a new directory", path)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: exists and is not a regular file; refusing to replace it", path)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	o := &Output{Path: path, Format: f}
	if err := containerWriting(f).Create(o, dir, base, opt); err != nil {
		return nil, err
	}
	return o, nil
}

// createTree starts o, a tree, in a new directory beside its path.
func createTree(o *Output, dir, base string, opt OutputOptions) error {
	tmp, err := os.MkdirTemp(dir, "."+base+".tmp-")
	if err != nil {
		return userPathError(o.Path, err)
	}
	w, err := archive.NewDirWriter(tmp, opt.Dir)
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	o.tmp, o.Writer = tmp, w
	return nil
}

// createImage starts o, an image, in a new directory beside its path: the
// layout itself, or where the tarball is made.
func createImage(o *Output, dir, base string, opt OutputOptions) error {
	tmp, err := os.MkdirTemp(dir, "."+base+".tmp-")
	if err != nil {
		return userPathError(o.Path, err)
	}
	kind := ociimage.Layout
	if o.Format.Image == ociimage.ArchiveName {
		kind = ociimage.Archive
	}
	w, err := ociimage.NewWriter(tmp, ociimage.WriteOptions{Kind: kind, Squash: opt.Image.Squash, CreatedBy: opt.Image.CreatedBy,
		Epoch: opt.Image.Epoch, Codec: o.Format.Codec, Source: opt.Image.Source})
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	o.tmp, o.Writer, o.image = tmp, w, w
	return nil
}

// createStream starts o, an archive file, in a temporary file beside its
// path: compressed, or reusing the input's compressed bytes.
func createStream(o *Output, dir, base string, opt OutputOptions) error {
	f := o.Format
	file, err := os.CreateTemp(dir, "."+base+".tmp-")
	if err != nil {
		return userPathError(o.Path, err)
	}
	o.tmp, o.file, o.opt = file.Name(), file, opt
	if r := opt.Reuse; r != nil && (f.Codec == r.Codec && f.Codec != compress.None || r.Segment) {
		// The compressor starts only once the output leaves the input's
		// path: an output equal to its input is a copy of the file.
		o.reuse = &reuseWriter{o: o, m: r.Matcher, in: r}
		o.reuse.startAhead()
		o.Writer, err = archive.NewWriterFor(o.reuse, f)
		if err != nil {
			o.Abort()
			return err
		}
		return nil
	}
	entries, err := o.startCompressor()
	if err != nil {
		o.Abort()
		return err
	}
	o.Writer, err = archive.NewWriterFor(entries, f)
	if err != nil {
		o.Abort()
		return err
	}
	return nil
}

// startCompressor sets up the compression of the output file and returns
// where the archive's bytes go.
func (o *Output) startCompressor() (io.Writer, error) {
	opt, f, file := o.opt, o.Format, o.file
	var err error
	if compress.RunsTool(f.Codec, opt.Compress) {
		o.direct, o.digest = true, opt.Digest
		o.comp, o.Compressor, err = compress.NewWriter(file, f.Codec, opt.Compress)
	} else {
		o.startBuffer()
		o.comp, o.Compressor, err = compress.NewWriter(o.buf, f.Codec, opt.Compress)
	}
	if err != nil {
		return nil, err
	}
	if o.direct {
		// Headers and small files would otherwise reach the tool's pipe one
		// write(2) each, and wake it as often (make bench: apply-gzip).
		o.toTool = bufio.NewWriterSize(o.comp, 1<<20)
		return o.toTool, nil
	}
	return o.comp, nil
}

// startBuffer sets up the counted, buffered path to the output file.
func (o *Output) startBuffer() {
	o.counter = &countingWriter{w: o.file}
	if o.opt.Digest {
		o.counter.h = newAsyncHash()
	}
	o.buf = bufio.NewWriterSize(o.counter, 256<<10)
}

// Commit finishes the archive and renames it into place.
func (o *Output) Commit() error {
	if o.done {
		return errors.New("output already finished")
	}
	if err := o.finish(); err != nil {
		o.Abort()
		return fmt.Errorf("writing %s: %w", o.Path, err)
	}
	o.done = true
	from := o.tmp
	if o.iso != nil {
		from = o.iso.out
	}
	if o.image != nil {
		from = o.image.Result()
	}
	if err := os.Rename(from, o.Path); err != nil {
		o.removeTemp()
		return err
	}
	if from != o.tmp {
		os.RemoveAll(o.tmp)
	}
	return syncDir(filepath.Dir(o.Path))
}

// finishPart finishes the archive as Commit does, and leaves it at the
// temporary path it returns: a part of an output of several (segout.go).
func (o *Output) finishPart() (string, error) {
	if o.done {
		return "", errors.New("output already finished")
	}
	if err := o.finish(); err != nil {
		o.Abort()
		return "", err
	}
	o.done = true
	return o.tmp, nil
}

func (o *Output) finish() error {
	if o.iso != nil {
		return o.iso.finish(o)
	}
	if err := o.Writer.Close(); err != nil {
		return err
	}
	if o.file == nil {
		return nil
	}
	if o.reuse != nil {
		if err := o.reuse.finish(); err != nil {
			return err
		}
	}
	if o.toTool != nil {
		if err := o.toTool.Flush(); err != nil {
			return err
		}
	}
	if o.comp != nil {
		if err := o.comp.Close(); err != nil {
			return err
		}
	}
	if o.direct {
		size, err := o.file.Seek(0, io.SeekCurrent)
		if err != nil {
			return err
		}
		o.written = size
		if o.digest {
			h := digest.New()
			if _, err := io.Copy(h, io.NewSectionReader(o.file, 0, size)); err != nil {
				return err
			}
			o.directSum = h.Sum(nil)
		}
	} else if err := o.buf.Flush(); err != nil {
		return err
	}
	if o.reuse != nil {
		if err := o.reuse.verify(); err != nil {
			return err
		}
	}
	// CreateTemp makes the file 0600; an image is meant to be read by others.
	if err := o.file.Chmod(0o644); err != nil {
		return err
	}
	// No fsync: the rename makes the output appear whole or not at all to
	// every reader, which is what a build needs; surviving a power cut
	// mid-build is left to the filesystem, as with every other build
	// step, and an fsync of a 400 MB image costs more than writing it.
	err := o.file.Close()
	o.file = nil
	return err
}

// Abort discards everything written. It is safe to call after Commit, when
// it does nothing, so callers can defer it.
func (o *Output) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.removeTemp()
}

func (o *Output) removeTemp() {
	if o.iso != nil && o.iso.inner != nil {
		o.iso.inner.removeTemp()
	}
	if o.reuse != nil {
		o.reuse.closeInput()
		if o.reuse.gzLay != nil {
			o.reuse.gzLay.Stop()
		}
	}
	if o.counter != nil && o.counter.h != nil && o.counter.sum == nil {
		o.counter.sum = o.counter.h.Sum() // stops the hashing goroutine
	}
	if o.file != nil {
		o.file.Close()
		o.file = nil
	}
	if o.tmp != "" {
		os.RemoveAll(o.tmp)
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some filesystems refuse fsync on a directory; the rename is done.
	_ = d.Sync()
	return nil
}

// countingWriter counts what goes to disk, and hashes it when the
// manifest needs the output's digest.
type countingWriter struct {
	w   io.Writer
	n   int64
	h   *asyncHash
	sum []byte
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.h != nil && n > 0 {
		c.h.Write(p[:n])
	}
	return n, err
}

// Digest returns "sha256:<hex>" of the file written, after Commit; "" for
// a tree or when OutputOptions.Digest was not set; an image's config
// digest (its ID).
func (o *Output) Digest() string {
	if o.image != nil {
		return o.image.ID()
	}
	if o.directSum != nil {
		return "sha256:" + hex.EncodeToString(o.directSum)
	}
	if o.counter == nil || o.counter.h == nil {
		return ""
	}
	if o.counter.sum == nil {
		o.counter.sum = o.counter.h.Sum()
	}
	return "sha256:" + hex.EncodeToString(o.counter.sum)
}

// SameFile reports whether a and b name the same existing file.
func SameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}
