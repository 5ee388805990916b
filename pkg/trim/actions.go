package trim

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/configkey"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// ActionSpec is everything the pipeline needs to know about one rule
// action. A new action is its name in pkg/rules/rules.go and a row here
// with its writer; decide, stream, tree, inject, audit, check, export and
// the CLI read this table and nothing else (TestEveryActionHandled walks
// it and fails on a row that leaves a column unset).
type ActionSpec struct {
	Action rules.Action
	// Kind is what the manifest and the index record for a file the
	// action took; one per action. The summary counts the actions' kinds
	// in the table's order (Kinds).
	Kind contract.Kind
	// Moves: the entry leaves its place and its data is captured (spooled)
	// until place writes it again once the whole input is known; otherwise
	// the entry is only removed, its sha256 recorded.
	Moves bool
	// Dirs: a directory the rule matches goes with everything beneath it
	// (not Moves); otherwise the rule leaves it to its contents.
	Dirs bool
	// Exportable: Buildroot's <PKG>_DROP_FILES_OR_DIRS can say it (export).
	Exportable bool
	// LocksContent: check keeps the file's content in the lock and fails
	// with a diff when a bump changes it (the boot step uses it as is).
	LocksContent bool
	// InPlace: place writes the entry again at its own path (Moves only);
	// a tree apply renames it over the old one rather than removing it.
	InPlace bool
	// Applied reports whether e already is what rule r would make of it
	// (an applied image): the decision then leaves it alone, unreported.
	Applied func(e *archive.Entry, r *rules.Rule) bool
	// Taken is the path of the image that the action took away, as an
	// earlier apply's index record f of this kind says; "" when the path
	// still holds something (Dangling reports links to a taken path).
	Taken func(f contract.IndexFile) string
	// KeepOnReapply says whether the new index keeps record f of an
	// earlier apply when apply runs on that apply's output (out is what
	// the output holds), and whether f's Source stays claimed by it.
	KeepOnReapply func(f contract.IndexFile, out tree) (keep, claim bool)
	// Redo lets a tree apply redo what an earlier apply did with c when
	// the tree has c's source again (see redoEarlierApply): it may forget
	// that out holds c's destination, or old's records of c.
	Redo func(c *captured, out *dirTree, old *contract.Index)
	// Judge, when set, reads the file's data: whether the rule has
	// anything to change in it is in its content, not its path (an edit
	// rule's key). Audit reports the file only when it has, check locks
	// what it reads, and apply writes back a file it has nothing to
	// change in as it came.
	Judge func(r *rules.Rule, data []byte) (configkey.Result, error)
	// Target is what audit shows as the target of a file rule r handles
	// ("" for none).
	Target func(r *rules.Rule) string
	// place writes a moved entry at its destination (Moves only).
	place func(p *planner, c *captured, e *archive.Entry, change manifest.Change)
}

// actionTable is every rule action, in the order apply's summary counts
// their kinds.
var actionTable = []*ActionSpec{
	{Action: rules.Strip, Kind: contract.Removed, Dirs: true, Exportable: true,
		Applied: neverApplied, Taken: sourceTaken, KeepOnReapply: alwaysKept, Redo: noRedo, Target: noTarget},
	{Action: rules.Relocate, Kind: contract.Relocated, Moves: true, place: placeRelocated,
		Applied: neverApplied, Taken: sourceTaken, KeepOnReapply: alwaysKept, Redo: redoRelocated, Target: noTarget},
	// A retargeted link is taken out and written again at its own path,
	// so that both appliers reuse the moved entries' path (owner, mode,
	// mtime kept by the clone); Buildroot's drop list can only remove.
	{Action: rules.Retarget, Kind: contract.Retargeted, Moves: true, InPlace: true, place: placeRetargeted,
		Applied: retargeted, Taken: nothingTaken, KeepOnReapply: keptWhileSourceIs, Redo: noRedo, Target: linkTarget},
	// An edited file is written again at its own path with one key
	// changed (edit.go); Buildroot's drop list can only remove.
	{Action: rules.Edit, Kind: contract.Edited, Moves: true, InPlace: true, place: placeEdited, Judge: judgeEdit,
		Applied: neverApplied, Taken: nothingTaken, KeepOnReapply: keptWhileSourceIs, Redo: noRedo, Target: noTarget},
	{Action: rules.Defer, Kind: contract.Deferred, Moves: true, LocksContent: true, place: placeDeferred,
		Applied: neverApplied, Taken: deferredOriginal, KeepOnReapply: deferredCopyKept, Redo: redoDeferred, Target: noTarget},
}

// Actions is the table by action.
var Actions = func() map[rules.Action]*ActionSpec {
	m := map[rules.Action]*ActionSpec{}
	for _, s := range actionTable {
		m[s.Action] = s
	}
	return m
}()

// specOfKind is the row whose action records kind; nil for the kinds
// apply records itself (contract.OwnKinds).
func specOfKind(kind contract.Kind) *ActionSpec {
	for _, s := range actionTable {
		if s.Kind == kind {
			return s
		}
	}
	return nil
}

// Kinds are all kinds of change, in the order apply's summary counts
// them: the actions', then what apply does itself.
func Kinds() []contract.Kind {
	var all []contract.Kind
	for _, s := range actionTable {
		all = append(all, s.Kind)
	}
	return append(all, contract.OwnKinds...)
}

func neverApplied(*archive.Entry, *rules.Rule) bool { return false }

// retargeted: the link already points where the rule points it (an
// applied image, or a package that got it right).
func retargeted(e *archive.Entry, r *rules.Rule) bool {
	return e.Type == archive.TypeSymlink && e.Linkname == r.To
}

func sourceTaken(f contract.IndexFile) string { return f.Source }

// nothingTaken: the entry is written again at its own path.
func nothingTaken(contract.IndexFile) string { return "" }

// deferredOriginal is the path a deferred copy came from: its Source is
// deferred/<tag>/<original path>.
func deferredOriginal(f contract.IndexFile) string {
	rest, ok := strings.CutPrefix(f.Source, contract.Dir+"/deferred/")
	if !ok {
		return ""
	}
	_, p, _ := strings.Cut(rest, "/")
	return p
}

// alwaysKept: what was removed or relocated stays recorded, so that the
// image says what was taken out of it.
func alwaysKept(contract.IndexFile, tree) (bool, bool) { return true, false }

// keptWhileSourceIs: the link points where that apply put it, so the
// decision left it alone: still that apply's work.
func keptWhileSourceIs(f contract.IndexFile, out tree) (bool, bool) {
	return out.exists(f.Source), false
}

// deferredCopyKept: deferred copies an earlier run made are in the image
// as ordinary entries now; keep recording them, and they are that run's.
func deferredCopyKept(f contract.IndexFile, out tree) (bool, bool) {
	ok := out.exists(f.Source)
	return ok, ok
}

func noTarget(*rules.Rule) string { return "" }

// linkTarget: the new target a retarget rule gives a symlink.
func linkTarget(r *rules.Rule) string { return r.To }

// planInput is what planInjections needs: see there.
type planInput struct {
	set     *rules.Set
	caps    []*captured
	removed []manifest.Change
	out     tree
	epoch   time.Time
	owners  *owners.Table
	kept    map[string]bool   // the input's files the output keeps, for the index's owners
	own     map[string]string // path -> sha256 the input has at an own path
	old     *contract.Index
	active  func(pkg string) bool
}

// planner collects what planInjections and the actions' writers decide.
type planner struct {
	planInput
	index    *contract.Index
	inj      []*injection // moved files: the first group
	written  []*injection // added files, templates, the index: the second
	dropped  []manifest.Change
	problems []string
	claimed  map[string]string // path -> what claims it
	ours     map[string]string // path -> sha256 an earlier apply wrote there
	restored map[string]string // condition tag + destination at boot -> rule
	// superseded maps a deferred file that is not restored to the one
	// restored at its path instead (supersededDeferrals); nil until the
	// first deferral asks.
	superseded map[*captured]*captured
}

func (p *planner) claim(path, what string) bool {
	if prev, ok := p.claimed[path]; ok {
		p.problems = append(p.problems, fmt.Sprintf("%s: both %s and %s write it", names.Quote(path), prev, what))
		return false
	}
	p.claimed[path] = what
	return true
}

// inject adds a moved entry at dest.
func (p *planner) inject(c *captured, e *archive.Entry, change manifest.Change, dest string) {
	change.To = dest
	e.Name = dest
	if e.Nlink > 1 {
		e.Nlink = 1
	}
	p.inj = append(p.inj, &injection{entry: e, data: c.data.Reader, change: change, captured: true})
}

// relocationDest is where rule r of verdict v moves the file.
func relocationDest(v *Verdict) string {
	dest := v.Rule.To
	if strings.HasSuffix(dest, "/") {
		dest += path.Base(v.Path)
	}
	return dest
}

func placeRelocated(p *planner, c *captured, e *archive.Entry, change manifest.Change) {
	r := c.verdict.Rule
	dest := relocationDest(c.verdict)
	if p.out.exists(dest) {
		if r.Existing == rules.ExistingStrip {
			change.Kind = contract.Removed
			change.Reason = fmt.Sprintf("%s already has its proper copy at %s", names.Quote(c.verdict.Path), names.Quote(dest))
			p.dropped = append(p.dropped, change)
			return
		}
		p.problems = append(p.problems, fmt.Sprintf("rule %s (%s): relocating %s onto %s, which the image already has (say existing: strip if that copy is the proper one)", r.Name, r.Pos, names.Quote(c.verdict.Path), names.Quote(dest)))
		return
	}
	if e.Type == archive.TypeSymlink && !path.IsAbs(e.Linkname) && path.Dir(dest) != path.Dir(c.verdict.Path) {
		// Moved to another directory, a relative link would point at
		// something else; rewriting it would change what the package
		// shipped.
		p.problems = append(p.problems, fmt.Sprintf("rule %s (%s): %s is a symlink to %s, relative to its directory: relocated to %s it would point at something else (relocate it within its directory, strip it, or make the package's link absolute)",
			r.Name, r.Pos, names.Quote(c.verdict.Path), names.Quote(e.Linkname), names.Quote(dest)))
		return
	}
	if !p.claim(dest, "rule "+r.Name) {
		return
	}
	p.index.Files = append(p.index.Files, contract.IndexFile{Kind: contract.Relocated, Name: r.Name, Source: c.verdict.Path, Dest: dest,
		Link: linkOf(e), Mode: fmt.Sprintf("%04o", e.Mode), UID: e.UID, GID: e.GID, SHA256: sumOf(c, e)})
	p.inject(c, e, change, dest)
}

func placeDeferred(p *planner, c *captured, e *archive.Entry, change manifest.Change) {
	r := c.verdict.Rule
	dest := contract.DeferredPath(r.Tag(), c.verdict.Path)
	restored := r.RestoredName(c.verdict.Path)
	when := contract.Condition{Runtimes: nonEmpty(r.Runtime), CNIs: nonEmpty(r.CNI)}
	key := restoreKey(c)
	if p.superseded == nil {
		p.superseded = supersededDeferrals(p.caps)
	}
	if kept := p.superseded[c]; kept != nil {
		p.dropDeferred(c, e, change, kept.verdict.Path, kept.verdict.Rule.Name)
		return
	}
	if f := p.earlierRestore(dest, restored, when); f != nil {
		// What an earlier apply deferred stays in the image and its
		// index: the file taken from the restored path is still the one
		// read there; anything else would have render refuse both.
		if kept := deferredOriginal(*f); kept == restored && restored != c.verdict.Path && sameRulePackage(p.set.RuleNamed(f.Name), r) {
			p.dropDeferred(c, e, change, kept, f.Name+", deferred by an earlier apply")
			return
		}
		p.problems = append(p.problems, fmt.Sprintf("rules %s (deferred by an earlier apply, %s) and %s both restore %s for %s at boot; remove that copy to have %s deferred instead",
			f.Name, names.Quote(f.Source), r.Name, names.Quote(restored), r.Tag(), names.Quote(c.verdict.Path)))
		return
	}
	if prev, ok := p.restored[key]; ok {
		p.problems = append(p.problems, fmt.Sprintf("rules %s and %s both restore %s for %s at boot", prev, r.Name, names.Quote(restored), r.Tag()))
		return
	}
	p.restored[key] = r.Name
	p.index.Files = append(p.index.Files, contract.IndexFile{
		Kind: contract.Deferred, Name: r.Name, Source: dest, Dest: restored,
		When: when, Link: linkOf(e), Mode: fmt.Sprintf("%04o", e.Mode), UID: e.UID, GID: e.GID, SHA256: sumOf(c, e),
	})
	if !p.claim(dest, "rule "+r.Name) {
		return
	}
	p.inject(c, e, change, dest)
}

// dropDeferred takes a deferred file out of /etc without deferring it,
// recorded as removed: the file kept (by rule keptBy) is restored at its
// path instead.
func (p *planner) dropDeferred(c *captured, e *archive.Entry, change manifest.Change, kept, keptBy string) {
	r := c.verdict.Rule
	change.Kind, change.Kept = contract.Removed, kept
	change.Reason = fmt.Sprintf("not deferred: %s (rule %s) is kept instead; both would be restored as %s for %s at boot, and it is the file already at that path, the one read there",
		names.Quote(kept), keptBy, names.Quote(r.RestoredName(c.verdict.Path)), r.Tag())
	p.dropped = append(p.dropped, change)
	p.index.Files = append(p.index.Files, contract.IndexFile{Kind: contract.Removed, Name: r.Name, Source: c.verdict.Path,
		Mode: fmt.Sprintf("%04o", e.Mode), SHA256: sumOf(c, e)})
}

// earlierRestore is the record of an earlier apply's deferred copy, still
// in the image and so kept in the index, that the boot step restores at
// restored when the condition is when, as it would a copy at dest: from
// another source (a copy at dest is dest's record, made again).
func (p *planner) earlierRestore(dest, restored string, when contract.Condition) *contract.IndexFile {
	if p.old == nil {
		return nil
	}
	for i, f := range p.old.Files {
		if f.Kind != contract.Deferred || f.Source == dest || f.Dest != restored ||
			!slices.Equal(f.When.Runtimes, when.Runtimes) || !slices.Equal(f.When.CNIs, when.CNIs) {
			continue
		}
		if keep, _ := deferredCopyKept(f, p.out); keep {
			return &p.old.Files[i]
		}
	}
	return nil
}

// sameRulePackage: a and r are rules of one package (not "*"); a may be nil.
func sameRulePackage(a, r *rules.Rule) bool {
	return a != nil && a.Package == r.Package && r.Package != rules.AnyPackage
}

// restoreKey is where and when the boot step restores the deferred file
// c: its condition and its restored path.
func restoreKey(c *captured) string {
	r := c.verdict.Rule
	return r.Tag() + " " + r.RestoredName(c.verdict.Path)
}

// supersededDeferrals decides between deferred files that rules of one
// package would restore at one path for one condition: cri-o's
// 10-crio-bridge.conflist and the 10-crio-bridge.conflist.disabled its
// later packages ship (restore_as gives it the enabled name back), both
// left by a package upgrade. The one already at that path is what its
// reader (libcni) used, so it is restored; each other one maps to it and
// is taken out of the image, not restored. Files of different packages,
// or where none (or several) is at the restored path, stay a conflict
// that placeDeferred refuses.
func supersededDeferrals(caps []*captured) map[*captured]*captured {
	groups := map[string][]*captured{}
	for _, c := range caps {
		if c.verdict.Rule.Action == rules.Defer {
			groups[restoreKey(c)] = append(groups[restoreKey(c)], c)
		}
	}
	out := map[*captured]*captured{}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		var live []*captured
		pkg := g[0].verdict.Rule.Package
		one := pkg != rules.AnyPackage
		for _, c := range g {
			one = one && c.verdict.Rule.Package == pkg
			if c.verdict.Rule.RestoredName(c.verdict.Path) == c.verdict.Path {
				live = append(live, c)
			}
		}
		if !one || len(live) != 1 {
			continue
		}
		for _, c := range g {
			if c != live[0] {
				out[c] = live[0]
			}
		}
	}
	return out
}

func placeRetargeted(p *planner, c *captured, e *archive.Entry, change manifest.Change) {
	r := c.verdict.Rule
	if e.Type != archive.TypeSymlink {
		p.problems = append(p.problems, fmt.Sprintf("rule %s (%s): %s is a %s, not a symlink: retarget only changes where a symlink points", r.Name, r.Pos, names.Quote(c.verdict.Path), e.Type))
		return
	}
	if !p.claim(c.verdict.Path, "rule "+r.Name) {
		return
	}
	change.Reason = fmt.Sprintf("was a symlink to %s", names.Quote(e.Linkname))
	e.Linkname = r.To
	p.index.Files = append(p.index.Files, contract.IndexFile{Kind: contract.Retargeted, Name: r.Name, Source: c.verdict.Path, Dest: c.verdict.Path,
		Link: r.To, Mode: fmt.Sprintf("%04o", e.Mode), UID: e.UID, GID: e.GID, SHA256: digest.Bytes([]byte(r.To))})
	p.inject(c, e, change, c.verdict.Path)
	// As for a dangling link, the manifest's To is the link's target,
	// and its sha256 that of the target's bytes, as the index records.
	ch := &p.inj[len(p.inj)-1].change
	ch.To, ch.SHA256 = r.To, digest.Bytes([]byte(r.To))
}

// redoRelocated: a relocation whose destination holds the same bytes, or
// what the earlier apply's index says it put there, is made again.
func redoRelocated(c *captured, out *dirTree, old *contract.Index) {
	dest := relocationDest(c.verdict)
	if !out.files[dest] {
		return
	}
	sum := out.sum(dest)
	recorded := old != nil && slices.ContainsFunc(old.Files, func(f contract.IndexFile) bool {
		return f.Kind == contract.Relocated && f.Source == c.verdict.Path && f.Dest == dest && f.SHA256 == sum
	})
	if sum == c.data.sum || recorded {
		delete(out.files, dest)
	}
}

// redoDeferred: the deferred copy is made again; the earlier apply's
// record of it goes.
func redoDeferred(c *captured, _ *dirTree, old *contract.Index) {
	if old == nil {
		return
	}
	src := contract.DeferredPath(c.verdict.Rule.Tag(), c.verdict.Path)
	var files []contract.IndexFile
	for _, f := range old.Files {
		if f.Kind != contract.Deferred || f.Source != src {
			files = append(files, f)
		}
	}
	old.Files = files
}

// linkOf is the target a moved symlink keeps; "" for anything else.
func linkOf(e *archive.Entry) string {
	if e.Type == archive.TypeSymlink {
		return e.Linkname
	}
	return ""
}

// sumOf is what the index records of a moved entry's content: a file's
// data, or a symlink's target (as check locks it).
func sumOf(c *captured, e *archive.Entry) string {
	if e.Type == archive.TypeSymlink {
		return digest.Bytes([]byte(e.Linkname))
	}
	return c.data.sum
}
