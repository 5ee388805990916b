package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/fslock"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
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
	// db is the database ownersFor read, for an SBOM: its versions and
	// Go modules.
	db *owners.DB
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

// load reads the owners the flags give (check has refused both at once).
func (o *ownershipFlags) load() (*owners.Table, error) {
	owners := owners.New()
	if o.fileList != "" {
		if err := owners.ReadFileList(o.fileList); err != nil {
			return nil, err
		}
	}
	owners.Fixed = o.pkg
	return owners, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// notPipe refuses standard input and pipes as apply's input, which list,
// audit and check read: apply reads its input again, to copy the
// compressed bytes it keeps (docs/formats.md), which a pipe cannot give.
func notPipe(in string) error {
	if in == container.Stdin {
		return fmt.Errorf("%s: apply cannot read standard input: it reads its input again to reuse its compressed bytes; save it to a file first", in)
	}
	if fi, err := os.Stat(in); err == nil && container.IsPipe(fi) {
		return fmt.Errorf("%s: apply cannot read a pipe: it reads its input again to reuse its compressed bytes; save it to a file first", in)
	}
	return nil
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

// loadRules loads the rules in dir, or the installed rules when dir is ""
// (rulesDirOr); the set's Dir says which.
func loadRules(dir string) (*rules.Set, error) {
	dir, err := rulesDirOr(dir)
	if err != nil {
		return nil, err
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
	rulesDir := rulesFlag(fs, "")
	var own ownershipFlags
	own.register(fs)
	manifestPath := fs.String("manifest", "", "write the JSON manifest to `FILE`")
	var sb sbomFlags
	sb.register(fs)
	dryRun := fs.Bool("dry-run", false, "show what would change; write nothing")
	format := renamedFlag(fs, "archive-format", "format", "", "output archive `format` for IN OUT: newc, crc, tar, dir, or an image: oci, docker-archive (default: as IN)")
	codec := fs.String("compress", "", "output `compression` for IN OUT: "+wantOneOf(writableCodecs())+" (default: as IN)")
	level := fs.Int("level", 0, "compression level (default: the input's where its header records it, else its likely producer's: initramfs-tools' for an initrd of several segments, Buildroot's for one stream; a note says which)")
	quiet := fs.Bool("quiet", false, "print only problems")
	strict := fs.Bool("strict", false, "ignore fallback rules: a forbidden file no package rule handles stops the run")
	squash := fs.Bool("squash", false, "for an image OUT: write one layer of the whole filesystem, not the input's layers and one of the changes")
	maxSize := maxSizeFlag(fs)
	recompress := recompressFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkApplyArgs(pos, *recompress); err != nil {
		return err
	}
	set, err := loadRules(*rulesDir)
	if err != nil {
		return err
	}
	if err := own.check(); err != nil {
		return err
	}
	maxSize.imageData = trim.ImageData(set)
	warnEmptyFileList(env, own.fileList)
	epoch, err := sourceDateEpoch(env)
	if err != nil {
		return err
	}
	doc, err := sb.start()
	if err != nil {
		return err
	}
	opt := trim.Options{Set: set, Epoch: epoch, Strict: *strict}
	var ownersNote string
	var m *manifest.Manifest // none: nor the digests it wants, which cost a pass over input and output
	if *manifestPath != "" {
		m = &manifest.Manifest{Version: manifest.Version, Tool: "rootfs-trim " + Version,
			Rules: manifest.Rules{Dir: set.Dir, Digest: set.Digest}}
	}
	var rep *trim.Report
	if len(pos) == 1 {
		if *format != "" || *codec != "" || *squash {
			return usagef("--archive-format, --compress and --squash need IN and OUT")
		}
		opt.LoadOwners = func() (o *owners.Table, err error) { // while the tree is listed
			o, ownersNote, err = own.ownersFor(pos[0], maxSize.open())
			opt.Owners = o // for the SBOM
			return o, err
		}
		var unlock func()
		rep, unlock, err = applyTree(ctx, env, pos[0], *dryRun, opt, m)
		if err != nil {
			return err
		}
		defer unlock()
	} else {
		if own.fileList != "" || own.pkg != "" || isDir(pos[0]) {
			if opt.Owners, ownersNote, err = own.ownersFor(pos[0], maxSize.open()); err != nil {
				return err
			}
		} else {
			opt.Dpkg = pos[0] // read as the archive goes by (applyArchive)
		}
		a := archiveApply{inPath: pos[0], outPath: pos[1], format: *format, codec: *codec, level: *level,
			dryRun: *dryRun, quiet: *quiet, flags: maxSize, recompress: *recompress, m: m,
			image: container.ImageOptions{Squash: *squash, Epoch: epoch,
				CreatedBy: fmt.Sprintf("rootfs-trim apply --rules %s (rootfs-trim %s, rules %s)", set.Dir, Version, set.Digest)}}
		rep, err = applyArchive(ctx, env, a, opt)
		if err != nil {
			return err
		}
	}
	run := sbomRun{subject: pos[len(pos)-1], table: opt.Owners, db: own.db, changes: rep.Changes}
	if opt.Dpkg != "" { // the database found, or none: an ISO's says its owners are unknown
		ownersNote = own.ownersNote(pos[0], rep.Dpkg)
		if rep.Dpkg != nil {
			run.table, run.db = rep.Dpkg.Owners, rep.Dpkg
		}
	}
	if err := reportApply(env, m, rep, ownersNote, applyReport{quiet: *quiet, dryRun: *dryRun, manifestPath: *manifestPath}); err != nil || *dryRun {
		return err
	}
	return sb.write(env, doc, run)
}

// checkApplyArgs checks apply's arguments and --recompress before
// anything is read.
func checkApplyArgs(pos []string, recompress string) error {
	if err := checkRecompress(recompress); err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("want TARGET, or IN and OUT; got %d arguments", len(pos))
	}
	if err := notPipe(pos[0]); err != nil {
		return err
	}
	if len(pos) == 2 {
		return notStdout("apply", pos[1])
	}
	return nil
}

// applyReport is how apply reports what it did.
type applyReport struct {
	quiet, dryRun bool
	manifestPath  string
}

// reportApply prints what apply did, with where the owners came from, and
// writes its manifest.
func reportApply(env *Env, m *manifest.Manifest, rep *trim.Report, ownersNote string, how applyReport) error {
	if !how.quiet {
		if ownersNote != "" {
			fmt.Fprintln(env.Stdout, ownersNote)
		}
		printChanges(env.Stdout, rep, how.dryRun)
	}
	printWarnings(env, rep)
	if m == nil || how.dryRun {
		return nil
	}
	m.Changes = rep.Changes
	for _, r := range rep.Stale {
		m.Stale = append(m.Stale, manifest.StaleRule{Rule: r.Name, Package: r.Package, Pos: r.Pos.String()})
	}
	return writeFileAtomic(how.manifestPath, func(w io.Writer) error { return m.Encode(w) })
}

// applyTree applies the rules to the tree target in place, filling in m
// (nil: no manifest, and no tree digests, which read every file). The
// caller holds the tree's lock, unlock, until it is done.
func applyTree(ctx context.Context, env *Env, target string, dryRun bool, opt trim.Options, m *manifest.Manifest) (*trim.Report, func(), error) {
	fi, err := os.Stat(target)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, nil, usagef("%s is not a directory; to rewrite an archive give IN and OUT", target)
	}
	switch image, err := ociimage.Detect(target, fi); {
	case err != nil:
		return nil, nil, err
	case image:
		return nil, nil, usagef("%s is an image (an OCI layout), never changed in place: give IN and OUT", target)
	}
	var before string
	var n int
	if m != nil {
		if before, n, err = trim.TreeDigest(target); err != nil {
			return nil, nil, err
		}
	}
	unlock, err := fslock.Lock(target, false)
	if err != nil {
		return nil, nil, err
	}
	rep, err := trim.ApplyDir(ctx, target, opt, dryRun)
	if err != nil {
		err = applyError(env, err) // printed while the lock is held, as before
		unlock()
		return nil, nil, err
	}
	if rep.Resumed {
		fmt.Fprintf(env.Stderr, "rootfs-trim apply: finished the apply on %s that was interrupted\n", target)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(env.Stderr, "rootfs-trim apply: interrupted while writing; finished the changes so that %s is complete\n", target)
	}
	if m != nil {
		m.Input = manifest.Target{Path: target, Format: "dir", Digest: before, Entries: n}
		if !dryRun {
			after, n, err := trim.TreeDigest(target)
			if err != nil {
				unlock()
				return nil, nil, err
			}
			m.Output = manifest.Target{Path: target, Format: "dir", Digest: after, Entries: n}
		}
	}
	return rep, unlock, nil
}

// printWarnings prints what apply warns of: dangling links, fallback
// rules, kept entries and stale rules.
func printWarnings(env *Env, rep *trim.Report) {
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
}

// archiveApply is one apply from archive to archive: the flags of the
// output (--archive-format, --compress, --level, --recompress), and the
// manifest to fill in.
type archiveApply struct {
	inPath, outPath string
	format, codec   string
	level           int
	dryRun, quiet   bool
	flags           *inputFlags
	recompress      string
	m               *manifest.Manifest
	image           container.ImageOptions
}

// applyArchive applies the rules to the archive a.inPath, writing a.outPath.
// With owners from the input's own records, trim.ApplyOwnersLater reads it
// once and, should an owner read late decide an entry, again with the
// owners read first: the notes wait for the run that counts.
func applyArchive(ctx context.Context, env *Env, a archiveApply, opt trim.Options) (*trim.Report, error) {
	note := noteTo(env, "apply")
	load := func() (*owners.DB, error) { return owners.Load(a.inPath, a.flags.open()) }
	rep, err := trim.ApplyOwnersLater(opt, load, func(opt trim.Options) (*trim.Report, error) {
		if opt.Dpkg == "" {
			return applyOnce(ctx, env, a, opt, note)
		}
		var notes []string
		rep, err := applyOnce(ctx, env, a, opt, func(s string) { notes = append(notes, s) })
		if !errors.Is(err, trim.ErrOwnersLate) {
			for _, n := range notes {
				note(n)
			}
		}
		return rep, err
	})
	if err != nil {
		return nil, applyError(env, err)
	}
	return rep, nil
}

// applyOnce rewrites the archive with the rules; note gets the reuse
// path's notes.
func applyOnce(ctx context.Context, env *Env, a archiveApply, opt trim.Options, note func(string)) (*trim.Report, error) {
	var rep *trim.Report
	var img *ociimage.Image // the input's, when it is an image
	res, err := container.Rewrite(a.inPath, a.outPath, container.RewriteOptions{
		Open: a.flags.open(), Reuse: a.recompress == "auto", Level: a.level, Digest: a.m != nil, DryRun: a.dryRun,
		Want:  container.Want{Format: a.format, Codec: a.codec},
		Image: a.image,
		Wrap: func(in *container.Input) (archive.Reader, func()) {
			img = in.Image()
			return withProgress(env, a.quiet, "apply "+a.inPath, in, withContext(ctx, in))
		},
		Note: note,
		Transform: func(e container.Entries) error {
			var err error
			rep, err = trim.ApplyEntries(e, opt)
			return trim.WithLayers(err, img)
		},
	})
	if errors.Is(err, container.ErrSameFile) {
		return nil, usagef("OUT %s is the same file as IN; apply never modifies an archive in place", a.outPath)
	}
	if err != nil {
		return nil, err
	}
	if a.m != nil {
		a.m.Input = manifest.Target{Path: a.inPath, Format: res.In.FormatName(), Compression: res.In.Codec.String(), Digest: res.InDigest, Entries: rep.Entries}
		if res.Committed {
			a.m.Output = manifest.Target{Path: a.outPath, Format: res.Out.FormatName(), Compression: res.Out.Codec.String(), Compressor: res.Compressor, Level: res.Level, Digest: res.OutDigest, Entries: rep.OutEntries}
			if len(res.Segments) > 1 {
				for _, s := range res.Segments {
					a.m.Output.Segments = append(a.m.Output.Segments, manifest.Segment{Input: s.Input, Offset: s.Offset, Length: s.Length,
						Compression: s.Codec.String(), Action: s.Action, Compressor: s.Compressor, Level: s.Level})
				}
			}
			if len(res.InSegments) > 1 {
				for i, s := range res.InSegments {
					a.m.Input.Segments = append(a.m.Input.Segments, manifest.Segment{Input: i + 1, Offset: s.Offset, Length: s.Length, Compression: s.Codec.String()})
				}
			}
		}
	}
	return rep, nil
}

// recompressFlag is apply's and repack's --recompress.
func recompressFlag(fs *flag.FlagSet) *string {
	return fs.String("recompress", "auto", "`mode`: auto reuses the input's compressed bytes where the output's content is the same (a copy of the file when nothing changed, the unchanged blocks of lz4-legacy); full compresses the whole output again")
}

// noteTo prints what the reuse path has to say as cmd's note.
func noteTo(env *Env, cmd string) func(string) {
	return func(s string) { fmt.Fprintf(env.Stderr, "rootfs-trim %s: note: %s\n", cmd, shownLines(s)) }
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
	summary := cmp.Or(strings.Join(parts, ", "), "nothing to change")
	if dryRun {
		summary = "dry run, nothing written: " + summary
	}
	fmt.Fprintf(w, "%s; %d entries read\n", summary, rep.Entries)
}

// writeFileAtomic writes a small file through a temporary file and rename.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	// Beside path: CreateTemp's default is the system's temporary directory.
	o, err := os.CreateTemp(cmp.Or(dir, "."), "."+base+".tmp-")
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
