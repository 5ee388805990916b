package trim

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// captured is an entry that apply removed from its place and writes again
// elsewhere: relocated and deferred files.
type captured struct {
	entry   *archive.Entry
	verdict *Verdict
	data    *spool
}

// injection is an entry apply adds to the output.
type injection struct {
	entry  *archive.Entry // Name is the cleaned path
	data   func() (io.Reader, error)
	change manifest.Change
	// unchanged marks a file an earlier apply wrote with this very content:
	// not a change to report.
	unchanged bool
	// captured marks a relocated or deferred input entry: it keeps its
	// inode number.
	captured bool
}

// tree answers what the output holds apart from the injections.
type tree interface {
	exists(path string) bool
	isDir(path string) bool
}

// planInjections decides everything apply adds: relocated files at their
// destination, deferred copies, the files of the packages active says are
// in the image, templates, the index, and the parent directories they
// need, refusing collisions with what the output already holds.
//
// What apply adds comes last, in two groups: what it moved, with the
// directories anything added needs, then what it writes itself (added
// files, templates, the index). A second run finds the first group in
// place, as ordinary entries, and writes the second again, identically:
// applying to an applied image gives back the same bytes. The index also
// records what was removed and relocated: a later run knows those rules
// were applied rather than stale.
func planInjections(in planInput) ([]*injection, []manifest.Change, error) {
	p := &planner{planInput: in, claimed: map[string]string{}, restored: map[string]string{}, ours: map[string]string{}}
	p.index = &contract.Index{Version: contract.IndexVersion, RulesDigest: in.set.Digest, Policy: indexPolicy(in.set)}
	p.keepEarlier()
	for _, c := range in.removed {
		p.index.Files = append(p.index.Files, contract.IndexFile{Kind: c.Kind, Name: c.Rule, Source: c.Path,
			Mode: c.Mode, SHA256: c.SHA256})
	}
	// What moved: each action's writer (actions.go) places it.
	for _, c := range in.caps {
		change := changeFor(c.entry, c.verdict, in.owners)
		change.Size, change.SHA256 = c.data.size, c.data.sum
		spec := Actions[c.verdict.Rule.Action]
		change.Kind = spec.Kind
		spec.place(p, c, c.entry.Clone(), change)
	}
	p.addFiles()
	p.addTemplates()
	p.index.Owners = in.owners.ForIndex(in.kept, p.placed())
	// Deferred copies whose destination is still in the image would be
	// shadowed or clobbered at boot: refuse them like templates.
	for _, f := range p.index.Files {
		if f.Kind == contract.Deferred && in.out.exists(f.Dest) {
			p.problems = append(p.problems, fmt.Sprintf("deferred %s: the image still holds %s", names.Quote(f.Source), names.Quote(f.Dest)))
		}
	}
	if err := p.addIndex(); err != nil {
		return nil, nil, err
	}
	if len(p.problems) > 0 {
		sort.Strings(p.problems)
		return nil, nil, &PlanError{Problems: p.problems}
	}
	inj, err := p.layout()
	if err != nil {
		return nil, nil, err
	}
	return inj, p.dropped, nil
}

// keepEarlier carries over an earlier apply's index (old): what an action
// did stays recorded as its row says, and may keep its path claimed; what
// apply writes itself is written again, and ours remembers what that
// apply wrote where.
func (p *planner) keepEarlier() {
	if p.old == nil {
		return
	}
	for _, f := range p.old.Files {
		p.ours[f.Source] = f.SHA256
		spec := specOfKind(f.Kind)
		if spec == nil {
			continue
		}
		keep, claim := spec.KeepOnReapply(f, p.out)
		if keep {
			p.index.Files = append(p.index.Files, f)
		}
		if claim {
			p.claimed[f.Source] = "an earlier apply"
		}
	}
}

// mayWrite decides about a path of the second group that the input
// already has: the same content, or what an earlier apply wrote, is ours
// to write again; anything else belongs to a package.
func (p *planner) mayWrite(path string, data []byte, what string) bool {
	have, ok := p.own[path]
	if !ok {
		return true
	}
	if have == digest.Bytes(data) || have == p.ours[path] || strings.HasPrefix(path, contract.TemplateDir+"/") || path == contract.IndexPath {
		return true
	}
	p.problems = append(p.problems, fmt.Sprintf("%s: the image already has that file with other content; refusing to overwrite what package %s shipped", what, names.Quote(p.owners.Owner(path))))
	return false
}

// addFiles adds the rule set's files of the packages in the image.
func (p *planner) addFiles() {
	for _, a := range p.set.Additions() {
		if a.Package == rules.SelfPackage && !p.hasRuntime() || a.Package != rules.SelfPackage && !p.active(a.Package) {
			continue
		}
		if p.out.exists(a.Path) {
			p.problems = append(p.problems, fmt.Sprintf("add %s (%s): the image already has that path; refusing to overwrite what package %s shipped", a.Path, a.Pos, names.Quote(p.owners.Owner(a.Path))))
			continue
		}
		if !p.claim(a.Path, "add at "+a.Pos.String()) {
			continue
		}
		// What the rules held when loaded, read beneath their directory.
		data := a.Data
		if !p.mayWrite(a.Path, data, fmt.Sprintf("add %s (%s)", a.Path, a.Pos)) {
			continue
		}
		p.index.Files = append(p.index.Files, contract.IndexFile{Kind: contract.Added, Name: a.Package, Source: a.Path, Dest: a.Path,
			Mode: fmt.Sprintf("%04o", a.Mode), SHA256: digest.Bytes(data)})
		p.written = append(p.written, fileInjection(a.Path, data, a.Mode, p.epoch, manifest.Change{
			Kind: contract.Added, Path: a.Path, Package: a.Package, Reason: a.Reason}))
	}
}

// hasRuntime reports whether the output is a whole image that holds a
// runtime's unit: only there does boot_runtime's preset file belong.
func (p *planner) hasRuntime() bool {
	if p.owners.Fixed != "" {
		return false
	}
	for _, units := range contract.RuntimeUnits {
		for _, u := range units {
			for _, dir := range enablement.UnitDirs {
				// Kept, or moved there by this apply (a unit relocated out
				// of usr/local/lib).
				if name := dir + "/" + u; p.out.exists(name) || p.claimed[name] != "" {
					return true
				}
			}
		}
	}
	return false
}

// addTemplates adds the templates the boot step renders. They belong to
// a whole image; a single package's tree or tarball (--package) gets none.
func (p *planner) addTemplates() {
	if p.owners.Fixed != "" {
		return
	}
	for _, t := range p.set.Templates {
		dest := contract.TemplateDir + "/" + t.Name + ".tmpl"
		if p.out.exists(t.Dest) || p.claimed[t.Dest] != "" {
			p.problems = append(p.problems, fmt.Sprintf("template %s (%s): the image still holds %s, which the boot step is meant to write; strip it with a rule", t.Name, t.Pos, t.Dest))
			continue
		}
		if !p.claim(dest, "template "+t.Name) {
			continue
		}
		data := t.Data
		p.written = append(p.written, fileInjection(dest, data, 0o644, p.epoch, manifest.Change{
			Kind: contract.Template, Path: dest, To: t.Dest, Package: "rootfs-trim", Rule: t.Name, Reason: t.Reason}))
		p.index.Files = append(p.index.Files, contract.IndexFile{
			Kind: contract.Template, Name: t.Name, Source: dest, Dest: t.Dest,
			When: contract.Condition{Runtimes: t.When.Runtimes, CNIs: t.When.CNIs},
			Mode: fmt.Sprintf("%04o", t.Mode), SHA256: digest.Bytes(data),
		})
	}
}

// addIndex adds the index, if it records anything.
func (p *planner) addIndex() error {
	p.index.Files = dedupIndex(p.index.Files)
	if len(p.index.Files) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := p.index.Encode(&buf); err != nil {
		return err
	}
	if p.claim(contract.IndexPath, "the index") {
		p.written = append(p.written, fileInjection(contract.IndexPath, buf.Bytes(), 0o644, p.epoch, manifest.Change{
			Kind: contract.Added, Path: contract.IndexPath, Package: "rootfs-trim", Reason: "index of deferred files and templates for the boot step"}))
	}
	return nil
}

// placed are the files apply puts in the output (moved ones, added
// ones, templates), which an apply of that output finds kept.
func (p *planner) placed() map[string]bool {
	m := map[string]bool{}
	for _, in := range append(append([]*injection{}, p.inj...), p.written...) {
		if in.entry.Type != archive.TypeDir {
			m[in.entry.Name] = true
		}
	}
	return m
}

// layout orders what apply adds: the first group by name with the
// directories either group needs, parents first, as the kernel needs;
// then the second group by name. Nothing added may be what the policy
// forbids.
func (p *planner) layout() ([]*injection, error) {
	byName(p.inj)
	byName(p.written)
	withParents, err := p.parents()
	if err != nil {
		return nil, err
	}
	withParents = append(withParents, p.inj...)
	byName(withParents)
	// A directory's link count is 2 and one per subdirectory, all of them
	// added too: it did not exist before.
	subdirs := map[string]uint32{}
	for _, in := range withParents {
		if in.entry.Type == archive.TypeDir {
			subdirs[path.Dir(in.entry.Name)]++
		}
	}
	for _, in := range withParents {
		if in.entry.Type == archive.TypeDir {
			in.entry.Nlink = 2 + subdirs[in.entry.Name]
		}
	}
	withParents = append(withParents, p.written...)
	for _, in := range withParents {
		if p.own[in.entry.Name] == in.change.SHA256 && in.change.SHA256 != "" {
			in.unchanged = true
		}
		if hits := p.set.ForbiddenBy(in.entry.Name, EntryType(in.entry.Type), in.entry.Linkname); len(hits) > 0 {
			return nil, &PlanError{Problems: []string{fmt.Sprintf("%s: would be added, but policy %s forbids it", names.Quote(in.entry.Name), hits[0].Name)}}
		}
	}
	return withParents, nil
}

// parents are the directories missing above what apply adds, each
// before its own.
func (p *planner) parents() ([]*injection, error) {
	var dirs []*injection
	made := map[string]bool{}
	for _, in := range append(append([]*injection{}, p.inj...), p.written...) {
		var missing []string
		for d := path.Dir(in.entry.Name); d != "." && !p.out.isDir(d) && !made[d]; d = path.Dir(d) {
			if p.out.exists(d) {
				return nil, &PlanError{Problems: []string{fmt.Sprintf("%s: parent %s exists and is not a directory", names.Quote(in.entry.Name), names.Quote(d))}}
			}
			missing = append(missing, d)
		}
		for i := len(missing) - 1; i >= 0; i-- {
			made[missing[i]] = true
			dirs = append(dirs, dirInjection(missing[i], p.epoch, manifest.Change{
				Kind: contract.Created, Path: missing[i], Package: "rootfs-trim", Reason: "parent of " + in.entry.Name}))
		}
	}
	return dirs, nil
}

func byName(l []*injection) {
	sort.Slice(l, func(i, j int) bool { return l[i].entry.Name < l[j].entry.Name })
}

// dedupIndex keeps one record per (kind, source, destination), the last:
// with Buildroot's per-package directories a package's files come back on
// every make, are removed or moved again, and must not be recorded twice.
func dedupIndex(files []contract.IndexFile) []contract.IndexFile {
	type key struct {
		kind         contract.Kind
		source, dest string
	}
	last := map[key]int{}
	for i, f := range files {
		last[key{f.Kind, f.Source, f.Dest}] = i
	}
	var out []contract.IndexFile
	for i, f := range files {
		if last[key{f.Kind, f.Source, f.Dest}] == i {
			out = append(out, f)
		}
	}
	return out
}

func indexPolicy(set *rules.Set) []contract.IndexPolicy {
	var out []contract.IndexPolicy
	for _, f := range set.Policy {
		p := contract.IndexPolicy{Name: f.Name, AtBoot: "report"}
		if f.RemoveAtBoot {
			p.AtBoot = "remove"
		}
		for _, g := range f.Paths {
			p.Forbid = append(p.Forbid, g.String())
		}
		for _, g := range f.Allow {
			p.Allow = append(p.Allow, g.String())
		}
		for _, t := range f.Types {
			p.Types = append(p.Types, string(t))
		}
		for _, g := range f.AllowTargets {
			p.AllowTargets = append(p.AllowTargets, g.String())
		}
		out = append(out, p)
	}
	return out
}

// PlanError lists why apply refuses to go on; nothing has been written.
type PlanError struct {
	Problems []string
}

func (e *PlanError) Error() string {
	return "refusing to apply:\n  " + strings.Join(e.Problems, "\n  ")
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func fileInjection(name string, data []byte, mode uint32, epoch time.Time, change manifest.Change) *injection {
	e := &archive.Entry{Name: name, Type: archive.TypeRegular, Mode: mode, ModTime: epoch, Size: int64(len(data)), Nlink: 1, Offset: -1}
	change.Type, change.Size, change.Mode, change.SHA256 = "file", e.Size, fmt.Sprintf("%04o", mode), digest.Bytes(data)
	return &injection{entry: e, data: func() (io.Reader, error) { return bytes.NewReader(data), nil }, change: change}
}

func dirInjection(name string, epoch time.Time, change manifest.Change) *injection {
	e := &archive.Entry{Name: name, Type: archive.TypeDir, Mode: 0o755, ModTime: epoch, Nlink: 2, Offset: -1}
	change.Type, change.Mode = "dir", "0755"
	return &injection{entry: e, data: func() (io.Reader, error) { return bytes.NewReader(nil), nil }, change: change}
}

// changeFor describes, for the manifest, what happens to e.
func changeFor(e *archive.Entry, v *Verdict, owners *owners.Table) manifest.Change {
	c := manifest.Change{Path: v.Path, Type: e.Type.String(), Package: v.Owner(owners),
		Size: e.Size, Mode: fmt.Sprintf("%04o", e.Mode)}
	if v.Rule != nil {
		c.Rule, c.Reason, c.Unreviewed = v.Rule.Name, ruleReason(v), v.Unreviewed()
	}
	if e.Type == archive.TypeSymlink {
		c.Size = int64(len(e.Linkname))
	}
	return c
}
