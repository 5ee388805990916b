package trim

import (
	"io"
	"sort"

	"github.com/rootfs-trim/rootfs-trim/internal/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// Auditor is audit's step on one input, entry by entry, for a caller that
// reads the input itself and wants more of each entry than its findings
// (diff hashes every entry in the same pass).
type Auditor struct {
	d     *Decider
	input string
	found []Finding
	// Entries counts the entries seen, trailers left out.
	Entries int
	// Index is an applied image's index, once its entry has been read.
	Index *contract.Index
}

// NewAuditor returns the audit of in, which the caller reads; kind is the
// input's format, which says where each entry lands (archive.Resolver).
func NewAuditor(set *rules.Set, in AuditInput, kind archive.Kind) *Auditor {
	d := NewDecider(set, in.Owners, map[string]bool{contract.IndexPath: true})
	d.SetInput(kind)
	return &Auditor{d: d, input: in.Path}
}

// Entry audits e, whose data the caller has not read yet: data is read
// only for an applied image's index. The Decision tells what the rules
// make of e (Skip for a trailer, Own for the index).
func (a *Auditor) Entry(e *archive.Entry, data io.Reader) (Decision, error) {
	dec, err := a.d.Decide(e)
	if err != nil || dec.Skip {
		return dec, err
	}
	a.Entries++
	if dec.Own {
		// An applied image: its index says which rules already did
		// their work, so they are not stale. Audit only reads: an
		// index it cannot decode is left unread.
		a.Index, _ = a.d.NoteIndex(data)
		return dec, nil
	}
	if v := dec.Verdict; v.Offending() && v.Kept == nil {
		f := findingFor(v, a.d.Owners)
		f.Input = a.input
		a.found = append(a.found, f)
	}
	return dec, nil
}

// Findings returns the input's findings by path, dangling links included:
// call it after the last entry.
func (a *Auditor) Findings() []Finding {
	found := a.found
	for _, l := range a.d.Dangling() {
		v := &Verdict{Path: l.Path}
		found = append(found, Finding{Input: a.input, Path: l.Path, Type: string(rules.TypeSymlink), Package: v.Owner(a.d.Owners),
			Rule: l.Rule.Name, Action: l.Rule.Action.String(), Severity: rules.Warning, Check: CheckDangling, Target: l.Target, Pos: l.Rule.Pos,
			Reason: "left dangling: points at " + l.goneReason() + "; retarget or strip the link with a rule, or keep its target"})
	}
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
		out = append(out, Finding{
			Package: r.Package, Rule: r.Name, Action: r.Action.String(), Severity: rules.Warning,
			Check: CheckStale, Pos: r.Pos,
			Reason: staleReason(r),
		})
	}
	return out
}
