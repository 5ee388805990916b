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

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
)

// OutputOptions configures createStream.
type OutputOptions struct {
	// Compress chooses the level, threads and backend of the compressor.
	Compress compress.WriterOptions
	// Digest makes Output.Digest available (the manifest's output
	// digest), at the cost of a sha256 pass on another core.
	Digest bool
	// Reuse, when set and the output has the input's format and codec,
	// reuses the input's compressed bytes where the content is the same
	// (reuse.go).
	Reuse *Reuse
}

// ImageOptions is what an image output needs besides its entries.
type ImageOptions struct {
	// Squash writes one layer; else the input image's layers are kept
	// and one layer of the changes is added.
	Squash    bool
	CreatedBy string
	Epoch     *time.Time
}

// sink is an output being written, one type per container: a stream
// (Output), a tree, an image, an ISO image, an initrd of segments, an ISO
// image of them. Nothing appears at its path until Commit: the content
// goes to a temporary file (or directory) beside it, renamed into place
// when complete and checked, so a failure or an interrupt never leaves a
// partial output behind and never clobbers an existing one. Abort
// discards it, and does nothing after Commit, so callers can defer it.
type sink interface {
	archive.Writer
	Commit() error
	Abort()
	// report says in res what was committed: its compressor, digest and
	// segments; note gets what a user should hear of it.
	report(res *Result, note func(string))
}

// placement is where an output goes: Path, from tmp beside it.
type placement struct {
	Path string
	tmp  string
	done bool
}

// place finishes an output with finish, which returns where it left it,
// and renames that to Path; removeTemp cleans up after a failure.
func (p *placement) place(finish func() (string, error), removeTemp func()) error {
	if p.done {
		return errors.New("output already finished")
	}
	from, err := finish()
	p.done = true
	if err != nil {
		removeTemp()
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err := os.Rename(from, p.Path); err != nil {
		removeTemp()
		return err
	}
	if from != p.tmp {
		os.RemoveAll(p.tmp)
	}
	return syncDir(filepath.Dir(p.Path))
}

// abort removes the temporary output, once.
func (p *placement) abort(removeTemp func()) {
	if !p.done {
		p.done = true
		removeTemp()
	}
}

// tempDir makes the temporary directory a tree, an image or an ISO image
// is written in, beside path.
func tempDir(path string) (string, error) {
	dir, base := splitPath(path)
	tmp, err := os.MkdirTemp(dir, "."+base+".tmp-")
	if err != nil {
		return "", userPathError(path, err)
	}
	return tmp, nil
}

// tempDirFor refuses what is at path (checkTarget), then makes the
// directory beside it that an output is written in.
func tempDirFor(path string, newDir bool) (placement, error) {
	if err := checkTarget(path, newDir); err != nil {
		return placement{}, err
	}
	tmp, err := tempDir(path)
	return placement{Path: path, tmp: tmp}, err
}

func splitPath(path string) (dir, base string) {
	dir, base = filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	return dir, base
}

// Output is an archive file being written: compressed, or reusing the
// input's compressed bytes.
type Output struct {
	archive.Writer
	placement
	Format archive.Format
	// Compressor says what compressed the output: the codec, and the
	// external command or "go".
	Compressor string

	opt     OutputOptions
	reuse   *reuseWriter
	file    *os.File
	buf     *bufio.Writer
	comp    io.WriteCloser
	counter *countingWriter
	level   compress.LevelChoice // chosen without --level, for report

	// direct: an external compressor writes to file itself, so the bytes
	// are counted by the file's offset and hashed once it is complete.
	direct    bool
	toTool    *bufio.Writer // entries on their way to the tool
	directSum string
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

// checkTarget refuses to write over what is at path: anything but a
// regular file, and for a tree or an image layout (newDir), anything.
func checkTarget(path string, newDir bool) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case newDir:
		return fmt.Errorf("%s: already exists; a tree is only written to a new directory", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: exists and is not a regular file; refusing to replace it", path)
	}
	return nil
}

// treeOut is a tree being written (treeContainer.create).
type treeOut struct {
	*archive.DirWriter
	placement
}

func (o *treeOut) Commit() error {
	return o.place(func() (string, error) { return o.tmp, o.DirWriter.Close() }, o.removeTemp)
}
func (o *treeOut) Abort()                       { o.abort(o.removeTemp) }
func (o *treeOut) removeTemp()                  { os.RemoveAll(o.tmp) }
func (o *treeOut) report(*Result, func(string)) {}

// imageOut is an image being written (imageContainer.create).
type imageOut struct {
	*ociimage.Writer
	placement
}

func (o *imageOut) Commit() error {
	return o.place(func() (string, error) {
		err := o.Writer.Close()
		return o.Result(), err
	}, o.removeTemp)
}
func (o *imageOut) Abort()      { o.abort(o.removeTemp) }
func (o *imageOut) removeTemp() { os.RemoveAll(o.tmp) }

// report: an image's digest is its config's (its ID).
func (o *imageOut) report(res *Result, _ func(string)) { res.OutDigest = o.ID() }

// createStream starts an archive file at path, in a temporary file beside
// it: compressed, or reusing the input's compressed bytes.
func createStream(path string, f archive.Format, opt OutputOptions) (*Output, error) {
	if err := checkTarget(path, false); err != nil {
		return nil, err
	}
	dir, base := splitPath(path)
	file, err := os.CreateTemp(dir, "."+base+".tmp-")
	if err != nil {
		return nil, userPathError(path, err)
	}
	o := &Output{placement: placement{Path: path, tmp: file.Name()}, Format: f, file: file, opt: opt}
	var entries io.Writer
	if r := opt.Reuse; r != nil && (f.Codec == r.Codec && f.Codec != compress.None || r.Segment) {
		// The compressor starts only once the output leaves the input's
		// path: an output equal to its input is a copy of the file.
		o.reuse = &reuseWriter{o: o, m: r.Matcher, in: r}
		o.reuse.startAhead()
		entries = o.reuse
	} else if entries, err = o.startCompressor(); err != nil {
		o.Abort()
		return nil, err
	}
	if o.Writer, err = archive.NewWriterFor(entries, f); err != nil {
		o.Abort()
		return nil, err
	}
	return o, nil
}

// startCompressor sets up the compression of the output file and returns
// where the archive's bytes go.
func (o *Output) startCompressor() (io.Writer, error) {
	var to io.Writer = o.file
	if o.direct = compress.RunsTool(o.Format.Codec, o.opt.Compress); !o.direct {
		o.startBuffer()
		to = o.buf
	}
	var err error
	if o.comp, o.Compressor, err = compress.NewWriter(to, o.Format.Codec, o.opt.Compress); err != nil || !o.direct {
		return o.comp, err
	}
	// Headers and small files would otherwise reach the tool's pipe one
	// write(2) each, and wake it as often (make bench: apply-gzip).
	o.toTool = bufio.NewWriterSize(o.comp, 1<<20)
	return o.toTool, nil
}

// startBuffer sets up the counted, buffered path to the output file.
func (o *Output) startBuffer() {
	o.counter = &countingWriter{w: o.file}
	if o.opt.Digest {
		o.counter.h = newAsyncHash()
	}
	o.buf = bufio.NewWriterSize(o.counter, 256<<10)
}

func (o *Output) Commit() error {
	return o.place(func() (string, error) { return o.tmp, o.finish() }, o.removeTemp)
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

// report says the compressor, the digest and, for a lone stream
// compressed anew without --level, the level chosen and why.
func (o *Output) report(res *Result, note func(string)) {
	res.Compressor, res.OutDigest = o.Compressor, o.Digest()
	if o.Compressor != CompressorCopy && o.level.Level != 0 {
		res.Level = o.level.Why
		if o.level.Guess && note != nil {
			note(fmt.Sprintf("the output compressed anew with %s (%s): pass --level to choose", o.Compressor, o.level.Why))
		}
	}
}

func (o *Output) finish() error {
	if err := o.Writer.Close(); err != nil {
		return err
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
		if o.opt.Digest {
			if o.directSum, err = fileDigest(o.file, size); err != nil {
				return err
			}
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

// Abort discards everything written; after Commit it does nothing.
func (o *Output) Abort() { o.abort(o.removeTemp) }

func (o *Output) removeTemp() {
	if o.reuse != nil {
		o.reuse.closeInput()
		if o.reuse.gzLay != nil {
			o.reuse.gzLay.Stop()
		}
	}
	if o.counter != nil && o.counter.h != nil {
		o.counter.h.Sum() // stops the hashing goroutine
	}
	if o.file != nil {
		o.file.Close()
		o.file = nil
	}
	os.RemoveAll(o.tmp)
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
	w io.Writer
	n int64
	h *asyncHash
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.h != nil && n > 0 {
		c.h.Write(p[:n])
	}
	return n, err
}

// Digest returns "sha256:<hex>" of the file written, after Commit; ""
// when OutputOptions.Digest was not set.
func (o *Output) Digest() string {
	if o.directSum != "" {
		return o.directSum
	}
	if o.counter == nil || o.counter.h == nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(o.counter.h.Sum())
}

// SameFile reports whether a and b name the same existing file.
func SameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
