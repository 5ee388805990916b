package check

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// The checks of `check`, in the [name] style of the other findings.
const (
	CheckNewOffender    = "new-offender"     // policy violation no rule handles
	CheckStale          = trim.CheckStale    // must-match rule that matched nothing
	CheckContentChanged = "content-changed"  // a deferred file differs from the lock
	CheckValueChanged   = "value-changed"    // an edit rule's key reads otherwise than the lock says
	CheckMissing        = "missing-package"  // in the lock, not in the inputs
	CheckUnlocked       = "unlocked-package" // in the inputs, not in the lock
	CheckStaleWaiver    = "stale-waiver"     // a waiver for a problem that is gone
	CheckNewHandled     = "new-file"         // a new offending file that a rule handles
	CheckGone           = "file-gone"        // a locked file the package no longer ships
	CheckVersion        = "version"          // the package version changed
	// CheckModuleVersion: a Go binary's main module, read from its build
	// information, changed version. No package manager gates a tarball's
	// bump, so check does: an error until --update-lock accepts it.
	CheckModuleVersion = "module-version"
	// CheckContradicted: an owners list names a version that the Go
	// build information of a binary it lists contradicts.
	CheckContradicted = "version-contradicted"
)

// Input is one thing to check: a package's tree or archive (Package set),
// or a whole target with its packages-file-list.txt (FileList set), or
// a whole root whose owners the caller read (Owners set: an image's or a
// tree's own dpkg database).
type Input struct {
	Path     string
	Source   container.Source // opens it
	Package  string
	FileList string
	Version  string
	// Image: a whole image whose owners and versions are its own dpkg
	// database and owners lists (owners.Load): kicbase.
	Image bool
}

// Options configures Run.
type Options struct {
	Set          *rules.Set
	Lock         *Lock
	Inputs       []Input
	Versions     map[string]string // package -> version, from flags or show-info
	AllowMissing bool              // packages of the lock absent from the inputs are fine
	AllowNew     bool              // packages absent from the lock are fine
	Wrap         func(archive.Reader) archive.Reader
	Open         container.OpenOptions
}

// Finding is a check finding; Diff holds a unified diff for content changes.
type Finding struct {
	trim.Finding
	Diff string `json:"diff,omitempty"`
	// SeenAs: as in Summary.
	SeenAs []string `json:"seen_as,omitempty"`
}

// Summary is one package's line.
type Summary struct {
	Package    string `json:"package"`
	Version    string `json:"version,omitempty"`
	OldVersion string `json:"old_version,omitempty"`
	Files      int    `json:"files"` // offending files, handled or not
	// Handled is how many of Files a package's rule handles (not the
	// fallback): what the text summary calls handled.
	Handled  int `json:"handled"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	// SeenAs lists the names the inputs gave the package where they are
	// not the rule file's (the lock's key): an alias such as
	// containerd-bin-aarch64.
	SeenAs []string `json:"seen_as,omitempty"`
}

// Result is the outcome of a check.
type Result struct {
	Findings []Finding
	Packages []Summary
	// NewLock is the state of the inputs, to write with --update-lock.
	NewLock *Lock
}

// Failed reports whether any finding is an error.
func (r *Result) Failed() bool {
	for _, f := range r.Findings {
		if f.Severity == rules.Error {
			return true
		}
	}
	return false
}

// Unacceptable returns what --update-lock must not accept: new offenders,
// files no package rule names (only the fallback handles them, or
// nothing), and what a runtime's config says against the site (configs:),
// which no lock records. A lock records reviewed package rules; until one
// names the file, every check fails on it.
func (r *Result) Unacceptable() *Result {
	out := &Result{}
	for _, f := range r.Findings {
		if f.Check == CheckNewOffender || f.Check == trim.CheckOverride || f.Check == trim.CheckCNIDir {
			out.Findings = append(out.Findings, f)
		}
	}
	return out
}

type pkgState struct {
	name    string
	version string
	files   map[string]*LockFile
	matched map[*rules.Rule]int
	seen    map[string]bool // the names the inputs used (see canonical)
	// module is the Go module, named by a binary's build information,
	// whose version this is; "" for a package.
	module string
}

// Run checks the inputs against the lock.
func Run(opt Options) (*Result, error) {
	if opt.Open.ImageData == nil && opt.Set != nil {
		opt.Open.ImageData = trim.ImageData(opt.Set)
	}
	lock, err := foldLock(opt.Set, opt.Lock)
	if err != nil {
		return nil, err
	}
	opt.Lock = lock
	states := map[string]*pkgState{}
	state := func(seen string) *pkgState {
		name := canonical(opt.Set, seen)
		s := states[name]
		if s == nil {
			s = &pkgState{name: name, files: map[string]*LockFile{}, matched: map[*rules.Rule]int{}, seen: map[string]bool{}}
			states[name] = s
		}
		s.seen[seen] = true
		return s
	}
	inputOf := map[string]string{}
	var enabled []Finding // runtimeFindings
	records := imageRecords{versions: map[string]string{}, modules: map[string]string{}}
	var configFound []trim.Finding // what the rule set's configs: make of each input
	for _, in := range opt.Inputs {
		owners, db, err := inputOwners(opt, in)
		if err != nil {
			return nil, err
		}
		for _, m := range records.add(opt.Set, in.Path, db) {
			s := state(m)
			s.module = m
			inputOf[s.name] = in.Path
		}
		if in.FileList != "" || in.Image {
			// Every package of the target that has rules is checked, even
			// with nothing to match: that is how its rules go stale.
			for _, p := range owners.Packages() {
				if opt.Set.Lookup(p) != nil {
					inputOf[state(p).name] = in.Path
				}
			}
		} else {
			owners.Fixed = in.Package
			s := state(in.Package)
			inputOf[s.name] = in.Path
			if in.Version != "" {
				s.version = in.Version
			}
		}
		found, runtimes, err := scanWithRuntimes(opt, in, owners, state)
		if err != nil {
			return nil, err
		}
		configFound = append(configFound, found...)
		enabled = append(enabled, runtimes...)
	}
	// The image's own records first (dpkg's status, the owners lists'
	// .version files), then the flags and show-info over them.
	setVersions(opt.Set, states, records.versions, records.modules, opt.Versions)

	res := &Result{NewLock: &Lock{Version: LockVersion, Packages: map[string]*LockPackage{}}, Findings: append(records.contradicted, enabled...)}
	names := make([]string, 0, len(states))
	for n := range states {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		s := states[name]
		lp := &LockPackage{Version: s.version}
		for _, f := range s.files {
			lp.Files = append(lp.Files, *f)
		}
		res.NewLock.Packages[name] = lp
		res.compare(opt, s, opt.Lock.Packages[name], inputOf[name])
	}
	res.keepMissing(opt, states)
	for _, f := range configFound {
		res.add(Finding{Finding: f})
	}
	res.summarise(names, opt.Lock)
	for i := range res.Packages {
		res.Packages[i].SeenAs = states[res.Packages[i].Package].seenAs()
	}
	for i := range res.Findings {
		if s := states[res.Findings[i].Package]; s != nil {
			res.Findings[i].SeenAs = s.seenAs()
		}
	}
	return res, nil
}

// keepMissing carries the lock's packages that no input showed into the
// new lock, each with a finding (a note under --allow-missing).
func (res *Result) keepMissing(opt Options, states map[string]*pkgState) {
	var missing []string
	for name := range opt.Lock.Packages {
		if states[name] == nil {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		// Keep what we cannot see: --update-lock with a subset of the
		// packages must not forget the others.
		res.NewLock.Packages[name] = opt.Lock.Packages[name]
		sev := rules.Error
		if opt.AllowMissing {
			sev = rules.Note
		}
		res.add(Finding{Finding: trim.Finding{Package: name, Severity: sev, Check: CheckMissing,
			Reason: "in the lock but in none of the inputs (pass --allow-missing when checking a subset)"}})
	}
}

// inputOwners returns who installed what in a whole target (Buildroot's
// file list) or image (its dpkg database, owners lists and Go binaries,
// db, with the versions they record); an empty table for one package's
// input.
func inputOwners(opt Options, in Input) (*owners.Table, *owners.DB, error) {
	table := owners.New()
	switch {
	case in.FileList != "":
		err := table.ReadFileList(in.FileList)
		return table, nil, err
	case in.Image:
		db, err := owners.Load(in.Path, opt.Open)
		if err != nil {
			return nil, nil, err
		}
		if db == nil {
			return nil, nil, fmt.Errorf("%s: no dpkg database (%s) and no %s in it: give --packages-file-list for a Buildroot target, or NAME=PATH for one package", in.Path, owners.DpkgInfoDir, owners.ListsDir)
		}
		return db.Owners, db, nil
	}
	return table, nil, nil
}

// imageRecords are what the images' own records say besides owners:
// their packages' versions, their Go modules' and the contradictions
// between the two.
type imageRecords struct {
	versions, modules map[string]string
	contradicted      []Finding
}

// add takes db, input's records (nil for none), and returns its modules:
// every one is locked, rules or none, as its version is what check gates.
func (r *imageRecords) add(set *rules.Set, input string, db *owners.DB) []string {
	if db == nil {
		return nil
	}
	maps.Copy(r.versions, db.Versions)
	maps.Copy(r.modules, db.Modules)
	r.contradicted = append(r.contradicted, contradictions(set, input, db)...)
	return slices.Sorted(maps.Keys(db.Modules))
}

// contradictions are the findings of the binaries of input whose owners
// list names a version their Go build information contradicts.
func contradictions(set *rules.Set, input string, db *owners.DB) []Finding {
	var out []Finding
	for _, c := range db.Contradictions {
		out = append(out, Finding{Finding: trim.Finding{Input: input, Path: c.Path, Package: canonical(set, c.Package), Severity: rules.Error, Check: CheckContradicted,
			Reason: fmt.Sprintf("the owners list says version %s, the binary's Go build information %s %s: fix the list's .version", c.Listed, c.Module, c.Version)}})
	}
	return out
}

// setVersions gives each package its version from the sources, a later
// source's over an earlier's. Within one source, the aliases in name
// order and then the package's own name, so that where two of them give
// different versions the lock is the same from run to run, and the rule
// file's name wins.
func setVersions(set *rules.Set, states map[string]*pkgState, sources ...map[string]string) {
	for _, versions := range sources {
		order := slices.Sorted(maps.Keys(versions))
		slices.SortStableFunc(order, func(a, b string) int {
			return cmp.Compare(b2i(a == canonical(set, a)), b2i(b == canonical(set, b)))
		})
		for _, name := range order {
			v := versions[name]
			if s := states[canonical(set, name)]; s != nil && v != "" && (s.seen[name] || name == s.name && s.version == "") {
				s.version = v
			}
		}
	}
}

// scan reads one input and records every file a rule or the policy
// matches; boot gathers what enablement reads.
func scan(opt Options, in Input, owners *owners.Table, state func(string) *pkgState, boot *enablement.Collector) ([]trim.Finding, error) {
	src, err := in.Source()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var r archive.Reader = src
	if opt.Wrap != nil {
		r = opt.Wrap(src)
	}
	r = boot.Wrap(r)
	// check reads package trees, not applied images: no path is apply's own.
	d := trim.NewDecider(opt.Set, owners, nil)
	d.SetInput(src.Format.Kind)
	files := newLockedFiles()
	configs := trim.NewConfigFiles(opt.Set)
	for {
		e, err := r.Next()
		if err == io.EOF {
			return configs.Findings(in.Path, owners), nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Path, err)
		}
		dec, err := d.Decide(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Path, err)
		}
		if dec.Skip {
			continue
		}
		data, err := configs.Note(e, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Path, err)
		}
		v := dec.Verdict
		offending := v.Offending() && v.Kept == nil
		content, read, err := files.wrote(dec, e, data, offending)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", in.Path, names.Quote(e.Name), err)
		}
		if !offending {
			continue
		}
		owner := v.Owner(owners)
		s := state(owner)
		lf := &LockFile{Path: v.Path, Mode: fmt.Sprintf("%04o", e.Mode), Type: e.Type.String()}
		if img := src.Image(); img != nil {
			lf.layer = img.LayerOf(v.Path)
		}
		switch {
		case v.Unreviewed():
			lf.fallback = v.Rule.Name
		case v.Rule != nil:
			lf.Rule, lf.Action = v.Rule.Name, v.Rule.Action.String()
			s.matched[v.Rule]++
		}
		if len(v.Forbidden) > 0 {
			lf.Policy = v.Forbidden[0].Name
		}
		if v.Alias != "" {
			lf.seenAs = fmt.Sprintf("the booted system sees it as %s, through the symlink %s", names.Quote(v.Alias), v.Through)
		}
		n := &lockedName{lf: lf, locksContent: dec.Spec != nil && dec.Spec.LocksContent}
		if dec.Spec != nil && dec.Spec.Judge != nil && v.Rule != nil {
			n.judged = v.Rule
		}
		// A hard-link member without data has its group's content, in
		// the member that carried it or later (files).
		if c, ok := files.add(dec.File, n); ok && !read {
			content, read = c, true
		}
		switch {
		case read:
		case e.Type == archive.TypeRegular:
			if content, err = readCapped(data, e.Size); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", in.Path, names.Quote(e.Name), err)
			}
		case e.Type == archive.TypeSymlink:
			content = []byte(e.Linkname)
		}
		n.set(content)
		s.files[v.Path] = lf
	}
}

// readCapped reads an entry's data; large files are hashed by streaming,
// so only what fits the lock is kept whole.
func readCapped(r io.Reader, size int64) ([]byte, error) {
	if size <= maxLockedContent {
		return io.ReadAll(r)
	}
	sum, err := digest.Reader(r)
	if err != nil {
		return nil, err
	}
	// The caller hashes what it gets; give it something unique to hash.
	return []byte("sha256:" + sum), nil
}

func (res *Result) add(f Finding) { res.Findings = append(res.Findings, f) }

func (res *Result) compare(opt Options, s *pkgState, locked *LockPackage, input string) {
	pkg := opt.Set.Lookup(s.name)
	if locked == nil {
		sev := rules.Error
		if opt.AllowNew {
			sev = rules.Note
		}
		res.add(Finding{Finding: trim.Finding{Input: input, Package: s.name, Severity: sev, Check: CheckUnlocked,
			Reason: "not in the lock: review its files, then run check --update-lock (or pass --allow-new)"}})
		locked = &LockPackage{}
	} else if locked.Version != s.version && locked.Version != "" && s.version != "" && s.module != "" {
		res.add(Finding{Finding: trim.Finding{Input: input, Package: s.name, Severity: rules.Error, Check: CheckModuleVersion,
			Reason: fmt.Sprintf("module %s: version %s -> %s (its binaries' Go build information): review, then check --update-lock", s.module, locked.Version, s.version)}})
	} else if locked.Version != s.version && locked.Version != "" && s.version != "" {
		res.add(Finding{Finding: trim.Finding{Input: input, Package: s.name, Severity: rules.Note, Check: CheckVersion,
			Reason: fmt.Sprintf("version %s -> %s", locked.Version, s.version)}})
	}
	waived := map[*rules.Rule]bool{}
	paths := make([]string, 0, len(s.files))
	for p := range s.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ruleOf := func(name string) *rules.Rule {
		for _, r := range opt.Set.Rules() {
			if r.Name == name {
				return r
			}
		}
		return nil
	}
	for _, p := range paths {
		f := s.files[p]
		base := trim.Finding{Input: input, Path: p, Type: f.Type, Package: s.name, Rule: f.Rule, Action: f.Action, Policy: f.Policy, Layer: f.layer}
		if f.Rule == "" {
			pos := rules.Pos{}
			for _, pol := range opt.Set.Policy {
				if pol.Name == f.Policy {
					pos = pol.Pos
				}
			}
			base.Severity, base.Check, base.Pos = rules.Error, CheckNewOffender, pos
			base.Reason = "violates policy " + f.Policy + " and no rule of package " + s.name + " handles it"
			if f.fallback != "" {
				base.Reason += " (only the fallback rule " + f.fallback + ")"
			}
			if f.seenAs != "" {
				base.Reason += ": " + f.seenAs
			}
			res.add(Finding{Finding: base})
			continue
		}
		r := ruleOf(f.Rule)
		base.Pos = r.Pos
		old := locked.file(p)
		if old == nil {
			base.Severity, base.Check = rules.Note, CheckNewHandled
			base.Reason = "newly shipped; rule " + f.Rule + " will " + f.Action + " it"
			res.add(Finding{Finding: base})
			continue
		}
		if trim.Actions[r.Action].Judge != nil && old.Content != f.Content {
			base.Severity, base.Check, base.Key = rules.Error, CheckValueChanged, r.Edit.Key.String()
			base.Value = strings.TrimPrefix(strings.TrimSpace(f.Content), base.Key+" = ")
			base.Reason = fmt.Sprintf("what rule %s reads changed upstream: %s (locked: %s); review, then --update-lock",
				r.Name, strings.TrimSpace(f.Content), strings.TrimSpace(old.Content))
			res.add(Finding{Finding: base, Diff: unifiedDiff("locked/"+p, "input/"+p, old.Content, f.Content)})
		}
		if trim.Actions[r.Action].LocksContent && old.SHA256 != f.SHA256 {
			base.Severity, base.Check = rules.Error, CheckContentChanged
			base.Reason = "the deferred copy changed upstream; review the boot templates and conditions, then --update-lock"
			if r.Waiver != "" {
				base.Severity = rules.Warning
				base.Reason = "waived: " + r.Waiver
				waived[r] = true
			}
			diff := ""
			if old.Content != "" && f.Content != "" {
				diff = unifiedDiff("locked/"+p, "input/"+p, old.Content, f.Content)
			}
			res.add(Finding{Finding: base, Diff: diff})
		}
	}
	for _, old := range locked.Files {
		if s.files[old.Path] == nil {
			res.add(Finding{Finding: trim.Finding{Input: input, Path: old.Path, Package: s.name, Rule: old.Rule, Severity: rules.Note, Check: CheckGone,
				Reason: "in the lock, no longer shipped"}})
		}
	}
	if pkg != nil {
		res.compareRules(pkg, s, input, waived)
	}
}

// compareRules reports the package's rules that matched nothing and its
// waivers that waived nothing (waived: the rules whose waiver did).
func (res *Result) compareRules(pkg *rules.Package, s *pkgState, input string, waived map[*rules.Rule]bool) {
	for _, r := range pkg.Rules {
		if !r.MustMatch || s.matched[r] > 0 {
			continue
		}
		f := trim.Finding{Input: input, Package: s.name, Rule: r.Name, Action: r.Action.String(), Severity: rules.Error, Check: CheckStale, Pos: r.Pos,
			Reason: "matched nothing: the file it handles is gone or renamed, so it protects nothing any more"}
		if r.Waiver != "" {
			f.Severity, f.Reason = rules.Warning, "waived: "+r.Waiver
			waived[r] = true
		} else if r.StaleReason != "" {
			// Expected of some versions of the package: say why,
			// and do not fail the build.
			f.Severity, f.Reason = rules.Warning, "matched nothing: "+r.StaleReason
		}
		res.add(Finding{Finding: f})
	}
	for _, r := range pkg.Rules {
		if r.Waiver != "" && !waived[r] {
			res.add(Finding{Finding: trim.Finding{Input: input, Package: s.name, Rule: r.Name, Severity: rules.Error, Check: CheckStaleWaiver, Pos: r.Pos,
				Reason: "the waiver (" + r.Waiver + ") no longer applies: the problem is gone; remove waive:"}})
		}
	}
}

func (res *Result) summarise(names []string, lock *Lock) {
	for _, name := range names {
		s := Summary{Package: name, Version: res.NewLock.Packages[name].Version, Files: len(res.NewLock.Packages[name].Files)}
		for _, f := range res.NewLock.Packages[name].Files {
			if f.Rule != "" {
				s.Handled++
			}
		}
		if old := lock.Packages[name]; old != nil {
			s.OldVersion = old.Version
		}
		for _, f := range res.Findings {
			if f.Package != name {
				continue
			}
			switch f.Severity {
			case rules.Error:
				s.Errors++
			case rules.Warning:
				s.Warnings++
			}
		}
		res.Packages = append(res.Packages, s)
	}
}

// Changes lists, one line each, how the new lock differs from the old.
func Changes(old, new *Lock) []string {
	var out []string
	pkgs := map[string]bool{}
	for n := range old.Packages {
		pkgs[n] = true
	}
	for n := range new.Packages {
		pkgs[n] = true
	}
	sorted := make([]string, 0, len(pkgs))
	for n := range pkgs {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		o, nw := old.Packages[n], new.Packages[n]
		switch {
		case o == nil:
			out = append(out, fmt.Sprintf("+ package %s %s (%d files)", n, nw.Version, len(nw.Files)))
			continue
		case nw == nil:
			out = append(out, fmt.Sprintf("- package %s", n))
			continue
		}
		if o.Version != nw.Version {
			out = append(out, fmt.Sprintf("~ package %s: version %s -> %s", n, o.Version, nw.Version))
		}
		for _, f := range nw.Files {
			of := o.file(f.Path)
			switch {
			case of == nil:
				out = append(out, fmt.Sprintf("+ %s: %s (%s)", n, names.Quote(f.Path), ruleOrPolicy(f)))
			case of.SHA256 != f.SHA256 || of.Mode != f.Mode || of.Rule != f.Rule:
				out = append(out, fmt.Sprintf("~ %s: %s (%s)", n, names.Quote(f.Path), ruleOrPolicy(f)))
			}
		}
		for _, f := range o.Files {
			if nw.file(f.Path) == nil {
				out = append(out, fmt.Sprintf("- %s: %s", n, names.Quote(f.Path)))
			}
		}
	}
	return out
}

func ruleOrPolicy(f LockFile) string {
	if f.Rule != "" {
		return "rule " + f.Rule
	}
	return "policy " + f.Policy + ", no rule"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
