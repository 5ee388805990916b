package container

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"runtime"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/splice"
)

// Reuse describes the input an output may reuse compressed bytes from. Its
// Matcher must also be the tap of the input being read (OpenOptions.taps), so that
// it sees the input's decompressed stream.
type Reuse struct {
	Path string // the input file
	// Info is Path's as the input was opened (Input.FileInfo): what is
	// reused from Path must be that file, unchanged, not one put in its
	// place since.
	Info    os.FileInfo
	Codec   compress.Codec
	Backend compress.Backend // to decompress the input again, if needed
	Matcher *splice.Matcher
	// Note receives a line when the reuse path falls back to full
	// recompression for a reason worth telling (an input it cannot
	// splice); nil discards.
	Note func(string)
	// ExpectSame says the output will most likely equal the input (a
	// repack): the output's bytes are then digested for verify only from
	// the first difference on, and the identical start, if there is a
	// difference, from the input decompressed again. An output equal to
	// its input is a copy and needs no digest: this saves a pass over
	// every byte (make bench: repack-lz4) at the cost of a second
	// decompression of the start when the bet is lost.
	ExpectSame bool
	// Offset is where the input's stream starts in Path: an initrd
	// segment's; Length, when set and not 0, its length once known (0
	// while it is not: to the end of the file).
	Offset int64
	Length func() int64
	// Segment: the stream is an initrd segment, reused when raw too (a
	// microcode cpio is copied, never written anew) and, when its codec
	// cannot be written, copied if unchanged and written in the output's
	// codec otherwise.
	Segment bool
	// Several, when set, says whether the segment is one of several, by
	// the time the output is finished: its padding after the last
	// trailer is then kept (onlyZerosLeft). A lone stream's goes, as the
	// archive writer lays it out (apply_splice.txtar's "lost late" bet).
	Several func() bool
	// GzipLayout, when set, is the block map the input's decoder makes as
	// it reads (splice.NewGzipReader): the gzip splice takes it instead of
	// decoding the input a second time (splice.ScanGzip).
	GzipLayout *splice.GzipLayout
}

// CompressorCopy is how the manifest records an output that is the
// input's compressed bytes, copied.
const CompressorCopy = "copy of the input"

// reuseWriter takes the output's archive bytes. While they equal the
// input's, it only counts them; at the first difference it starts a sink
// (an lz4 splice, or the full compressor fed the input's identical prefix
// again), and at the end, if nothing differed, the input file is copied.
type reuseWriter struct {
	o     *Output
	m     *splice.Matcher
	in    *Reuse
	hash  maphash.Hash // of every archive byte, for verify; gzip: cells
	cells splice.GzipCells

	n       int64 // output bytes, all equal to the input's so far, while sink == nil
	total   int64
	sink    func(p []byte, src int64) error
	lz4     *splice.BlockSplicer
	lz4Tool bool // the lz4 tool compresses the new blocks
	xz      *splice.BlockSplicer
	xzDesc  string // the compressor of the new xz blocks
	gz      *splice.Gzip
	gzLay   *splice.GzipLayout
	gzSize  int64 // the input's size as the splice began
	inFile  *os.File
	ahead   *copyAhead // copying the input file to the output meanwhile
}

func (r *reuseWriter) Write(p []byte) (int, error) {
	r.total += int64(len(p))
	if !r.in.ExpectSame {
		r.sum().Write(p)
	}
	err := r.m.Match(p, r.emit)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// sum takes archive bytes for verify: for gzip, the CRC-32s of its MiBs
// (the trailer's, and the check's).
func (r *reuseWriter) sum() io.Writer {
	if r.in.Codec == compress.Gzip {
		return &r.cells
	}
	return &r.hash
}

func (r *reuseWriter) emit(run []byte, src int64) error {
	if r.sink == nil {
		if src == r.n {
			r.n += int64(len(run))
			return nil
		}
		if err := r.start(); err != nil {
			return err
		}
	}
	if r.in.ExpectSame {
		r.sum().Write(run)
	}
	return r.sink(run, src)
}

// replayPrefix writes the output's first r.n bytes, which equal the
// input's (the Matcher compared each) and went by unkept, to w, by
// decompressing the input again: to the digest (with ExpectSame they went
// by undigested), or to the compressor that takes over.
func (r *reuseWriter) replayPrefix(w io.Writer) error {
	if r.n == 0 {
		return nil
	}
	f, size, err := r.openInput()
	if err != nil {
		return err
	}
	d, _, err := compress.NewReader(r.at(f, size), compress.ReaderOptions{Backend: r.in.Backend})
	if err != nil {
		return fmt.Errorf("%s: %w", r.in.Path, err)
	}
	defer d.Close()
	if _, err := io.CopyN(w, d, r.n); err != nil {
		return fmt.Errorf("%s: decompressing again: %w", r.in.Path, err)
	}
	return nil
}

// start leaves the input's path: the output so far is the input's first
// r.n bytes.
func (r *reuseWriter) start() error {
	if err := r.stopAhead(); err != nil {
		return err
	}
	if r.in.ExpectSame {
		if err := r.replayPrefix(r.sum()); err != nil {
			return err
		}
	}
	start := splicers[r.in.Codec]
	if start == nil || r.o.Format.Codec != r.in.Codec {
		return r.startFull()
	}
	err := start(r)
	if !errors.Is(err, splice.ErrUnhandled) {
		return err // nil, or a real failure
	}
	r.note(fmt.Sprintf("%v; recompressing the whole output", err))
	if c := r.o.counter; c != nil {
		// The splicer set up a path to the file and wrote nothing to it.
		if c.h != nil {
			c.h.Sum()
		}
		r.o.counter, r.o.buf = nil, nil
	}
	return r.startFull()
}

func (r *reuseWriter) note(s string) {
	if r.in.Note != nil {
		r.in.Note(s)
	}
}

// openInput opens the input file again, for reading at offsets of its
// own: the archive reader keeps reading the first descriptor meanwhile.
// It must be the file that reader has open, as it was.
func (r *reuseWriter) openInput() (*os.File, int64, error) {
	if r.inFile == nil {
		f, err := os.Open(r.in.Path)
		if err != nil {
			return nil, 0, err
		}
		r.inFile = f
	}
	fi, err := r.inFile.Stat()
	if err != nil {
		return nil, 0, err
	}
	if was := r.in.Info; was != nil && (!os.SameFile(fi, was) || fi.Size() != was.Size() || !fi.ModTime().Equal(was.ModTime())) {
		return nil, 0, fmt.Errorf("%s: replaced or changed while it was read", r.in.Path)
	}
	size := fi.Size() - r.in.Offset
	if r.in.Length != nil {
		if n := r.in.Length(); n > 0 {
			size = n
		}
	}
	return r.inFile, size, nil
}

// at is the input's stream in f, of size bytes.
func (r *reuseWriter) at(f *os.File, size int64) *io.SectionReader {
	return io.NewSectionReader(f, r.in.Offset, size)
}

// scanInput opens the input again and reads its layout with scan. An
// input the splicer does not handle stays ErrUnhandled (the caller falls
// back to full recompression); any other failure names the input.
func scanInput[L any](r *reuseWriter, scan func(io.ReaderAt, int64) (L, error)) (io.ReaderAt, L, error) {
	var none L
	file, size, err := r.openInput()
	if err != nil {
		return nil, none, err
	}
	f := r.at(file, size)
	lay, err := scan(f, size)
	if err != nil && !errors.Is(err, splice.ErrUnhandled) {
		err = fmt.Errorf("%s: %w", r.in.Path, err)
	}
	return f, lay, err
}

func (r *reuseWriter) startLz4() error {
	f, blocks, err := scanInput(r, splice.ScanLz4Legacy)
	if err != nil {
		return err
	}
	o := r.o
	o.startBuffer()
	// Level 0 (an ISO's initrd) is lz4's Buildroot level, 9.
	r.lz4 = splice.NewLz4(o.buf, f, blocks, compress.Lz4Levels[cmp.Or(o.opt.Compress.Level, 9)])
	tool, ok, err := compress.Lz4LegacyBlockTool(o.opt.Compress.Level, o.opt.Compress.Backend)
	if err != nil {
		return err
	}
	if ok {
		r.lz4.CompressBlock = tool
		r.lz4Tool = true
	}
	if err := r.lz4.Prefix(r.n); err != nil {
		return err
	}
	r.sink = r.lz4.Write
	return nil
}

func (r *reuseWriter) startGzip() error {
	scan := splice.ScanGzip
	if mapped := r.in.GzipLayout; mapped != nil {
		// Mapped by the decoder the input is read with: no second decode.
		scan = func(_ io.ReaderAt, size int64) (*splice.GzipLayout, error) {
			r.gzSize = size
			return mapped, nil
		}
	}
	f, lay, err := scanInput(r, scan)
	if err != nil {
		return err
	}
	r.gzLay = lay
	o := r.o
	o.startBuffer()
	gz := splice.NewGzip(o.buf, f, lay)
	if err := gz.Prefix(r.n, r.m.Bytes); err != nil {
		lay.Stop()
		r.gzLay = nil
		return err
	}
	r.gz = gz
	r.sink = gz.Write
	return nil
}

// startXz splices an xz stream of several blocks (`xz -T0`,
// `--block-size`): the blocks whose content is unchanged are copied, the
// rest compressed anew as blocks of at most the input's largest block
// size, with CRC32 checks, then a new index and footer. A one-block input
// goes to startFull, which writes one block too.
func (r *reuseWriter) startXz() error {
	f, lay, err := scanInput(r, splice.ScanXz)
	if err != nil {
		return err
	}
	if len(lay.Blocks) < 2 {
		return r.startFull()
	}
	if lay.Check != splice.XzCheckCRC32 {
		// The kernel's decoder knows CRC32 only (and none): the output's
		// new blocks have CRC32 checks, and one stream has one check type.
		return fmt.Errorf("xz: check type %d, not CRC32: %w", lay.Check, splice.ErrUnhandled)
	}
	o := r.o
	o.startBuffer()
	opt := compress.WriterOptions{Level: o.opt.Compress.Level, SingleBlock: true, Threads: 1, Backend: o.opt.Compress.Backend}
	stream := func(src []byte) ([]byte, error) {
		var buf bytes.Buffer
		buf.Grow(len(src)/3 + 4096)
		w, _, err := compress.NewWriter(&buf, compress.Xz, opt)
		if err != nil {
			return nil, err
		}
		_, err = w.Write(src)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		return buf.Bytes(), err
	}
	probe, desc, err := compress.NewWriter(io.Discard, compress.Xz, opt)
	if err != nil {
		return err
	}
	probe.Close()
	decode := func(rd io.Reader) (io.Reader, error) {
		d, _, err := compress.NewReader(rd, compress.ReaderOptions{Backend: r.in.Backend})
		return d, err
	}
	threads := max(1, runtime.GOMAXPROCS(0))
	r.xz = splice.NewXz(o.buf, f, lay, splice.XzOptions{BlockSize: int(lay.MaxLen()), Compress: stream, Decode: decode, Queue: threads})
	r.xzDesc = desc
	if err := r.xz.Prefix(r.n); err != nil {
		return err
	}
	r.sink = r.xz.Write
	return nil
}

func (r *reuseWriter) startFull() error {
	if r.in.Codec == compress.Xz && r.o.Format.Codec == compress.Xz {
		// Write the blocks the way the input has them: one block in, one
		// block out (on one core; --recompress=full uses every core, in
		// blocks).
		f, size, err := r.openInput()
		if err != nil {
			return err
		}
		if lay, err := splice.ScanXz(r.at(f, size), size); err == nil && len(lay.Blocks) == 1 {
			r.o.opt.Compress.SingleBlock = true
		}
	}
	entries, err := r.o.startCompressor()
	if err != nil {
		return err
	}
	if err := r.replayPrefix(entries); err != nil {
		return err
	}
	r.sink = func(p []byte, _ int64) error {
		_, err := entries.Write(p)
		return err
	}
	return nil
}

// finish ends the output once the archive writer is closed.
func (r *reuseWriter) finish() error {
	defer r.closeInput()
	if r.sink == nil {
		if r.m.InputEnded() && (r.n == r.m.InputLen() || r.onlyZerosLeft()) {
			return r.copyInput()
		}
		// The output is a strict prefix of the input (the input had
		// more padding after its trailer, say).
		if err := r.start(); err != nil {
			return err
		}
	}
	if r.gz != nil {
		if err := r.gz.Close(r.cells.Sum(), r.total); err != nil {
			return err
		}
		// The output has reached the input's end: the scan is about done.
		if more, _ := r.gz.More(r.gzSize); more {
			r.note("the input has more than one gzip member; only the first one's blocks were reused")
		}
		r.o.Compressor = fmt.Sprintf("%s splice: %d block(s) copied from the input, %d stretch(es) compressed at level %d, go", compress.Gzip, r.gz.Copied, r.gz.Regions, r.gzLay.Level)
	}
	if r.xz != nil {
		if err := r.xz.Close(); err != nil {
			return err
		}
		r.o.Compressor = fmt.Sprintf("%s splice: %d block(s) copied from the input, %d compressed (%s)", compress.Xz, r.xz.Copied, r.xz.Compressed, r.xzDesc)
	}
	if r.lz4 != nil {
		if err := r.lz4.Close(); err != nil {
			return err
		}
		by := "go"
		if r.lz4Tool {
			by = "external lz4"
		}
		r.o.Compressor = fmt.Sprintf("%s splice: %d block(s) copied from the input, %d compressed, %s", compress.Lz4Legacy, r.lz4.Copied, r.lz4.Compressed, by)
	}
	return nil
}

// onlyZerosLeft reports whether the input segment holds nothing but zeros
// after the output's r.n bytes, all of them its own: the output is the
// input but for padding after its last trailer, which the archive writer
// lays out its own way (to the next 512 bytes), and the kernel skips
// (init/initramfs.c: do_skip, then do_start taking zeros as padding
// before the next header). The input's bytes are kept, padding included,
// as a repack that changes nothing must give them.
func (r *reuseWriter) onlyZerosLeft() bool {
	if !r.in.Segment || r.in.Several == nil || !r.in.Several() {
		return false
	}
	rest, ok := r.m.Bytes(r.n, r.m.InputLen())
	if !ok {
		return false
	}
	for _, b := range rest {
		if b != 0 {
			return false
		}
	}
	return true
}

// startAhead starts copying the input file into the output on another
// core, while the input is read: if the output turns out equal to the
// input, the copy is then done, or nearly, instead of starting at the end
// (make bench: repack-lz4). An input that cannot be opened is left to the
// path that needs it to report.
func (r *reuseWriter) startAhead() {
	f, size, err := r.openInput()
	if err != nil {
		return
	}
	r.ahead = startCopyAhead(f, r.o.file, r.in.Offset, size)
}

// stopAhead abandons the copy of the input, if one runs, and empties the
// output file for what writes it instead.
func (r *reuseWriter) stopAhead() error {
	if r.ahead == nil {
		return nil
	}
	r.ahead.stop()
	r.ahead = nil
	return r.o.file.Truncate(0)
}

func (r *reuseWriter) copyInput() error {
	f, size, err := r.openInput()
	if err != nil {
		return err
	}
	r.o.startBuffer()
	ahead := false // the input is in the output already
	if a := r.ahead; a != nil {
		r.ahead = nil
		switch ahead = a.wait() == nil; {
		case ahead && a.size > size:
			// A segment whose end was not known when the copy started:
			// it copied to the end of the file.
			err = r.o.file.Truncate(size)
		case !ahead:
			// Copy again below, the usual way, which reports what fails.
			err = r.o.file.Truncate(0)
		}
		if err != nil {
			return err
		}
	}
	switch c := r.o.counter; {
	case ahead:
		c.n += size
		if c.h != nil {
			_, err = io.Copy(c.h, r.at(f, size))
		}
	case c.h == nil:
		// No digest to take on the way: file to file in the kernel
		// (copy_file_range), not through this process's memory.
		if _, err = f.Seek(r.in.Offset, io.SeekStart); err != nil {
			return err
		}
		n, err := r.o.file.ReadFrom(io.LimitReader(f, size))
		c.n += n
		if err == nil && n != size {
			err = fmt.Errorf("%s: copied %d of %d bytes", r.in.Path, n, size)
		}
		if err != nil {
			return err
		}
	default:
		_, err = io.Copy(r.o.buf, r.at(f, size))
	}
	if err == nil {
		r.o.Compressor = CompressorCopy
	}
	return err
}

// verify decompresses a spliced output and compares it with the archive
// bytes written. The digest is maphash's: a 64-bit check against a bug in
// the splicer, where sha256 would cost as much CPU as the decompression. A copy needs no check: the input's stream was compared
// with the output's byte by byte. A full recompression is the codec
// library's or tool's own output.
func (r *reuseWriter) verify() error {
	if r.lz4 == nil && r.gz == nil && r.xz == nil {
		return nil
	}
	if r.gz != nil {
		return r.verifyGzip()
	}
	want := r.hash.Sum64()
	if _, err := r.o.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	// xz is read by the xz tool where there is one: several threads, and
	// its own reading of the new index and checks.
	d, _, err := compress.NewReader(r.o.file, compress.ReaderOptions{Backend: r.in.Backend})
	if err != nil {
		return fmt.Errorf("checking the spliced output: %w", err)
	}
	defer d.Close()
	h := maphash.Hash{}
	h.SetSeed(r.hash.Seed())
	n, err := io.Copy(&h, d)
	if err != nil {
		return fmt.Errorf("checking the spliced output: %w", err)
	}
	if n != r.total || h.Sum64() != want {
		return fmt.Errorf("checking the spliced output: it decompresses to %d bytes that differ from the %d written; nothing was written (use --recompress=full and report this)", n, r.total)
	}
	return nil
}

// closeInput ends the copy of the input, if one still runs, and closes
// the input file: in that order, so the copy never reads a closed
// descriptor, or one reused since.
func (r *reuseWriter) closeInput() {
	if r.ahead != nil {
		r.ahead.stop()
		r.ahead = nil
	}
	if r.inFile != nil {
		r.inFile.Close()
		r.inFile = nil
	}
}

// verifyGzip checks a spliced gzip output on every core: in chunks that
// start where the splicer says a block starts, each decoded with its
// window from the plain text written, their CRC-32s per MiB compared with
// those of what was written (splice.CheckGzip).
func (r *reuseWriter) verifyGzip() error {
	fi, err := r.o.file.Stat()
	if err != nil {
		return err
	}
	if err := splice.CheckGzip(r.o.file, fi.Size(), r.gz.Points(), &r.cells, runtime.GOMAXPROCS(0)); err != nil {
		return fmt.Errorf("checking the spliced output: %w; nothing was written (use --recompress=full and report this)", err)
	}
	return nil
}
