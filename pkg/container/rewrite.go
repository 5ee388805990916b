package container

import (
	"errors"
	"fmt"
	"os"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/splice"
)

// Entries is what a Transform rewrites: the input's entries and the
// output's writer, with the formats of both.
type Entries struct {
	In        archive.Reader
	InFormat  archive.Format
	Out       archive.Writer
	OutFormat archive.Format
	// Links is the first pass over a tar input written as cpio
	// (archive.ScanLinks), which archive.Copy needs to lay out its hard
	// links; nil otherwise.
	Links *archive.LinkScan
}

// Transform takes every entry of e.In to e.Out: repack's is Copy, apply's
// pkg/trim's streaming applier. It does not close e.Out: Rewrite commits.
type Transform func(e Entries) error

// Copy is the identity Transform: repack's.
func Copy(e Entries) error {
	return archive.Copy(e.Out, e.In, archive.CopyOptions{Dest: e.OutFormat.Kind, Links: e.Links})
}

// RewriteOptions configures Rewrite.
type RewriteOptions struct {
	// Open bounds what the input may cost; Rewrite sets its Tap and
	// Digest.
	Open OpenOptions
	// Reuse lets the output reuse the input's compressed bytes where its
	// content is the same (--recompress auto): only when format, codec are
	// the input's and no Level is asked for.
	Reuse bool
	// ExpectSame bets that the output equals the input (repack); see
	// Reuse.ExpectSame.
	ExpectSame bool
	// Level is the output's compression level; 0 is the codec's default.
	Level int
	// Digest takes the sha256 of input and output (the manifest's), a pass
	// over both that is skipped otherwise.
	Digest bool
	// DryRun runs everything into a scratch file beside the output, which
	// is thrown away: nothing is committed.
	DryRun bool
	// Format chooses the output's format once the input's is known. Its
	// error is returned as it is: the caller's message.
	Format func(in archive.Format) (archive.Format, error)
	// Wrap, when set, wraps the input's entries (progress, cancellation);
	// stop is called once the transform returns.
	Wrap func(in *Input) (r archive.Reader, stop func())
	// Note receives what the reuse path has to say (Reuse.Note).
	Note func(string)
	// Transform rewrites the entries; nil is Copy.
	Transform Transform
	// Image says how an image output is made; its Source is set to the
	// input when that is an image.
	Image ImageOptions
}

// Result is what Rewrite read and wrote, for the manifest.
type Result struct {
	In, Out archive.Format
	// InDigest and OutDigest are set with RewriteOptions.Digest, OutDigest
	// and Compressor once committed.
	InDigest, OutDigest string
	Compressor          string
	// Level says why a lone output stream compressed anew without
	// --level has its level (SegmentResult.Level for segments).
	Level     string
	Committed bool
	// Segments says what became of each segment of an initrd read as
	// segments, in the output's order, where each is in the output.
	Segments []SegmentResult
	// InSegments are the input's segments, where each is in the input.
	InSegments []Segment
}

// ErrSameFile reports an output path that names the input file: the input
// is never modified.
var ErrSameFile = errors.New("the output is the same file as the input")

// Rewrite reads the container at inPath and writes outPath through
// opt.Transform: open the input (with the splice tap when the output may
// reuse its bytes), choose the output's format, set up reuse, create the
// output beside its name, transform, and commit (checked, then renamed).
// Errors from the transform are prefixed with inPath.
func Rewrite(inPath, outPath string, opt RewriteOptions) (Result, error) {
	if SameFile(inPath, outPath) {
		return Result{}, ErrSameFile
	}
	open := opt.Open
	open.Digest = opt.Digest
	var matcher *splice.Matcher
	matchers := map[int]*splice.Matcher{}
	if opt.Reuse {
		// It must watch the input's stream from the start: before the
		// input's format, and so whether it may be reused, is known.
		matcher = splice.NewMatcher(0)
		open.Tap = matcher
		matchers[0] = matcher
		// Each later segment of an initrd has its own, from its start.
		open.SegmentTap = func(k int) Tap {
			m := splice.NewMatcher(0)
			matchers[k] = m
			return m
		}
	}
	in, err := Open(inPath, open)
	if err != nil {
		return Result{}, err
	}
	defer in.Close()
	res := Result{In: in.Format, Out: in.Format}
	if opt.Format != nil {
		if res.Out, err = opt.Format(in.Format); err != nil {
			return Result{}, err
		}
	}
	e := Entries{InFormat: in.Format, OutFormat: res.Out}
	if in.Format.Kind == archive.KindTar && res.Out.Kind.IsCpio() {
		if e.Links, err = scanLinks(inPath, opt.Open); err != nil {
			return Result{}, err
		}
	}
	target := outPath
	if opt.DryRun {
		target = outPath + ".dry-run"
	}
	if in.segs() != nil && in.segs().view != nil && isISO(res.Out) {
		return rewriteISOSegments(in, target, res, e, opt, matchers)
	}
	if in.segs() != nil && res.Out.Kind == in.Format.Kind && res.Out.Container == "" && res.Out.Image == "" {
		return rewriteSegments(in, target, res, e, opt, matchers)
	}
	img := opt.Image
	img.Source = in.Image()
	// What lands on disk in a tree output is bounded by --max-size too,
	// holes not counted: the budget on what is read counts them, this
	// what is written (issue 37: a sparse file must not land dense).
	maxData := opt.Open.MaxSize
	if maxData <= 0 {
		maxData = DefaultMaxSize
	}
	level := loneLevel(in, res.Out, opt)
	o, err := Create(target, res.Out, OutputOptions{Compress: compress.WriterOptions{Level: max(opt.Level, level.Level), Backend: opt.Open.Backend},
		Dir:    archive.DirWriterOptions{MaxData: maxData},
		Digest: opt.Digest, Reuse: reuseFor(matcher, in, res.Out, opt), From: in, Image: img})
	if err != nil {
		return Result{}, err
	}
	defer o.Abort()
	if err := transform(in, o, e, opt); err != nil {
		return Result{}, fmt.Errorf("%s: %w", inPath, err)
	}
	if opt.Digest {
		if res.InDigest, err = in.Digest(); err != nil {
			return Result{}, err
		}
	}
	if opt.DryRun {
		return res, nil
	}
	if err := o.Commit(); err != nil {
		return Result{}, err
	}
	res.Committed, res.Compressor, res.OutDigest = true, o.Compressor, o.Digest()
	if o.Compressor != CompressorCopy && level.Level != 0 {
		res.Level = level.Why
		if level.Guess && opt.Note != nil {
			opt.Note(fmt.Sprintf("the output compressed anew with %s (%s): pass --level to choose", o.Compressor, level.Why))
		}
	}
	return res, nil
}

// loneLevel chooses the level of a lone compressed stream written in
// place of the input's, in its codec, when no --level is given
// (chooseLevel; a lone stream is likeliest Buildroot's); the zero choice,
// Buildroot's default, for another codec, an image or an ISO.
func loneLevel(in *Input, out archive.Format, opt RewriteOptions) levelChoice {
	if opt.Level != 0 || out.Codec != in.Format.Codec || in.Format.Container != "" || in.Format.Image != "" || out.Image != "" || in.Format.Kind == archive.KindDir {
		return levelChoice{}
	}
	f, err := os.Open(in.Path)
	if err != nil {
		return levelChoice{}
	}
	defer f.Close()
	return chooseLevel(out.Codec, streamHead(f, 0), false)
}

// rewriteSegments writes an initrd of segments segment by segment
// (segout.go): what a segment's entries leave unchanged is copied, what
// changes is written anew in its own compression, what apply adds goes in
// a new segment at the end.
func rewriteSegments(in *Input, target string, res Result, e Entries, opt RewriteOptions, matchers map[int]*splice.Matcher) (Result, error) {
	w := &segWriter{in: in, final: target, format: res.Out, asked: res.Out.Codec != in.Format.Codec, opt: opt, matchers: matchers}
	defer w.Abort()
	if err := transform(in, w, e, opt); err != nil {
		return Result{}, fmt.Errorf("%s: %w", in.Path, err)
	}
	if opt.Digest {
		var err error
		if res.InDigest, err = in.Digest(); err != nil {
			return Result{}, err
		}
	}
	if opt.DryRun {
		return res, nil
	}
	if err := w.Commit(opt.Digest); err != nil {
		return Result{}, fmt.Errorf("%s: %w", in.Path, err)
	}
	res.Committed, res.Compressor, res.OutDigest, res.Segments = true, w.Compressor, w.Digest(), w.Results
	res.InSegments = in.Segments()
	levelNotes(res.Segments, opt.Note)
	return res, nil
}

// transform runs opt.Transform from in to o, wrapped as asked.
func transform(in *Input, o archive.Writer, e Entries, opt RewriteOptions) error {
	e.In, e.Out = in, o
	stop := func() {}
	if opt.Wrap != nil {
		e.In, stop = opt.Wrap(in)
	}
	t := opt.Transform
	if t == nil {
		t = Copy
	}
	err := t(e)
	stop()
	return err
}

// reuseFor says how the output may reuse the input's compressed bytes: with
// the same format and codec, and no compression level asked for (which asks
// for recompression); nil when it may not.
func reuseFor(m *splice.Matcher, in *Input, out archive.Format, opt RewriteOptions) *Reuse {
	if m == nil {
		return nil
	}
	if in.Format.Kind == archive.KindDir || out.Kind != in.Format.Kind || out.Codec != in.Format.Codec || out.Container != in.Format.Container || in.Format.Image != "" || out.Image != "" || opt.Level != 0 {
		m.Disable()
		return nil
	}
	return &Reuse{Path: in.Path, Info: in.FileInfo(), Codec: in.Format.Codec, Backend: opt.Open.Backend, Matcher: m,
		ExpectSame: opt.ExpectSame, Note: opt.Note}
}

// scanLinks makes the first of two passes over a tar archive that is being
// turned into cpio; see archive.ScanLinks.
func scanLinks(path string, open OpenOptions) (*archive.LinkScan, error) {
	in, err := Open(path, open)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	s, err := archive.ScanLinks(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
