package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/canon"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/check"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

func init() {
	register(&command{name: "check", summary: "CI gate for package bumps: new offenders, stale rules, changed deferred files", run: runCheck})
}

const checkHelp = `
Checks what packages ship against the lock file, which records, per package,
its version and every file a rule or the policy matched (sha256, mode, rule),
as last reviewed. Run it in CI whenever a package version is bumped.

INPUT is NAME[@VERSION]=PATH for one package's tree or archive (an upstream
release tarball, a Debian data tarball, a Buildroot per-package target), a
PATH to a whole target given with --packages-file-list, or a PATH to a whole
image that records its own owners: a dpkg database and
/usr/local/share/rootfs-trim/owners (kicbase). A version is taken from
@VERSION, --version NAME=VERSION, Buildroot's 'make show-info' JSON
(--show-info), the archive's file name, or the image's own records (dpkg's
status, the owners lists' .version files), in that order.

Fails (exit 1), naming each cause, on: a file the policy forbids that no rule
handles (new offender); a must-match rule that matched nothing (stale rule); a
deferred file whose content changed (with a diff); a locked package missing
from the inputs or an input package missing from the lock (unless
--allow-missing / --allow-new); a waiver that no longer applies. A rule's
waive: reason lowers its findings to warnings.

--update-lock writes the lock to accept the inputs as they are and prints what
changed, so a bump's pull request carries its own reviewed lock diff. It
refuses (exit 1, lock untouched) while a file no package rule names is in
the inputs, even one the fallback strips: name it in a package rule first.
A lock file that does not exist is an error, unless --update-lock (a first
lock) or --allow-new is given.
`

func runCheck(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "check", "--rules DIR [--lock FILE] [flags] INPUT...", checkHelp)
	rulesDir := rulesFlag(fs, "")
	lockPath := fs.String("lock", "", "lock `file` (default DIR/check.lock)")
	update := fs.Bool("update-lock", false, "write the lock from the inputs and print what changed")
	fileList := fs.String("packages-file-list", "", "Buildroot's packages-file-list.txt, for PATH inputs")
	showInfo := fs.String("show-info", "", "Buildroot's 'make show-info' JSON `file`, for versions")
	versions := keyValues{}
	fs.Var(versions, "version", "package version `NAME=VERSION` (repeatable)")
	allowMissing := fs.Bool("allow-missing", false, "locked packages absent from the inputs are fine")
	allowNew := fs.Bool("allow-new", false, "input packages absent from the lock are fine")
	format := renamedFlag(fs, "report", "format", "text", "report `format`: text, json, github or sarif")
	maxSize := maxSizeFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("want at least one INPUT")
	}
	if err := checkReportFormat(*format); err != nil {
		return err
	}
	set, err := loadRules(*rulesDir)
	if err != nil {
		return err
	}
	if *lockPath == "" {
		// The installed rules are the package's files: the lock a user
		// updates is one of their own.
		if *update && *rulesDir == "" {
			return usagef("--update-lock would write the installed rules' %s: name the lock with --lock FILE", names.Quote(filepath.Join(set.Dir, "check.lock")))
		}
		*lockPath = filepath.Join(set.Dir, "check.lock")
	}
	lock, err := check.ReadLock(*lockPath)
	switch {
	case errors.Is(err, os.ErrNotExist) && (*update || *allowNew):
		// The first lock of a rule set, or a check that accepts
		// packages no lock records yet.
		lock = check.NewLock()
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("lock %s does not exist (a first lock: --update-lock; packages no lock records yet: --allow-new)", *lockPath)
	case err != nil:
		return err
	}
	warnEmptyFileList(env, *fileList)
	if *showInfo != "" {
		if err := readShowInfo(*showInfo, versions); err != nil {
			return err
		}
	}
	var inputs []check.Input
	maxSize.imageData = trim.ImageData(set)
	for _, p := range pos {
		in, err := parseCheckInput(p, *fileList, maxSize.open())
		if err != nil {
			return err
		}
		inputs = append(inputs, in)
	}
	res, err := check.Run(check.Options{Set: set, Lock: lock, Inputs: inputs, Versions: versions,
		AllowMissing: *allowMissing, AllowNew: *allowNew,
		Wrap: func(r archive.Reader) archive.Reader { return withContext(ctx, r) }, Open: maxSize.open()})
	if err != nil {
		return err
	}
	if *format == "sarif" {
		placeOnLock(res.Findings, *lockPath)
	}
	if *update {
		if bad := res.Unacceptable(); len(bad.Findings) > 0 {
			if err := printCheck(env.Stdout, *format, set, bad); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "rootfs-trim check: %s not updated: %d file(s) no package rule names (new offenders); name each in a package rule, then update the lock\n", *lockPath, len(bad.Findings))
			return errFindings
		}
		changes := check.Changes(lock, res.NewLock)
		if err := writeFileAtomic(*lockPath, func(w io.Writer) error { return res.NewLock.Encode(w) }); err != nil {
			return err
		}
		if len(changes) == 0 {
			fmt.Fprintf(env.Stdout, "%s: unchanged\n", *lockPath)
		} else {
			fmt.Fprintf(env.Stdout, "%s: updated\n", *lockPath)
			for _, c := range changes {
				fmt.Fprintln(env.Stdout, "  "+names.Text(c))
			}
		}
		return nil
	}
	if err := printCheck(env.Stdout, *format, set, res); err != nil {
		return err
	}
	if res.Failed() {
		return errFindings
	}
	return nil
}

var (
	archiveSuffix = regexp.MustCompile(`(\.(tar|cpio|tgz|txz|deb|gz|xz|zst|lz4|bz2))+$`)
	platformWord  = regexp.MustCompile(`([-_.](linux|amd64|arm64|x86_64|aarch64|static))+$`)
	versionAtEnd  = regexp.MustCompile(`(?:^|[-_.])v?(\d+(?:\.\d+)+(?:[-~+][0-9A-Za-z.]+)*)$`)
)

// versionFromName finds the version in a release file name such as
// podman-v3.4.7.tar.gz, cri-o.amd64.v1.29.1.tar.gz or
// cri-containerd-cni-1.7.0-linux-amd64.tar.gz.
func versionFromName(name string) string {
	name = archiveSuffix.ReplaceAllString(name, "")
	name = platformWord.ReplaceAllString(name, "")
	if m := versionAtEnd.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// parseCheckInput reads an input of check, opened with open.
func parseCheckInput(arg, fileList string, open container.OpenOptions) (check.Input, error) {
	name, p, ok := strings.Cut(arg, "=")
	if !ok {
		// A whole target: Buildroot's with its file list, else an image
		// that records its own owners (a dpkg database: kicbase).
		return check.Input{Path: arg, Source: container.SourceOf(arg, open), FileList: fileList, Image: fileList == ""}, nil
	}
	in := check.Input{Path: p, Source: container.SourceOf(p, open)}
	in.Package, in.Version, _ = strings.Cut(name, "@")
	if in.Package == "" || p == "" {
		return in, usagef("input %q: want NAME[@VERSION]=PATH", arg)
	}
	if in.Version == "" {
		in.Version = versionFromName(filepath.Base(p))
	}
	return in, nil
}

// placeOnLock gives check's package-level findings (a package missing
// from the lock or from the inputs), which have no rule file position,
// the lock's line for the package, else the line of "packages": GitHub's
// upload refuses a whole SARIF file when a result has no location, and
// the lock is what --update-lock changes to settle them.
func placeOnLock(findings []check.Finding, lockPath string) {
	data, err := os.ReadFile(lockPath)
	if err != nil {
		return // no lock to point at: the result goes without a location
	}
	lines := strings.Split(string(data), "\n")
	lineOf := func(prefix string) int { // 0: none
		return slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) }) + 1
	}
	for i := range findings {
		f := &findings[i]
		if f.Pos.File != "" || f.Package == "" {
			continue
		}
		key, _ := json.Marshal(f.Package)
		line := lineOf("    " + string(key) + ": {")
		if line == 0 {
			line = max(lineOf(`  "packages": {`), 1)
		}
		f.Pos = rules.Pos{File: lockPath, Line: line}
	}
}

// readShowInfo takes versions from `make show-info`: {"pkg": {"version": ..}}.
func readShowInfo(path string, versions keyValues) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var info map[string]struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for name, pkg := range info {
		if _, ok := versions[name]; !ok && pkg.Version != "" {
			versions[name] = pkg.Version
		}
	}
	return nil
}

// checkSchema names check --format json's JSON Schema,
// docs/schema/check.json. Any change to checkReport's fields (a finding's
// or a summary's included) changes it.
const checkSchema = "rootfs-trim/check/v3"

type checkReport struct {
	Schema   string          `json:"schema"`
	Findings []check.Finding `json:"findings"`
	Packages []check.Summary `json:"packages"`
	Failed   bool            `json:"failed"`
}

func printCheck(w io.Writer, format string, set *rules.Set, res *check.Result) error {
	switch format {
	case "json":
		if res.Findings == nil {
			res.Findings = []check.Finding{}
		}
		for i := range res.Findings {
			res.Findings[i].PathB64 = names.B64(res.Findings[i].Path)
		}
		if res.Packages == nil {
			res.Packages = []check.Summary{}
		}
		return canon.JSON(w, checkReport{checkSchema, res.Findings, res.Packages, res.Failed()})
	case "sarif":
		// Notes (a version changed, a new file a rule handles) are not
		// code scanning alerts, nor annotations.
		var plain []trim.Finding
		for _, f := range res.Findings {
			if f.Severity != rules.Note {
				plain = append(plain, f.Finding)
			}
		}
		return printSARIF(w, "check", set, plain, checkResultMessage)
	case "github":
		for _, f := range res.Findings {
			if f.Severity != rules.Note {
				ghAnnotation(w, f.Severity, f.Pos, f.Check, checkMessage(f))
			}
		}
		printCheckNotice(w, res)
		return nil
	}
	for _, f := range res.Findings {
		// What is unknown is left out: a package-level finding has no
		// path, a lock finding no rule file.
		p := ""
		if f.Path != "" {
			p = names.Quote(f.Path) + ": "
		}
		where := ""
		if f.Pos.File != "" {
			where = " (" + names.Text(relPath(f.Pos.File)) + ":" + fmt.Sprint(f.Pos.Line) + ")"
		}
		subject := names.Quote(f.Package)
		if len(f.SeenAs) > 0 {
			subject += " (as " + names.Text(strings.Join(f.SeenAs, ", ")) + ")"
		}
		if f.Rule != "" {
			subject += ", rule " + f.Rule
		}
		fmt.Fprintf(w, "%-7s [%s] %s: %s%s%s%s\n", f.Severity, f.Check, subject, p, oneLine(f.Reason), where, placeNote(f.Finding))
		if f.Diff != "" {
			// The lines of a file a package ships: escaped like names.
			for _, line := range strings.Split(strings.TrimSuffix(f.Diff, "\n"), "\n") {
				fmt.Fprintln(w, "        "+names.Text(line))
			}
		}
	}
	for _, s := range res.Packages {
		status := "ok"
		if s.Errors > 0 {
			status = "FAIL"
		}
		pkg := names.Quote(s.Package)
		if len(s.SeenAs) > 0 {
			pkg += " (as " + names.Text(strings.Join(s.SeenAs, ", ")) + ")"
		}
		unhandled := ""
		if n := s.Files - s.Handled; n > 0 {
			unhandled = fmt.Sprintf(", %d not", n)
		}
		fmt.Fprintf(w, "%-4s %s%s: %d offending file(s) handled%s, %d error(s), %d warning(s)\n", status, pkg, names.Text(shownVersion(s)), s.Handled, unhandled, s.Errors, s.Warnings)
	}
	return nil
}

// checkMessage is a check finding as one annotation, each kind in its own
// words (audit's message says what a rule will do, which a lock finding
// has no verb for), escaped for a workflow command; a content change
// carries its diff, one line of the annotation each.
func checkMessage(f check.Finding) string {
	pkg := "package " + names.Quote(f.Package)
	if len(f.SeenAs) > 0 {
		pkg += " (as " + strings.Join(f.SeenAs, ", ") + ")"
	}
	in := ""
	if f.Input != "" {
		in = ", in " + names.Quote(f.Input)
	}
	reason := oneLine(f.Reason)
	var msg string
	switch f.Check {
	case check.CheckNewOffender, trim.CheckRuntimeEnabled, trim.CheckRuntimeAllowed:
		msg = fmt.Sprintf("%s (%s%s): %s", names.Quote(f.Path), pkg, in, reason)
	case check.CheckContentChanged, check.CheckNewHandled, check.CheckGone, trim.CheckOverride, trim.CheckCNIDir:
		msg = fmt.Sprintf("%s (%s, rule %s%s): %s", names.Quote(f.Path), pkg, f.Rule, in, reason)
	case check.CheckStale, check.CheckStaleWaiver:
		msg = fmt.Sprintf("rule %s of %s: %s", f.Rule, pkg, reason)
	default: // missing-package, unlocked-package, version
		msg = fmt.Sprintf("%s%s: %s", pkg, in, reason)
	}
	out := ghEscapeData(msg)
	if f.Diff != "" {
		for _, line := range strings.Split(strings.TrimSuffix(f.Diff, "\n"), "\n") {
			out += "%0A" + ghEscapeData(line)
		}
	}
	return out
}

// shownVersion is a summary's version, with what is unknown left out:
// without --show-info or --version the inputs' version is unknown, which is
// no downgrade to nothing.
func shownVersion(s check.Summary) string {
	switch {
	case s.Version == "" && s.OldVersion == "":
		return ""
	case s.Version == "":
		return " (locked " + s.OldVersion + ")"
	case s.OldVersion != "" && s.OldVersion != s.Version:
		return " " + s.OldVersion + " -> " + s.Version
	}
	return " " + s.Version
}

// printCheckNotice ends a github report with one notice, as diff's does: the
// outcome and the counts, and the notes (a version changed, a new file a
// rule handles), which are no annotation, so that a passing bump still says
// what it checked and what changed.
func printCheckNotice(w io.Writer, res *check.Result) {
	outcome := "passed"
	if res.Failed() {
		outcome = "failed"
	}
	var handled, unhandled, errs, warns int
	for _, s := range res.Packages {
		handled += s.Handled
		unhandled += s.Files - s.Handled
		errs += s.Errors
		warns += s.Warnings
	}
	msg := fmt.Sprintf("%s: %d package(s), %d offending file(s) handled, %d not, %d error(s), %d warning(s)",
		outcome, len(res.Packages), handled, unhandled, errs, warns)
	data := ghEscapeData(msg)
	for _, f := range res.Findings {
		if f.Severity == rules.Note {
			data += "%0A" + checkMessage(f) // escaped already
		}
	}
	fmt.Fprintf(w, "::notice title=%s::%s\n", ghEscapeProperty("rootfs-trim check"), data)
}
