package container

import (
	"errors"
	"fmt"
	"os"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/splice"
)

// SegmentResult is what became of one segment of an initrd, for the
// manifest.
type SegmentResult struct {
	// Input is the input segment's number (1-based), 0 for the segment
	// apply added.
	Input int
	// InOffset and InLength are the input segment's (0 for the added
	// one); Offset and Length the output's: where it is in the file
	// written (in an ISO's initrd of several files, in those files one
	// after the other, as the input's are), the zeros after it aside.
	InOffset, InLength int64
	Offset, Length     int64
	Codec              compress.Codec
	// Action is "copied" (its bytes, as they were), "rewritten" (its
	// entries changed: written anew, spliced where its codec has a
	// splicer) or "added" (what apply adds, in a segment of its own).
	Action string
	// Compressor says what wrote it, as Output.Compressor does.
	Compressor string
	// Level says why a segment compressed anew without --level has its
	// level; LevelGuess that the input did not say it (a note says so).
	Level      string
	LevelGuess bool
}

// segWriter writes an initrd of segments: each input segment's entries
// into a part of its own, reusing that segment's bytes (copied whole when
// nothing in it changed), then what apply adds in a new segment at the
// end; the parts are joined, with the zero padding the input had between
// its segments, into the output.
type segWriter struct {
	in       *Input
	final    string
	format   archive.Format // the output's: its codec, when asked
	asked    bool           // the codec was asked for (--compress)
	opt      RewriteOptions
	matchers map[int]*splice.Matcher // input segment (0-based) -> its tap

	parts []*segOut
	cur   *segOut
	last  int // the last input segment a part was started for
	added *segOut
	// written counts the entries written to each input segment's part
	// (1-based), trailers included.
	written map[int]int

	Compressor string
	digest     string
	Results    []SegmentResult

	// files, when set, are the files of an ISO's initrd the input's
	// segments are in: Commit writes each on its own (joinFiles), and
	// isoFiles says where.
	files    []viewFile
	isoFiles []isoFile
}

type segOut struct {
	seg   int // input segment, 1-based; 0 for the added one
	o     *Output
	codec compress.Codec
	level compress.LevelChoice // chosen without --level; zero when asked or another codec
	// tmp is the finished part, once finish has run; the segWriter
	// removes it, as Output.Abort no longer does once it is finished.
	tmp string
}

// finish finishes the part's archive and returns the file it is in, once:
// a later call returns the same file.
func (p *segOut) finish() (string, error) {
	if p.tmp != "" {
		return p.tmp, nil
	}
	tmp, err := p.o.finishPart()
	if err != nil {
		return "", p.wrap(err)
	}
	p.tmp = tmp
	return tmp, nil
}

// abort discards the part, finished or not.
func (p *segOut) abort() {
	p.o.Abort()
	if p.tmp != "" {
		os.Remove(p.tmp)
		p.tmp = ""
	}
}

// WriteHeader starts e in its segment's part: a later input segment
// starts a part of its own; what apply made (no segment, or moved from
// an earlier one) goes to the added segment, unless the input has one
// segment only, where it goes with the rest as before.
func (w *segWriter) WriteHeader(e *archive.Entry) error {
	var err error
	switch k := e.Segment; {
	case k > w.last:
		if err := w.finishEarlier(); err != nil {
			return err
		}
		w.last = k
		w.cur, err = w.part(k)
	case k == w.last && k > 0:
	case w.cur != nil && w.addsInLast():
		w.cur = w.byIn(w.last)
	default:
		w.cur, err = w.addedPart()
	}
	if err != nil {
		return err
	}
	if w.written == nil {
		w.written = map[int]int{}
	}
	w.written[w.cur.seg]++
	return w.cur.wrap(w.cur.o.WriteHeader(e))
}

func (w *segWriter) Write(p []byte) (int, error) {
	if w.cur == nil {
		return 0, errors.New("write before a header")
	}
	n, err := w.cur.o.Write(p)
	return n, w.cur.wrap(err)
}

// finishEarlier finishes the part being written when the next input
// segment starts: nothing more goes in it (what apply adds goes in the
// last segment's part or a new one), and its matcher, up to 16 MiB of
// the segment's decompressed bytes, is let go, so that a rewrite holds
// one segment's matcher at a time, not one per segment (an initrd of many
// segments ran out of memory under 4 GiB).
func (w *segWriter) finishEarlier() error {
	p := w.cur
	if p == nil || p.seg == 0 {
		return nil
	}
	if _, err := p.finish(); err != nil {
		return err
	}
	if m := w.matchers[p.seg-1]; m != nil {
		m.Disable()
	}
	return nil
}

// addsInLast says whether what apply adds goes in the last segment's
// stream, as in a one-stream input: when one segment holds entries, when
// the last one is what an earlier apply added (it holds the index: added
// again, it would be a segment more at each run), or when the last one
// is written anew anyway. Debian's unmkinitramfs and lsinitramfs read
// the early raw cpios, then one compressed remainder to its first
// trailer: what a new segment after it holds (what apply added, a
// relocated unit) they never show. Only the last segment takes them: in
// an earlier one, a later segment's entry at the same path would win in
// the kernel's unpacking, and what apply checks of its output follows
// the order it writes the entries in.
func (w *segWriter) addsInLast() bool {
	segs := w.in.Segments()
	if segs[len(segs)-1].Applied {
		return w.last == len(segs)
	}
	if w.last == len(segs) && w.rewritten(w.byIn(w.last)) {
		return true
	}
	full := 0
	for _, s := range segs {
		if s.Entries > 0 {
			full++
		}
	}
	return full <= 1
}

// rewritten says whether input segment p.seg's part is written anew
// rather than copied, as far as its entries so far show: it is not
// reused (another codec, a level asked for, no reuse), its bytes already
// differ from the input's, or fewer of its entries were written than it
// holds (one dropped or moved), its final trailer aside, which comes
// after what apply adds.
func (w *segWriter) rewritten(p *segOut) bool {
	if p == nil || p.seg == 0 {
		return false
	}
	r := p.o.reuse
	if r == nil || r.sink != nil || !r.m.Identical() {
		return true
	}
	return w.written[p.seg] < w.in.Segments()[p.seg-1].Entries-1
}

// byIn is input segment k's part.
func (w *segWriter) byIn(k int) *segOut {
	for _, p := range w.parts {
		if p.seg == k {
			return p
		}
	}
	return w.cur
}

// wrap says, for a codec that cannot be written, what to do.
func (p *segOut) wrap(err error) error {
	if err == nil || p.codec.CanWrite() {
		return err
	}
	return fmt.Errorf("segment %d changes and is %s, which rootfs-trim reads but cannot write: name the codec to write it in with --compress (%w)", p.seg, p.codec, err)
}

// part starts input segment k's part.
func (w *segWriter) part(k int) (*segOut, error) {
	seg := w.in.Segments()[k-1]
	codec := seg.Codec
	if w.asked && (codec != compress.None || seg.Offset == 0 && w.in.segs().onlyZerosAfter(seg.Length)) {
		// A raw segment stays raw (the kernel takes the microcode from a
		// raw one only), unless it is the whole file, padding aside.
		codec = w.format.Codec
	}
	f := w.format
	f.Codec = codec
	level := w.level(codec, seg)
	var reuse *Reuse
	if m := w.matchers[k-1]; m != nil {
		if w.opt.Level == 0 && (codec == seg.Codec || !seg.Codec.CanWrite()) {
			segs := w.in.segs()
			reuse = &Reuse{Path: w.in.Path, Info: w.in.FileInfo(), Codec: seg.Codec, Backend: w.opt.Open.Backend, Matcher: m,
				ExpectSame: w.opt.ExpectSame, Note: w.opt.Note, Offset: segs.inFile(seg.Offset), Segment: true,
				Length: func() int64 { return segs.lengthOf(k - 1) }, GzipLayout: segs.gzLays[k-1],
				Several: func() bool { return len(segs.segs) > 1 }}
		} else {
			m.Disable()
		}
	}
	o, err := createStream(w.final, f, OutputOptions{Compress: compressOptions(w.opt, level), Reuse: reuse, Digest: w.opt.Digest})
	if err != nil {
		return nil, err
	}
	p := &segOut{seg: k, o: o, codec: codec, level: level}
	w.parts = append(w.parts, p)
	return p, nil
}

// addedPart is the segment apply adds, in the last input segment's
// codec (a raw one stays raw) or the one asked for.
func (w *segWriter) addedPart() (*segOut, error) {
	if w.added != nil {
		return w.added, nil
	}
	segs := w.in.Segments()
	codec := segs[len(segs)-1].Codec
	if w.asked {
		codec = w.format.Codec
	}
	if !codec.CanWrite() {
		return nil, fmt.Errorf("what apply adds goes in a new segment in the last one's compression, %s, which rootfs-trim cannot write: name the codec to write it in with --compress", codec)
	}
	f := w.format
	f.Codec = codec
	level := w.level(codec, segs[len(segs)-1])
	o, err := createStream(w.final, f, OutputOptions{Compress: compressOptions(w.opt, level)})
	if err != nil {
		return nil, err
	}
	w.added = &segOut{o: o, codec: codec, level: level}
	return w.added, nil
}

// level chooses the level of a part in codec, in place of input segment
// seg, when no --level is given: compress.ChooseLevel's, from seg's header, when
// codec is seg's; the zero choice (Buildroot's default) for another.
func (w *segWriter) level(codec compress.Codec, seg Segment) compress.LevelChoice {
	if w.opt.Level != 0 || codec != seg.Codec {
		return compress.LevelChoice{}
	}
	return compress.ChooseLevel(codec, compress.StreamHead(w.in.segs().src, seg.Offset), len(w.in.Segments()) > 1)
}

// Close ends every part. It does not commit: Commit does.
func (w *segWriter) Close() error { return nil }

// Commit finishes the parts and puts the output in place: the one part
// itself when the input had one segment and nothing was added, else the
// parts joined; for an ISO's initrd of several files, each file.
func (w *segWriter) Commit() error {
	if err := w.commit(); err != nil {
		return fmt.Errorf("%s: %w", w.in.Path, err)
	}
	return nil
}

// report says what became of each segment, and, of each compressed anew
// at a level the input did not give, which level and why.
func (w *segWriter) report(res *Result, note func(string)) {
	res.Compressor, res.OutDigest, res.Segments = w.Compressor, w.digest, w.Results
	res.InSegments = w.in.Segments()
	for i, r := range res.Segments {
		if r.LevelGuess && note != nil {
			note(fmt.Sprintf("segment %d of the output compressed anew with %s (%s): pass --level to choose", i+1, r.Compressor, r.Level))
		}
	}
}

func (w *segWriter) commit() error {
	if w.files != nil {
		return w.joinFiles()
	}
	if len(w.parts) == 1 && w.added == nil && len(w.in.Segments()) == 1 {
		p := w.parts[0]
		p.o.Path = w.final
		if err := p.wrap(p.o.Commit()); err != nil {
			return err
		}
		w.Compressor, w.digest = p.o.Compressor, p.o.Digest()
		fi, err := os.Stat(w.final)
		if err != nil {
			return err
		}
		w.Results = []SegmentResult{w.result(p, 0, fi.Size())}
		return nil
	}
	return w.join()
}

// join writes the parts into the output as joinFile writes a file of an
// ISO's initrd, the output being one file: each input segment in its
// place, with the zeros that followed it, up to the last one an entry
// came from, then what apply adds.
func (w *segWriter) join() error {
	parts := w.parts
	if w.added != nil {
		parts = append(parts, w.added)
	}
	for _, p := range parts {
		if _, err := p.finish(); err != nil {
			return fmt.Errorf("writing %s: %w", w.final, err)
		}
	}
	dir, base := splitPath(w.final)
	out, err := os.CreateTemp(dir, "."+base+".tmp-")
	if err != nil {
		return userPathError(w.final, err)
	}
	ok := false
	defer func() {
		if !ok {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	last := 0
	if n := len(w.parts); n > 0 {
		last = w.parts[n-1].seg
	}
	segs, file := w.in.Segments()[:last], viewFile{}
	if last > 0 {
		s := segs[last-1]
		file.Size = s.Offset + s.Length + s.Pad
	}
	j := &joined{out: out}
	if _, _, err := w.joinFile(j, file, segs, 0, w.byNumber()); err != nil {
		return err
	}
	if w.added != nil {
		if err := w.addTo(j); err != nil {
			return err
		}
	}
	if w.opt.Digest {
		if w.digest, err = fileDigest(out, j.at); err != nil {
			return err
		}
	}
	if err := out.Chmod(0o644); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Rename(out.Name(), w.final); err != nil {
		return err
	}
	ok = true
	w.Compressor = fmt.Sprintf("%d segments", len(parts))
	return syncDir(dir)
}

// result is what became of p, written at offset off of the output in n
// bytes.
func (w *segWriter) result(p *segOut, off, n int64) SegmentResult {
	r := SegmentResult{Input: p.seg, Offset: off, Length: n, Codec: p.o.Format.Codec, Compressor: p.o.Compressor}
	switch {
	case p.seg == 0:
		r.Action = "added"
	case p.o.Compressor == CompressorCopy:
		r.Action = "copied"
	default:
		r.Action = "rewritten"
	}
	if r.Action != "copied" && p.level.Level != 0 {
		r.Level, r.LevelGuess = p.level.Why, p.level.Guess
	}
	if p.seg > 0 {
		s := w.in.Segments()[p.seg-1]
		r.InOffset, r.InLength = s.Offset, s.Length
	}
	return r
}

// copiedResult is input segment k (1-based), s, copied as it was to
// offset off of the output.
func copiedResult(k int, s Segment, off int64) SegmentResult {
	return SegmentResult{Input: k, InOffset: s.Offset, InLength: s.Length, Offset: off, Length: s.Length,
		Codec: s.Codec, Action: "copied", Compressor: CompressorCopy}
}

func (w *segWriter) Abort() {
	for _, p := range w.parts {
		p.abort()
	}
	if w.added != nil {
		w.added.abort()
	}
}

// appendFile copies the file at path to the end of out (copy_file_range
// where the kernel can).
func appendFile(out *os.File, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return out.ReadFrom(f)
}
