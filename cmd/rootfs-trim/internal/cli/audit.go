package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/canon"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

func init() {
	register(&command{name: "audit", summary: "list offending files and the packages that installed them", run: runAudit})
}

const auditHelp = `
Reads trees, archives and package tarballs (it never writes) and lists each
file that a package must not ship: path, package, the rule that handles it or
the policy it violates, and why. Must-match rules that matched nothing although
their package is present are listed too (stale rules). Without
--packages-file-list or --package, an input with a dpkg database
(var/lib/dpkg/info/*.list) is attributed from it, and a line says so.

Levels: error, apply cannot fix it as reviewed (no rule handles the file,
or only the fallback, which apply --strict refuses; a stale rule); warning, a
rule handles it (apply fixes it), or a dangling link, or a stale rule expected
or waived; note, a waived rule's file.

Exit status: 0 when nothing offends, 1 when an offending file is there
(handled or not, but not waived), 2 on error.
Reports (--report; --format is its old spelling): text (aligned columns),
json, github (workflow annotations pointing at the rule file and line), sarif
(SARIF 2.1.0, for GitHub code scanning).
`

func runAudit(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "audit", "--rules DIR [flags] INPUT...", auditHelp)
	rulesDir := rulesFlag(fs, "")
	var own ownershipFlags
	own.register(fs)
	format := renamedFlag(fs, "report", "format", "text", "report `format`: text, json, github or sarif")
	var sb sbomFlags
	sb.register(fs)
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
	if sb.out != "" && len(pos) != 1 {
		return usagef("--sbom describes one image: give one INPUT, not %d", len(pos))
	}
	doc, err := sb.start()
	if err != nil {
		return err
	}
	set, err := loadRules(*rulesDir)
	if err != nil {
		return err
	}
	if err := own.check(); err != nil {
		return err
	}
	warnEmptyFileList(env, own.fileList)
	var inputs []trim.AuditInput
	fromFlags := own.fileList != "" || own.pkg != ""
	maxSize.imageData = trim.ImageData(set)
	for _, p := range pos {
		in := trim.AuditInput{Path: p, Source: container.SourceOf(p, maxSize.open()), Dpkg: !fromFlags}
		if fromFlags {
			if in.Owners, err = own.load(); err != nil {
				return err
			}
		}
		inputs = append(inputs, in)
	}
	res, err := trim.Audit(set, inputs, func(r archive.Reader) archive.Reader { return withContext(ctx, r) }, maxSize.open())
	if err != nil {
		return err
	}
	var notes []string
	for i, db := range res.Databases {
		if n := own.ownersNote(pos[i], db); n != "" {
			notes = append(notes, n)
		}
	}
	if err := printFindings(env.Stdout, *format, set, res, notes, len(inputs)); err != nil {
		return err
	}
	if err := sb.write(env, doc, auditSBOM(pos[0], inputs[0], res)); err != nil {
		return err
	}
	// 1 when the inputs hold an offending file, whatever its level.
	if slices.ContainsFunc(res.Findings, trim.Finding.Offends) {
		return errFindings
	}
	return nil
}

// auditSBOM is what an SBOM of the one audited input holds: its packages,
// from the flags or the image's own records, and, for an image apply
// made, the deferred copies and templates its index records.
func auditSBOM(path string, in trim.AuditInput, res *trim.AuditResult) sbomRun {
	run := sbomRun{subject: path, table: in.Owners}
	if db := res.Databases[0]; db != nil {
		run.table, run.db = db.Owners, db
	}
	run.changes = res.Applied[0]
	return run
}

// auditSchema names audit --format json's JSON Schema,
// docs/schema/audit.json. Any change to auditReport's fields (a finding's
// included) changes it.
const auditSchema = "rootfs-trim/audit/v3"

type auditReport struct {
	Schema   string         `json:"schema"`
	Findings []trim.Finding `json:"findings"`
	Entries  int            `json:"entries"`
	Owners   []string       `json:"owners,omitempty"`
}

// notes say where owners came from when the inputs told (the dpkg
// database): a line each in text, "owners" in JSON. With more than one
// input, the text table says which one each finding is in, as JSON's
// "input" and the annotations do.
func printFindings(w io.Writer, format string, set *rules.Set, res *trim.AuditResult, notes []string, inputs int) error {
	findings, entries := res.Findings, res.Entries
	switch format {
	case "sarif":
		return printSARIF(w, "audit", set, findings, findingMessage)
	case "json":
		if findings == nil {
			findings = []trim.Finding{}
		}
		for i := range findings {
			findings[i].PathB64 = names.B64(findings[i].Path) // a path that is not UTF-8
		}
		return canon.JSON(w, auditReport{auditSchema, findings, entries, notes})
	case "github":
		for _, f := range findings {
			ghAnnotation(w, f.Severity, f.Pos, f.Check, ghEscapeData(findingMessage(f)))
		}
		return nil
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if len(findings) == 0 {
		fmt.Fprintf(w, "clean: nothing offends in %d entries\n", entries)
		return nil
	}
	tw := newColumns(w)
	inputCell := func(s string) string { return "" }
	if inputs > 1 {
		inputCell = func(s string) string { return s + "\t" }
	}
	fmt.Fprintln(tw, inputCell("INPUT")+"SEVERITY\tPATH\tPACKAGE\tHANDLED BY\tCHECK\tREASON")
	offending, bySeverity := 0, map[rules.Severity]int{}
	for _, f := range findings {
		by := "policy " + f.Policy + " (no rule: new offender)"
		if f.Rule != "" {
			by = "rule " + f.Rule + " (" + f.Action + ")"
			if f.Target != "" {
				by += " -> " + f.Target
			}
			if k := keyNote(f); k != "" {
				by += " " + k
			}
		}
		switch f.Check {
		case trim.CheckUnreviewed:
			by = "rule " + f.Rule + " (" + f.Action + ", fallback)"
		case trim.CheckDangling:
			by = "-> " + f.Target
		case trim.CheckOverride, trim.CheckCNIDir:
			by = "config " + f.Rule + " " + keyNote(f)
		}
		if f.Check == trim.CheckRuntimeAllowed && f.Rule == "" {
			by = noRuntimePolicy
		}
		// A stale rule has no path: its cell is left empty.
		p := names.Quote(f.Path)
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t[%s]\t%s%s\n", inputCell(names.Quote(f.Input)), f.Severity, p, names.Quote(f.Package), names.Text(by), f.Check, oneLine(f.Reason), placeNote(f))
		if f.Offends() {
			offending++
		}
		bySeverity[f.Severity]++
	}
	tw.Flush()
	// The offending files first: they, not the errors, make the exit
	// status 1 (runAudit), which a line of 0 errors would not explain.
	errs, warns := bySeverity[rules.Error], bySeverity[rules.Warning]
	counts := fmt.Sprintf("%d offending file(s), %d error(s), %d warning(s)", offending, errs, warns)
	if n := len(findings) - errs - warns; n > 0 {
		counts += fmt.Sprintf(", %d note(s)", n)
	}
	fmt.Fprintf(w, "%s in %d entries\n", counts, entries)
	return nil
}

// placeNote says where in its container a finding's file is: the image
// layer that added it (and the Dockerfile line that made it), or the
// initrd file and segment it came from.
func placeNote(f trim.Finding) string {
	switch {
	case f.Initrd != nil:
		return " [" + names.Text(f.Initrd.String()) + "]"
	case f.Layer != nil:
		return " [" + names.Text(f.Layer.Note()) + "]"
	}
	return ""
}

func findingMessage(f trim.Finding) string {
	switch f.Check {
	case trim.CheckStale:
		return fmt.Sprintf("rule %s of package %s %s", f.Rule, names.Quote(f.Package), f.Reason)
	case trim.CheckUnhandled:
		return fmt.Sprintf("%s (package %s, in %s) violates policy %s and no rule handles it: %s%s", names.Quote(f.Path), names.Quote(f.Package), names.Quote(f.Input), f.Policy, oneLine(f.Reason), placeNote(f))
	case trim.CheckRuntimeEnabled, trim.CheckRuntimeAllowed:
		return fmt.Sprintf("%s (package %s, in %s): %s: %s%s", names.Quote(f.Path), names.Quote(f.Package), names.Quote(f.Input), cmp.Or(runtimeRule(f), noRuntimePolicy), oneLine(f.Reason), placeNote(f))
	case trim.CheckOverride, trim.CheckCNIDir:
		return fmt.Sprintf("%s (package %s, in %s): config %s%s: %s%s", names.Quote(f.Path), names.Quote(f.Package), names.Quote(f.Input), f.Rule, names.Text(parenthesized(keyNote(f))), oneLine(f.Reason), placeNote(f))
	}
	return fmt.Sprintf("%s (package %s, in %s): rule %s will %s it%s: %s%s", names.Quote(f.Path), names.Quote(f.Package), names.Quote(f.Input), f.Rule, f.Action, names.Text(parenthesized(keyNote(f))), oneLine(f.Reason), placeNote(f))
}

// noRuntimePolicy is what handles a runtime note when the rules have no
// boot_runtime policy: every runtime is allowed, and no rule speaks.
const noRuntimePolicy = "no boot_runtime policy"

// runtimeRule names the boot_runtime rule of a runtime finding, if any.
func runtimeRule(f trim.Finding) string {
	if f.Rule == "" {
		return ""
	}
	return "rule " + f.Rule
}

// keyNote says, for a file an edit rule changes, its key and the value
// the file gives it: `disabled_plugins = ["cri"]`.
func keyNote(f trim.Finding) string {
	switch {
	case f.Key == "":
		return ""
	case f.Value == "":
		return f.Key + " absent"
	}
	return f.Key + " = " + f.Value
}

func parenthesized(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// oneLine folds a reason's whitespace and escapes what it must not carry
// to a terminal.
func oneLine(s string) string { return names.Text(strings.Join(strings.Fields(s), " ")) }

// relPath shows rule files relative to the working directory, as GitHub
// annotations expect paths relative to the repository.
func relPath(p string) string {
	if !filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// ghAnnotation writes one finding as a workflow command; msg is escaped
// already (ghEscapeData).
func ghAnnotation(w io.Writer, sev rules.Severity, pos rules.Pos, check, msg string) {
	ghCommand(w, ghLevel(sev), pos, "rootfs-trim ["+check+"]", msg)
}

// GitHub's workflow command escaping, after names.Text has escaped every
// control byte (GitHub only decodes %25, %0D and %0A; an ESC would reach
// the log as it is).
func ghEscapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(names.Text(s))
}

func ghEscapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(names.Text(s))
}
