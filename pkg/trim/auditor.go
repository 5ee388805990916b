package trim

import (
	"cmp"
	"fmt"
	"io"
	"sort"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// Auditor is audit's step on one input, entry by entry, for a caller that
// reads the input itself and wants more of each entry than its findings
// (diff hashes every entry in the same pass).
type Auditor struct {
	d       *Decider
	configs *ConfigFiles
	input   string
	found   []Finding
	// Entries counts the entries seen, trailers left out.
	Entries int
	// Index is an applied image's index, once its entry has been read.
	Index *contract.Index
	// at maps where a finding's entry landed to the finding: a later
	// entry that lands there replaces it in the tree the consumer
	// unpacks (the kernel's clean_path in init/initramfs.c do_name and
	// do_symlink unlinks what is there, or writes a regular file in
	// place), so that finding is not what boots: gone says so.
	at   map[string]int
	gone map[int]bool
	// placeOf says where in the input an entry of a segment came from
	// (container.Input.PlaceOf), for Finding.Initrd; nil says nothing.
	placeOf func(int) *container.Place
}

// NewAuditor returns the audit of in, which the caller reads; kind is the
// input's format, which says where each entry lands (archive.Resolver).
func NewAuditor(set *rules.Set, in AuditInput, kind archive.Kind) *Auditor {
	d := NewDecider(set, in.Owners, map[string]bool{contract.IndexPath: true})
	d.SetInput(kind)
	return &Auditor{d: d, configs: NewConfigFiles(set), input: in.Path, at: map[string]int{}, gone: map[int]bool{}}
}

// Entry audits e, whose data the caller has not read yet: data is read
// only for an applied image's index and a file a rule judges by its
// content (ActionSpec.Judge). The Decision tells what the rules
// make of e (Skip for a trailer, Own for the index).
func (a *Auditor) Entry(e *archive.Entry, data io.Reader) (Decision, error) {
	dec, err := a.d.Decide(e)
	if err != nil || dec.Skip {
		return dec, err
	}
	if data, err = a.configs.Note(e, data); err != nil {
		return dec, err
	}
	a.Entries++
	if v := dec.Verdict; v != nil {
		if i, ok := a.at[v.land.Path]; ok { // its finding's entry is replaced (at)
			a.gone[i] = true
			delete(a.at, v.land.Path)
		}
	}
	if dec.Own {
		// An applied image: its index says which rules already did
		// their work, so they are not stale. Audit only reads: an
		// index it cannot decode is left unread.
		a.Index, _ = a.d.noteIndex(data)
		return dec, nil
	}
	if v := dec.Verdict; v.Offending() && v.Kept == nil {
		f := findingFor(v, a.d.Owners)
		if spec := dec.Spec; spec != nil && spec.Judge != nil && v.Rule != nil {
			res, err := judged(spec.Judge, v.Rule, data)
			switch {
			case err != nil:
				f.Severity, f.Reason = rules.Error, fmt.Sprintf("rule %s cannot read it: %v", v.Rule.Name, err)
			case res.Out == nil && len(v.Forbidden) == 0:
				return dec, nil // nothing to change
			}
			f.Key, f.Value = v.Rule.Edit.Key.String(), res.Show()
		}
		f.Input, f.segment = a.input, e.Segment
		a.found = append(a.found, f)
		if at := v.land.Path; at != "" {
			a.at[at] = len(a.found) - 1
		}
	}
	return dec, nil
}

// Findings returns the input's findings by path, dangling links included:
// call it after the last entry.
//
// They are what the consumer's final tree holds (archive.Resolver): an
// entry a later one replaced, as a later initrd segment's file replaces
// an earlier one's symlink, is not what boots, and is left out.
func (a *Auditor) Findings() []Finding {
	var found []Finding
	for i, f := range a.found {
		if !a.gone[i] {
			if f.Path != "" && a.placeOf != nil {
				f.Initrd = a.placeOf(f.segment)
			}
			f.segment = 0 // said by Initrd, where it is worth saying
			found = append(found, f)
		}
	}
	for _, l := range a.d.Dangling() {
		if typ, target, ok := a.d.view.Lstat(l.Path); ok && (typ != archive.TypeSymlink || target != l.Target) {
			continue // replaced by a later entry: no link is left
		}
		found = append(found, Finding{Input: a.input, Path: l.Path, Type: string(rules.TypeSymlink), Package: a.d.Owners.Owner(l.Path),
			Rule: l.Rule.Name, Action: l.Rule.Action.String(), Severity: rules.Warning, Check: CheckDangling, Target: l.Target, Pos: l.Rule.Pos,
			Reason: "left dangling: points at " + l.goneReason() + "; retarget or strip the link with a rule, or keep its target"})
	}
	found = append(found, a.configs.Findings(a.input, a.d.Owners)...)
	sort.SliceStable(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	return found
}

// Classifier is what the input's rules matched, for StaleFindings.
func (a *Auditor) Classifier() *Classifier { return a.d.Classifier }

// StaleFindings are the stale-rule findings of inputs audited together:
// must-match rules that matched nothing in any of them although their
// package is present in one.
func StaleFindings(set *rules.Set, cs []*Classifier) []Finding {
	var out []Finding
	for _, r := range staleAcross(set, cs) {
		f := Finding{Package: r.Package, Rule: r.Name, Action: r.Action.String(), Severity: rules.Error,
			Check: CheckStale, Pos: r.Pos, Reason: fmt.Sprintf("matched nothing, though package %s is present: %s", r.Package, cmp.Or(r.StaleReason, "it protects nothing any more"))}
		// As check grades it: a stale rule protects nothing, unless
		// its rule file says that is expected or waives it.
		switch {
		case r.Waiver != "":
			f.Severity, f.Reason = rules.Warning, "waived: "+r.Waiver
		case r.StaleReason != "":
			f.Severity = rules.Warning
		}
		out = append(out, f)
	}
	return out
}
