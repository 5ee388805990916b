package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/fslock"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/splice"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

func init() {
	register(&command{name: "apply", summary: "strip what packages must not ship, inject deferred files and templates", run: runApply})
}

const applyHelp = `
With one argument, TARGET is a directory (Buildroot's target directory) and is
changed in place. With two, IN is an archive or tree and OUT is written in IN's
format and compression unless told otherwise; IN is never modified.

Each entry is attributed to the package that installed it (--packages-file-list,
or --package for a single package's tree or tarball, or else the input's own
dpkg database, var/lib/dpkg/info/*.list), matched against the rules,
and stripped, relocated or deferred (kept under /usr/share/minikube for the boot
step). The rule set's files, templates and index are added. A file the policy
forbids that no rule handles stops the run before anything is written (exit 1);
one only a fallback rule handles is stripped with a warning, or, with --strict,
stops the run too.
A second run changes nothing.

Everything apply creates gets the mtime SOURCE_DATE_EPOCH, or else the newest
mtime of the input, so the same input and rules give the same bytes.
`

type ownershipFlags struct {
	fileList string
	pkg      string
}

func (o *ownershipFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.fileList, "packages-file-list", "", "Buildroot's packages-file-list.txt: who installed what")
	fs.StringVar(&o.pkg, "package", "", "the whole input was installed by this `package` (a package tree or tarball)")
}

func (o *ownershipFlags) check() error {
	if o.fileList != "" && o.pkg != "" {
		return usagef("--packages-file-list and --package exclude each other")
	}
	return nil
}

func (o *ownershipFlags) load() (*trim.Owners, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	owners := trim.NewOwners()
	if o.fileList != "" {
		if err := owners.ReadFileList(o.fileList); err != nil {
			return nil, err
		}
	}
	owners.Fixed = o.pkg
	return owners, nil
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH, the one place the tool does.
func sourceDateEpoch(env *Env) (*time.Time, error) {
	v := env.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want a non-negative number of seconds", v)
	}
	t := time.Unix(n, 0).UTC()
	return &t, nil
}

func loadRules(dir string) (*rules.Set, error) {
	if dir == "" {
		return nil, usagef("--rules DIR is required")
	}
	// Load globs *.yaml, and a glob in a directory that is not there just
	// finds nothing: say what is really wrong.
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("rule directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("rule directory %s: not a directory", dir)
	}
	set, err := rules.Load(dir)
	if err != nil {
		var le *rules.LoadError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("bad rules:\n%w", err)
		}
		return nil, err
	}
	return set, nil
}

func runApply(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "apply", "--rules DIR [flags] TARGET | IN OUT", applyHelp)
	rulesDir := fs.String("rules", "", "rule `directory`")
	var own ownershipFlags
	own.register(fs)
	manifestPath := fs.String("manifest", "", "write the JSON manifest to `FILE`")
	dryRun := fs.Bool("dry-run", false, "show what would change; write nothing")
	format := renamedFlag(fs, "archive-format", "format", "", "output archive `format` for IN OUT: newc, crc, tar or dir (default: as IN)")
	codec := fs.String("compress", "", "output compression for IN OUT (default: as IN)")
	level := fs.Int("level", 0, "compression level (default: Buildroot's)")
	quiet := fs.Bool("quiet", false, "print only problems")
	strict := fs.Bool("strict", false, "ignore fallback rules: a forbidden file no package rule handles stops the run")
	maxSize := maxSizeFlag(fs)
	recompress := recompressFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkRecompress(*recompress); err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("want TARGET, or IN and OUT; got %d arguments", len(pos))
	}
	set, err := loadRules(*rulesDir)
	if err != nil {
		return err
	}
	if err := own.check(); err != nil {
		return err
	}
	warnEmptyFileList(env, own.fileList)
	epoch, err := sourceDateEpoch(env)
	if err != nil {
		return err
	}
	opt := trim.Options{Set: set, Epoch: epoch, Strict: *strict}
	var ownersNote string
	if len(pos) == 1 {
		opt.LoadOwners = func() (o *trim.Owners, err error) { // while the tree is listed
			o, ownersNote, err = own.ownersFor(pos[0], maxSize.open())
			return o, err
		}
	} else if opt.Owners, ownersNote, err = own.ownersFor(pos[0], maxSize.open()); err != nil {
		return err
	}
	m := &manifest.Manifest{Version: manifest.Version, Tool: "rootfs-trim " + Version,
		Rules: manifest.Rules{Dir: *rulesDir, Digest: set.Digest}}

	var rep *trim.Report
	if len(pos) == 1 {
		if *format != "" || *codec != "" {
			return usagef("--archive-format and --compress need IN and OUT")
		}
		fi, err := os.Stat(pos[0])
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return usagef("%s is not a directory; to rewrite an archive give IN and OUT", pos[0])
		}
		// The tree digests read every file: only a manifest needs them.
		var before string
		var n int
		if *manifestPath != "" {
			if before, n, err = trim.TreeDigest(pos[0]); err != nil {
				return err
			}
		}
		unlock, err := fslock.Lock(pos[0], false)
		if err != nil {
			return err
		}
		defer unlock()
		rep, err = trim.ApplyDir(ctx, pos[0], opt, *dryRun)
		if err != nil {
			return applyError(env, err)
		}
		if rep.Resumed {
			fmt.Fprintf(env.Stderr, "rootfs-trim apply: finished the apply on %s that was interrupted\n", pos[0])
		}
		if ctx.Err() != nil {
			fmt.Fprintf(env.Stderr, "rootfs-trim apply: interrupted while writing; finished the changes so that %s is complete\n", pos[0])
		}
		m.Input = manifest.Target{Path: pos[0], Format: "dir", Digest: before, Entries: n}
		if !*dryRun && *manifestPath != "" {
			after, n, err := trim.TreeDigest(pos[0])
			if err != nil {
				return err
			}
			m.Output = manifest.Target{Path: pos[0], Format: "dir", Digest: after, Entries: n}
		}
	} else {
		rep, err = applyArchive(ctx, env, archiveApply{inPath: pos[0], outPath: pos[1], format: *format, codec: *codec, level: *level,
			opt: opt, dryRun: *dryRun, quiet: *quiet, digests: *manifestPath != "", flags: maxSize, recompress: *recompress, m: m})
		if err != nil {
			return err
		}
	}
	m.Changes = rep.Changes
	for _, r := range rep.Stale {
		m.Stale = append(m.Stale, manifest.StaleRule{Rule: r.Name, Package: r.Package, Pos: r.Pos.String()})
	}
	if !*quiet {
		if ownersNote != "" {
			fmt.Fprintln(env.Stdout, ownersNote)
		}
		printChanges(env.Stdout, rep, *dryRun)
	}
	for _, c := range rep.Changes {
		if c.Kind == contract.Dangling {
			fmt.Fprintf(env.Stderr, "warning: %s -> %s: dangling: %s [dangling]\n", names.Quote(c.Path), names.Quote(c.To), names.Text(c.Reason))
		}
		if c.Unreviewed {
			fmt.Fprintf(env.Stderr, "warning: %s (package %s): only the fallback rule %s handled it (unreviewed): name it in a package rule [fallback]\n",
				names.Quote(c.Path), names.Quote(c.Package), names.Text(c.Rule))
		}
		if c.Kept != "" {
			fmt.Fprintf(env.Stderr, "note: %s (rule %s): %s [kept]\n", names.Quote(c.Path), names.Text(c.Rule), names.Text(c.Reason))
		}
	}
	for _, r := range rep.Stale {
		why := ""
		if r.StaleReason != "" {
			why = ": " + oneLine(r.StaleReason)
		}
		fmt.Fprintf(env.Stderr, "warning: %s: rule %s matched nothing, though package %s is present%s [stale-rule]\n", names.Text(r.Pos.String()), r.Name, names.Quote(r.Package), why)
	}
	if *manifestPath != "" && !*dryRun {
		return writeFileAtomic(*manifestPath, func(w io.Writer) error { return m.Encode(w) })
	}
	return nil
}

// archiveApply is one apply from archive to archive: the paths, the
// output's --archive-format and --compress and level, the input flags, and the
// manifest to fill in.
type archiveApply struct {
	inPath, outPath string
	format, codec   string
	level           int
	opt             trim.Options
	dryRun, quiet   bool
	// digests: the manifest wants the sha256 of input and output, a pass
	// over both that is skipped when no manifest is written.
	digests bool
	flags   *inputFlags
	// recompress: --recompress, whether compressed blocks may be reused.
	recompress string
	m          *manifest.Manifest
}

// applyArchive applies the rules to the archive a.inPath, writing a.outPath.
func applyArchive(ctx context.Context, env *Env, a archiveApply) (*trim.Report, error) {
	inPath, outPath, format, codec, level, opt := a.inPath, a.outPath, a.format, a.codec, a.level, a.opt
	dryRun, quiet, digests, flags, recompress, m := a.dryRun, a.quiet, a.digests, a.flags, a.recompress, a.m
	open := flags.open()
	open.Digest = digests
	matcher := startReuse(recompress, &open)
	if container.SameFile(inPath, outPath) {
		return nil, usagef("OUT %s is the same file as IN; apply never modifies an archive in place", outPath)
	}
	in, err := container.Open(inPath, open)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out, err := outputFormat(in.Format, format, codec)
	if err != nil {
		return nil, err
	}
	if err := checkOutputName(outPath, out, codec); err != nil {
		return nil, err
	}
	var links *archive.LinkScan
	if in.Format.Kind == archive.KindTar && out.Kind.IsCpio() {
		if links, err = scanLinks(inPath, open); err != nil {
			return nil, err
		}
	}
	target := outPath
	if dryRun {
		// Everything runs, into a scratch file that is thrown away.
		target = outPath + ".dry-run"
	}
	o, err := container.Create(target, out, container.OutputOptions{Compress: compress.WriterOptions{Level: level}, Backend: open.Backend, Digest: digests,
		Reuse: reuseOutput(env, "apply", matcher, in, out, level, open.Backend)})
	if err != nil {
		return nil, err
	}
	defer o.Abort()
	r, stop := withProgress(env, quiet, "apply "+inPath, in, withContext(ctx, in))
	opt.Input = in.Format.Kind
	rep, err := trim.ApplyStream(o, out.Kind, r, opt, links)
	stop()
	if err != nil {
		return nil, applyError(env, fmt.Errorf("%s: %w", inPath, err))
	}
	var digest string
	if digests {
		if digest, err = in.Digest(); err != nil {
			return nil, err
		}
	}
	m.Input = manifest.Target{Path: inPath, Format: in.Format.Kind.String(), Compression: in.Format.Codec.String(), Digest: digest, Entries: rep.Entries}
	if dryRun {
		return rep, nil
	}
	if err := o.Commit(); err != nil {
		return nil, err
	}
	m.Output = manifest.Target{Path: outPath, Format: out.Kind.String(), Compression: out.Codec.String(), Compressor: o.Compressor, Digest: o.Digest(), Entries: rep.OutEntries}
	return rep, nil
}

// recompressFlag is apply's and repack's --recompress.
func recompressFlag(fs *flag.FlagSet) *string {
	return fs.String("recompress", "auto", "`mode`: auto reuses the input's compressed bytes where the output's content is the same (a copy of the file when nothing changed, the unchanged blocks of lz4-legacy); full compresses the whole output again")
}

func checkRecompress(mode string) error {
	if mode != "auto" && mode != "full" {
		return usagef("--recompress %q: want auto or full", mode)
	}
	return nil
}

// startReuse sets up the matching of the output against the input, which
// must watch the input's stream from the start: before the input's format
// is known.
func startReuse(mode string, open *container.OpenOptions) *splice.Matcher {
	if mode != "auto" {
		return nil
	}
	m := splice.NewMatcher(0)
	open.Tap = m
	return m
}

// reuseOutput says whether the output may reuse the input's compressed
// bytes: same format and codec, and no compression level asked for (which
// asks for recompression).
func reuseOutput(env *Env, cmd string, m *splice.Matcher, in *container.Input, out archive.Format, level int, backend compress.Backend) *container.Reuse {
	if m == nil {
		return nil
	}
	if in.Format.Kind == archive.KindDir || out.Kind != in.Format.Kind || out.Codec != in.Format.Codec || level != 0 {
		m.Disable()
		return nil
	}
	return &container.Reuse{Path: in.Path, Info: in.FileInfo(), Codec: in.Format.Codec, Backend: backend, Matcher: m, ExpectSame: cmd == "repack",
		Note: func(s string) { fmt.Fprintf(env.Stderr, "rootfs-trim %s: note: %s\n", cmd, s) }}
}

func outputFormat(in archive.Format, format, codec string) (archive.Format, error) {
	out := in
	var err error
	if format != "" {
		if out.Kind, err = archive.ParseKind(format); err != nil {
			return out, usagef("--archive-format: %v", err)
		}
	}
	if codec != "" {
		if out.Codec, err = compress.ParseCodec(codec); err != nil {
			return out, usagef("--compress: %v", err)
		}
	}
	if out.Kind == archive.KindDir {
		out.Codec = compress.None
	}
	if !out.Codec.CanWrite() {
		return out, usagef("cannot write %s output; choose another --compress", out.Codec)
	}
	return out, nil
}

// applyError prints policy violations as findings (exit 1) and passes other
// errors through (exit 2).
func applyError(env *Env, err error) error {
	var oe *trim.OffenderError
	if errors.As(err, &oe) {
		fmt.Fprintln(env.Stderr, "rootfs-trim apply: "+shownError(oe))
		return errFindings
	}
	return err
}

func printChanges(w io.Writer, rep *trim.Report, dryRun bool) {
	tw := newColumns(w)
	counts := map[contract.Kind]int{}
	for _, c := range rep.Changes {
		counts[c.Kind]++
		what := names.Quote(c.Path)
		if c.To != "" {
			what += " -> " + names.Quote(c.To)
		}
		rule := ""
		if c.Rule != "" {
			rule = "rule " + c.Rule
		}
		if c.Unreviewed {
			rule += " (fallback, unreviewed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Kind, what, names.Quote(c.Package), names.Text(rule))
	}
	tw.Flush()
	var parts []string
	for _, k := range trim.Kinds() {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	summary := "nothing to change"
	if len(parts) > 0 {
		summary = strings.Join(parts, ", ")
	}
	if dryRun {
		summary = "dry run, nothing written: " + summary
	}
	fmt.Fprintf(w, "%s; %d entries read\n", summary, rep.Entries)
}

// writeFileAtomic writes a small file through a temporary file and rename.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	o, err := os.CreateTemp(dirOf(path), "."+baseOf(path)+".tmp-")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return &os.PathError{Op: "create", Path: path, Err: pe.Err}
		}
		return err
	}
	defer os.Remove(o.Name())
	if err := write(o); err != nil {
		o.Close()
		return err
	}
	if err := o.Chmod(0o644); err != nil {
		o.Close()
		return err
	}
	if err := o.Close(); err != nil {
		return err
	}
	return os.Rename(o.Name(), path)
}

func dirOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i+1]
	}
	return "."
}

func baseOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
