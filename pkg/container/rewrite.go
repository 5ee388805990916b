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
	// Open bounds what the input may cost; Rewrite sets its taps and
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
	// Want is what the user asked of the output; the input's container
	// decides what that makes (Container.Output). The zero Want keeps the
	// input's format, at OUT.
	Want Want
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
	In, Out Shape
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
	if opt.Reuse {
		// They must watch the input's stream from the start: before the
		// input's format, and so whether it may be reused, is known.
		open.taps = taps{}
	}
	in, err := Open(inPath, open)
	if err != nil {
		return Result{}, err
	}
	defer in.Close()
	want := opt.Want
	want.Path, want.Squash = outPath, opt.Image.Squash
	res := Result{In: in.Format}
	if res.Out, err = in.Format.Container.Output(in, want, opt.Note); err != nil {
		return Result{}, err
	}
	e := Entries{InFormat: in.Format.Format, OutFormat: res.Out.Format}
	if in.Format.Kind == archive.KindTar && res.Out.Kind.IsCpio() {
		if e.Links, err = scanLinks(inPath, opt.Open); err != nil {
			return Result{}, err
		}
	}
	target := outPath
	if opt.DryRun {
		target = outPath + ".dry-run"
	}
	out, err := res.Out.Container.create(writing{in: in, path: target, out: res.Out, opt: opt, matchers: open.taps})
	if err != nil {
		return Result{}, err
	}
	defer out.Abort()
	if err := transform(in, out, e, opt); err != nil {
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
	if err := out.Commit(); err != nil {
		return Result{}, err
	}
	res.Committed = true
	out.report(&res, opt.Note)
	return res, nil
}

// compressOptions are the compressor's: the level asked for, else the
// one chosen.
func compressOptions(opt RewriteOptions, level compress.LevelChoice) compress.WriterOptions {
	return compress.WriterOptions{Level: max(opt.Level, level.Level), Backend: opt.Open.Backend}
}

// loneLevel chooses the level of a lone compressed stream written in
// place of the input's, in its codec, when no --level is given
// (compress.ChooseLevel; a lone stream is likeliest Buildroot's); the zero choice,
// Buildroot's default, for another codec, an image or an ISO.
func loneLevel(in *Input, out archive.Format, opt RewriteOptions) compress.LevelChoice {
	if c := in.Format.Container; opt.Level != 0 || out.Codec != in.Format.Codec || c != (streamContainer{}) && c != (segmentsContainer{}) {
		return compress.LevelChoice{}
	}
	f, err := os.Open(in.Path)
	if err != nil {
		return compress.LevelChoice{}
	}
	defer f.Close()
	return compress.ChooseLevel(out.Codec, compress.StreamHead(f, 0), false)
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
func reuseFor(m *splice.Matcher, in *Input, out Shape, opt RewriteOptions) *Reuse {
	if m == nil {
		return nil
	}
	if in.Format.Kind == archive.KindDir || out.Kind != in.Format.Kind || out.Codec != in.Format.Codec || out.Container != in.Format.Container || opt.Level != 0 {
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
