package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/canon"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/diff"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

func init() {
	register(&command{name: "diff", summary: "what changed between two images, by package, and whether the rules care", run: runDiff})
}

const diffHelp = `
Compares two trees or archives (any format list reads, each read once), or
two manifests that apply --manifest wrote, and prints what changed, grouped by
the package that installed it: files added, removed and changed (content,
mode, owner, link target, type; not mtime), the audit findings that are new
and gone (offenders, stale rules), and changed deferred content. Owners come
as audit finds them: --packages-file-list or --package for both inputs
(--old-packages-file-list for OLD when it is another build), else each input's
dpkg database, and an applied image's index for its deferred copies.

Exit status: 0 when nothing the rules care about changed, 1 when something did
(an offender new or gone, deferred content changed, a file at a path the policy
forbids or a rule matches changed), 2 on error.
Reports: text, json, github (workflow annotations at the rule's file and line).
`

func runDiff(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "diff", "[--rules DIR] [flags] OLD NEW", diffHelp)
	rulesDir := rulesFlag(fs, " (for trees and archives)")
	var own diffOwners
	own.register(fs)
	fs.StringVar(&own.oldFileList, "old-packages-file-list", "", "OLD's packages-file-list.txt when OLD is another build (default: --packages-file-list's)")
	report := renamedFlag(fs, "report", "format", "text", "report `format`: text, json, github or sarif")
	maxSize := maxSizeFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want OLD and NEW, got %d arguments", len(pos))
	}
	if err := checkReportFormat(*report); err != nil {
		return err
	}
	res, set, err := diffInputs(ctx, pos[0], pos[1], *rulesDir, &own, maxSize)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(env.Stdout)
	switch *report {
	case "sarif":
		err = printSARIF(out, "diff", set, diffFindings(res, set), checkResultMessage)
	case "json":
		canon.JSON(out, res)
	case "github":
		printDiffGitHub(out, res)
	default:
		printDiffText(out, res)
	}
	if err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if res.Summary.Fails {
		return errFindings
	}
	return nil
}

// diffOwners are audit's ownership flags, and OLD's own file list: a bump
// compares two builds, each with its packages-file-list.txt.
type diffOwners struct {
	ownershipFlags
	oldFileList string
}

// ownersFor returns the owners of side i (0 OLD, 1 NEW); owners from the
// flags are loaded once for both where they are the same.
func (o *diffOwners) ownersFor(i int, path string, prev *owners.Table, open container.OpenOptions) (*owners.Table, string, error) {
	switch {
	case i == 0 && o.oldFileList != "":
		old := ownershipFlags{fileList: o.oldFileList}
		owners, err := old.load()
		return owners, "", err
	case i == 1 && o.oldFileList == "" && o.fileList+o.pkg != "":
		return prev, "", nil
	}
	return o.ownershipFlags.ownersFor(path, open)
}

// fromInput says whether side i's owners come from the input itself (its
// dpkg database, an applied image's index): no flag gives them.
func (o *diffOwners) fromInput(i int) bool {
	return (i != 0 || o.oldFileList == "") && o.fileList == "" && o.pkg == ""
}

// diffInputs diffs two manifests, or two trees or archives.
// The rule set is nil for two manifests, which carry what they need.
func diffInputs(ctx context.Context, old, new, rulesDir string, own *diffOwners, in *inputFlags) (*diff.Result, *rules.Set, error) {
	mOld, err := diff.IsManifest(old)
	if err != nil {
		return nil, nil, err
	}
	mNew, err := diff.IsManifest(new)
	if err != nil {
		return nil, nil, err
	}
	if mOld || mNew {
		if !mOld || !mNew {
			manifest, image := old, new
			if mNew {
				manifest, image = new, old
			}
			return nil, nil, usagef("%s is a manifest and %s is not: diff two manifests, or two images", names.Quote(manifest), names.Quote(image))
		}
		res, err := diff.Manifests(old, new)
		return res, nil, err
	}
	set, err := loadRules(rulesDir)
	if err != nil {
		return nil, nil, err
	}
	if err := own.check(); err != nil {
		return nil, nil, err
	}
	var sides [2]diff.Input
	for i, p := range []string{old, new} {
		if own.fromInput(i) && !owners.ReadsFirst(p) {
			// Its database is gathered in the pass that reads it.
			sides[i] = diff.Input{Path: p, Source: container.SourceOf(p, in.open()), Dpkg: true, Note: func(db *owners.DB) string { return own.ownersNote(p, db) }}
			continue
		}
		owners, note, err := own.ownersFor(i, p, sides[0].Owners, in.open())
		if err != nil {
			return nil, nil, err
		}
		sides[i] = diff.Input{Path: p, Source: container.SourceOf(p, in.open()), Owners: owners, OwnersNote: note}
	}
	res, err := diff.Images(diff.Options{Set: set,
		Wrap: func(r archive.Reader) archive.Reader { return withContext(ctx, r) }}, sides[0], sides[1])
	return res, set, err
}

func printDiffText(w io.Writer, res *diff.Result) {
	for _, s := range []diff.Source{res.Old, res.New} {
		if s.Owners != "" {
			fmt.Fprintln(w, s.Owners)
		}
	}
	if res.Empty() {
		fmt.Fprintf(w, "no difference: %s (%d entries) and %s (%d entries)\n", names.Quote(res.Old.Path), res.Old.Entries, names.Quote(res.New.Path), res.New.Entries)
		return
	}
	fmt.Fprintf(w, "# %s (%s, %d entries) -> %s (%s, %d entries)\n", names.Quote(res.Old.Path), res.Old.Format, res.Old.Entries,
		names.Quote(res.New.Path), res.New.Format, res.New.Entries)
	tw := newColumns(w)
	for _, p := range res.Packages {
		fmt.Fprintf(tw, "%s\n", names.Quote(p.Package))
		for _, f := range p.Files {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Change, names.Quote(f.Path), names.Text(fileDetail(f)))
		}
		for _, f := range p.OffendersNew {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", "new", findingSubject(f), findingText(f))
		}
		for _, f := range p.OffendersGone {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", "gone", findingSubject(f), findingText(f))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, diffSummary(res.Summary))
}

// fileDetail is what changed of f and why the rules care.
func fileDetail(f diff.File) string {
	var parts []string
	for _, what := range f.What {
		parts = append(parts, changeDetail(what, f.Old, f.New))
	}
	var tags []string
	switch {
	case f.Deferred:
		tags = append(tags, "deferred content")
	case f.Path == contract.IndexPath:
		tags = append(tags, "apply's index")
	case f.Forbidden:
		tags = append(tags, "forbidden path")
	}
	if f.Rule != "" {
		tags = append(tags, "rule "+f.Rule)
	}
	if f.Capability {
		tags = append(tags, "capabilities "+xattrsShown(capsOf(f.Old))+" -> "+xattrsShown(capsOf(f.New)))
	}
	if len(tags) > 0 {
		parts = append(parts, "["+strings.Join(tags, ", ")+"]")
	}
	return strings.Join(parts, "; ")
}

func changeDetail(what string, a, b *diff.Record) string {
	switch what {
	case diff.WhatType:
		return fmt.Sprintf("type %s -> %s", a.Type, b.Type)
	case diff.WhatContent:
		return fmt.Sprintf("content %d -> %d bytes, sha256 %s -> %s", a.Size, b.Size, shortSum(a.SHA256), shortSum(b.SHA256))
	case diff.WhatMode:
		return fmt.Sprintf("mode %s -> %s", a.Mode, b.Mode)
	case diff.WhatOwner:
		return fmt.Sprintf("owner %d/%d -> %d/%d", a.UID, a.GID, b.UID, b.GID)
	case diff.WhatLink:
		return fmt.Sprintf("link %s -> %s", names.Quote(a.Link), names.Quote(b.Link))
	case diff.WhatDevice:
		return fmt.Sprintf("device %s -> %s", a.Device, b.Device)
	case diff.WhatXattrs:
		return fmt.Sprintf("xattrs %s -> %s", xattrsShown(a.Xattrs), xattrsShown(b.Xattrs))
	case diff.WhatHandling:
		return fmt.Sprintf("handled %s -> %s", handling(a), handling(b))
	}
	return what
}

// xattrsShown is x (diff.Record's, values already as text), sorted, on
// one line; "none" when empty.
func xattrsShown(x map[string]string) string {
	if len(x) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(x)) {
		parts = append(parts, k+"="+x[k])
	}
	return strings.Join(parts, ", ")
}

// capsOf is r's security.capability alone, nil for a missing record.
func capsOf(r *diff.Record) map[string]string {
	if r == nil || r.Xattrs[archive.CapabilityXattr] == "" {
		return nil
	}
	return map[string]string{archive.CapabilityXattr: r.Xattrs[archive.CapabilityXattr]}
}

func handling(r *diff.Record) string {
	s := r.Kind
	if r.To != "" {
		s += " to " + names.Quote(r.To)
	}
	if r.Rule != "" {
		s += " by rule " + r.Rule
	}
	return s
}

// shortSum is enough of a sha256 to tell two apart in a review.
func shortSum(s string) string {
	if s == "" {
		return "-"
	}
	return s[:min(len(s), 12)]
}

func findingSubject(f trim.Finding) string {
	if f.Path == "" {
		return "[" + f.Check + "] rule " + f.Rule
	}
	return "[" + f.Check + "] " + names.Quote(f.Path)
}

func findingText(f trim.Finding) string {
	by := "policy " + f.Policy
	if f.Rule != "" {
		by = "rule " + f.Rule + " (" + f.Action + ")"
	}
	if f.Check == trim.CheckStale {
		return oneLine(f.Reason)
	}
	return names.Text(by) + ": " + oneLine(f.Reason)
}

func diffSummary(s diff.Summary) string {
	line := fmt.Sprintf("%d added, %d removed, %d changed; offenders %d new, %d gone; %d deferred and %d forbidden changed",
		s.Added, s.Removed, s.Changed, s.OffendersNew, s.OffendersGone, s.DeferredChanged, s.ForbiddenChanged)
	if s.CapabilitiesChanged > 0 {
		line += fmt.Sprintf("; %d with capabilities changed", s.CapabilitiesChanged)
	}
	if s.Fails {
		line += ": the rules care"
	}
	return line
}

// printDiffGitHub annotates what the rules care about (each at its rule's
// file and line), then one notice with the counts: a bump changes many
// files, and GitHub shows only the first annotations of a step.
func printDiffGitHub(w io.Writer, res *diff.Result) {
	for _, p := range res.Packages {
		covered := map[string]bool{}
		for _, f := range p.OffendersNew {
			covered[f.Path] = true
			ghCommand(w, ghLevel(f.Severity), f.Pos, "rootfs-trim diff [new "+f.Check+"]", ghEscapeData(findingMessage(f)))
		}
		for _, f := range p.OffendersGone {
			covered[f.Path] = true
			ghCommand(w, "warning", f.Pos, "rootfs-trim diff [gone "+f.Check+"]", ghEscapeData(findingMessage(f)+" (gone: is the rule stale?)"))
		}
		for _, f := range p.Files {
			if !f.Forbidden && !f.Deferred && !f.Capability || covered[f.Path] && f.Change != diff.Changed {
				continue
			}
			check := "forbidden-changed"
			switch {
			case f.Deferred:
				check = "deferred-changed"
			case !f.Forbidden:
				check = "capability-changed"
			}
			msg := fmt.Sprintf("%s (package %s): %s", names.Quote(f.Path), names.Quote(p.Package), f.Change)
			if d := fileDetail(f); d != "" {
				msg += ": " + d
			}
			ghCommand(w, "error", f.Pos(), "rootfs-trim diff ["+check+"]", ghEscapeData(msg))
		}
	}
	fmt.Fprintf(w, "::notice title=%s::%s -> %s: %s\n", ghEscapeProperty("rootfs-trim diff"),
		ghEscapeData(res.Old.Path), ghEscapeData(res.New.Path), ghEscapeData(diffSummary(res.Summary)))
}

func ghLevel(s rules.Severity) string {
	switch s {
	case rules.Error:
		return "error"
	case rules.Warning:
		return "warning"
	}
	return "notice"
}

// ghCommand writes one workflow command; msg is escaped already
// (ghEscapeData). A finding with no rule or policy behind it (a package
// missing from the lock) has no position: GitHub then shows the
// annotation on the run, which a made-up file=. or line=0 would not.
func ghCommand(w io.Writer, level string, pos rules.Pos, title, msg string) {
	props := ""
	if pos.File != "" {
		props = "file=" + ghEscapeProperty(relPath(pos.File))
		if pos.Line > 0 {
			props += fmt.Sprintf(",line=%d", pos.Line)
		}
		props += ","
	}
	fmt.Fprintf(w, "::%s %stitle=%s::%s\n", level, props, ghEscapeProperty(title), msg)
}

// diffFindings are what diff's github report annotates, as findings for
// SARIF: new offenders at their level, gone ones as warnings (a stale
// rule?), and a forbidden or deferred file changed as an error, each at the
// rule that matches it or else the policy item that forbids it. A file that
// neither places (two manifests name no policy) has nowhere for code
// scanning to show it and is left to the other reports.
func diffFindings(res *diff.Result, set *rules.Set) []trim.Finding {
	var out []trim.Finding
	for _, p := range res.Packages {
		covered := map[string]bool{}
		for _, f := range p.OffendersNew {
			covered[f.Path] = true
			f.Check = "new-" + f.Check
			out = append(out, f)
		}
		for _, f := range p.OffendersGone {
			covered[f.Path] = true
			f.Check, f.Severity = "gone-"+f.Check, rules.Warning
			f.Reason += " (gone: is the rule stale?)"
			out = append(out, f)
		}
		for _, f := range p.Files {
			if !f.Forbidden && !f.Deferred || covered[f.Path] && f.Change != diff.Changed {
				continue
			}
			d := trim.Finding{Path: f.Path, Package: p.Package, Rule: f.Rule, Severity: rules.Error,
				Check: "forbidden-changed", Pos: f.Pos(), Reason: f.Change}
			if f.Deferred {
				d.Check = "deferred-changed"
			}
			if detail := fileDetail(f); detail != "" {
				d.Reason += ": " + detail
			}
			if d.Pos.File == "" && set != nil {
				if fb := set.ForbiddenBy(f.Path, rules.TypeFile, ""); len(fb) > 0 {
					d.Policy, d.Pos = fb[0].Name, fb[0].Pos
				}
			}
			if d.Pos.File != "" {
				out = append(out, d)
			}
		}
	}
	return out
}
