package trim

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// Finding is one offending file, or one stale rule.
type Finding struct {
	Input    string         `json:"input,omitempty"`
	Path     string         `json:"path,omitempty"`
	PathB64  string         `json:"path_b64,omitempty"` // set for JSON when Path is not UTF-8
	Type     string         `json:"type,omitempty"`
	Package  string         `json:"package"`
	Rule     string         `json:"rule,omitempty"`
	Action   string         `json:"action,omitempty"`
	Policy   string         `json:"policy,omitempty"`
	Severity rules.Severity `json:"severity"`
	Check    string         `json:"check"` // offender, unhandled, stale-rule
	Reason   string         `json:"reason"`
	// Pos is the rule or policy item involved; none, and left out of
	// JSON, for a finding about a package as a whole (missing-package).
	Pos rules.Pos `json:"pos,omitzero"`
	// Target is a dangling symlink's target, or the new target a
	// retarget rule gives a symlink.
	Target string `json:"target,omitempty"`
	// Key and Value are, for a file an edit rule changes, the key and
	// its value as the file's consumer reads it (JSON text; "" when the
	// file lacks the key).
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
	// Site is, for a drop-in that overrides a key the site manages, the
	// site's file it overrides.
	Site string `json:"site,omitempty"`
	// Layer is, in an image, the layer that added the file: its index,
	// digest, diff_id and the history's created_by (the Dockerfile line).
	Layer *ociimage.Layer `json:"layer,omitempty"`
	// Initrd is, in an ISO image's initrd or an initrd of several
	// segments, the file and the segment the entry came from, as Layer
	// is for an image; its note ends Reason, as the layer's ends a
	// report's line.
	Initrd *container.Place `json:"initrd,omitempty"`
	// segment is the entry's (archive.Entry.Segment), for Initrd.
	segment int
}

// The checks a finding can come from, in the [check-name] style of Yocto's
// QA: each can be grepped for and documented.
const (
	CheckHandled   = "offender"   // a file a rule strips, relocates or defers
	CheckUnhandled = "unhandled"  // a policy violation no rule handles
	CheckStale     = "stale-rule" // a must-match rule that matched nothing
	// CheckUnreviewed: a policy violation only a fallback rule handles;
	// apply strips it with a warning, check fails on it.
	CheckUnreviewed = "unreviewed"
	// CheckDangling: a symlink no rule touches whose target a rule takes
	// away; apply keeps it as it is, and reports it.
	CheckDangling = "dangling"
)

// A finding's level says what it asks of a person, as a CI user reads it:
//
//   - error: apply cannot fix it as reviewed: a forbidden file no rule
//     handles, one only the fallback handles (apply --strict refuses it,
//     check fails on it), a stale rule nothing says is expected;
//   - warning: the image as given has it, and a reviewed rule will fix it
//     (an offender a package rule handles), or it needs a look but fails
//     nothing (a dangling link, a stale rule expected or waived);
//   - note: informational (an offender whose rule is waived).
//
// Audit's exit status is not the level: it says whether the image holds
// offending files (Offends).
func findingFor(v *Verdict, owners *owners.Table) Finding {
	f := Finding{Path: v.Path, Type: string(v.Type), Package: v.Owner(owners), Severity: rules.Error}
	if len(v.Forbidden) > 0 {
		f.Policy = v.Forbidden[0].Name
		f.Reason = v.Forbidden[0].Reason
		f.Pos = v.Forbidden[0].Pos
		switch {
		case v.Alias != "":
			f.Reason = fmt.Sprintf("the booted system sees it as %s, through the symlink %s: %s", v.Alias, v.Through, f.Reason)
		case v.Through != "":
			f.Reason = fmt.Sprintf("a symlink where the policy's paths lie (%s): what is beneath its target bypasses the policy at boot: %s", v.Through, f.Reason)
		}
	}
	if r := v.Rule; r != nil {
		f.Rule, f.Action, f.Reason, f.Pos = r.Name, r.Action.String(), ruleReason(v), r.Pos
		f.Target = Actions[r.Action].Target(r)
		f.Check, f.Severity = CheckHandled, rules.Warning
		if len(v.Joint) > 1 {
			jointFinding(&f, v)
			return f
		}
		if r.Fallback {
			f.Check, f.Severity = CheckUnreviewed, rules.Error
			f.Reason = "only the fallback handles it; name it in a package rule: " + r.Reason
		}
		if r.Waiver != "" {
			f.Severity = rules.Note
			f.Reason = "waived: " + r.Waiver
		}
		return f
	}
	f.Check = CheckUnhandled
	return f
}

// RuleSep joins the names of a joint finding's rules in Finding.Rule.
const RuleSep = ","

// jointFinding says of f, whose owner is unknown and which several
// packages' rules handle alike (Verdict.Joint), what is true of them all:
// every rule's name, each package, and the policy item's reason (or, where
// the policy does not forbid it, that they agree), at the policy item.
func jointFinding(f *Finding, v *Verdict) {
	var ruleNames []string
	waived := true
	for _, r := range v.Joint {
		ruleNames = append(ruleNames, r.Name)
		waived = waived && r.Waiver != ""
	}
	f.Rule = strings.Join(ruleNames, RuleSep)
	if len(v.Forbidden) > 0 {
		f.Pos = v.Forbidden[0].Pos
	}
	if waived {
		f.Severity = rules.Note
		f.Reason += " (every one waived)"
	}
}

// ruleReason is why v's rule handles the entry: for an entry inside a
// directory it strips, that; for a joint verdict, what is true of every
// rule (the index names any one of them: each does the same).
func ruleReason(v *Verdict) string {
	switch {
	case len(v.Joint) > 1:
		return jointReason(v)
	case v.Inherited:
		return "inside a directory that rule " + v.Rule.Name + " strips"
	}
	return v.Rule.Reason
}

// jointReason is what is true of every rule of a joint verdict: that they
// all do the same with it, and the policy item's reason where there is one.
func jointReason(v *Verdict) string {
	var pkgs []string
	for _, r := range v.Joint {
		pkgs = append(pkgs, r.Package)
	}
	reason := fmt.Sprintf("owner unknown; the rules of %s all %s it", strings.Join(pkgs, ", "), v.Rule.Action)
	if v.Inherited {
		reason = fmt.Sprintf("owner unknown; inside a directory the rules of %s all strip", strings.Join(pkgs, ", "))
	}
	if len(v.Forbidden) > 0 {
		reason += ": " + v.Forbidden[0].Reason
	}
	return reason
}

// Joint reports whether f is handled by the rules of several packages
// together (its owner unknown), named in Rule joined by RuleSep.
func (f Finding) Joint() bool { return strings.Contains(f.Rule, RuleSep) }

// Offends reports whether f is an offending file that makes audit exit 1:
// any the image holds, handled or not, but one whose rule is waived (a
// note). A dangling link or a stale rule is no offending file, whatever
// its level.
func (f Finding) Offends() bool {
	switch f.Check {
	case CheckHandled, CheckUnreviewed, CheckUnhandled, CheckRuntimeEnabled, CheckOverride, CheckCNIDir:
		return f.Severity != rules.Note
	}
	return false
}

// AuditInput is one thing to audit.
type AuditInput struct {
	Path   string
	Source container.Source // opens it
	Owners *owners.Table    // nil: no ownership data
	// Dpkg takes the owners from the input's own dpkg database instead
	// (none if it has none): a tree's is read first, an archive's in the
	// one pass that audits it (Recording).
	Dpkg bool
}

// AuditResult is every finding of an audit, offenders first (by input and
// path), then stale rules.
type AuditResult struct {
	Findings []Finding
	Entries  int
	// Databases are the dpkg databases of the Dpkg inputs, by input; nil
	// where there is none.
	Databases []*owners.DB
	// Applied are, by input, the changes an applied input's index
	// records apply made (indexChanges); nil where it has none (or it
	// could not be read).
	Applied [][]manifest.Change
}

// Audit reads each input once and lists what offends. The Dpkg inputs
// are read first, in order, their entries recorded: their errors come
// before any other input's.
func Audit(set *rules.Set, inputs []AuditInput, wrap func(archive.Reader) archive.Reader, open container.OpenOptions) (*AuditResult, error) {
	if open.ImageData == nil {
		open.ImageData = ImageData(set)
	}
	res := &AuditResult{Databases: make([]*owners.DB, len(inputs))}
	inputs = slices.Clone(inputs)
	recs := make([]*Recording, len(inputs))
	for i, in := range inputs {
		if !in.Dpkg {
			continue
		}
		var db *owners.DB
		var err error
		if owners.ReadsFirst(in.Path) {
			db, err = owners.Load(in.Path, open)
		} else {
			recs[i], db, err = record(set, in, wrap)
		}
		if err != nil {
			return nil, err
		}
		res.Databases[i], inputs[i].Owners = db, db.Table()
	}
	var classifiers []*Classifier
	for i, in := range inputs {
		c, err := auditOne(set, in, recs[i], res, wrap)
		if err != nil {
			return nil, err
		}
		classifiers = append(classifiers, c)
	}
	res.Findings = append(res.Findings, StaleFindings(set, classifiers)...)
	return res, nil
}

// auditOne audits in: from rec when it was recorded, else as it is read.
func auditOne(set *rules.Set, in AuditInput, rec *Recording, res *AuditResult, wrap func(archive.Reader) archive.Reader) (*Classifier, error) {
	var a *Auditor
	var img *ociimage.Image
	var err error
	boot := NewBootCollector() // what enablement reads, gathered in the one pass
	if rec != nil {
		boot = rec.boot
		a, err = rec.Judge(set, in, nil)
	} else {
		a, img, err = auditStream(set, in, wrap, boot)
	}
	if err != nil {
		return nil, err
	}
	res.Entries += a.Entries
	res.Applied = append(res.Applied, indexChanges(a.Index, set))
	found := a.Findings()
	enabled, err := runtimeFindings(set, in, boot)
	if err != nil {
		return nil, err
	}
	found = append(found, enabled...)
	if img != nil {
		for i := range found {
			if found[i].Path != "" {
				found[i].Layer = img.LayerOf(found[i].Path)
			}
		}
	}
	res.Findings = append(res.Findings, found...)
	return a.Classifier(), nil
}

// auditStream audits in as it is read, boot gathering what enablement
// reads; the image is its container's, for an image (whose layers the
// findings then name), else nil.
func auditStream(set *rules.Set, in AuditInput, wrap func(archive.Reader) archive.Reader, boot *enablement.Collector) (*Auditor, *ociimage.Image, error) {
	src, r, err := openWrapped(in.Source, wrap)
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	r = boot.Wrap(r)
	a := NewAuditor(set, in, src.Format.Kind)
	for {
		e, err := r.Next()
		if err == io.EOF {
			a.placeOf = src.PlaceOf
			return a, src.Image(), nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", in.Path, err)
		}
		if _, err := a.Entry(e, r); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", in.Path, err)
		}
	}
}

// staleAcross returns must-match rules that matched nothing in any input
// although their package is present in at least one.
func staleAcross(set *rules.Set, cs []*Classifier) []*rules.Rule {
	var stale []*rules.Rule
	for _, p := range set.Packages {
		present := false
		for _, c := range cs {
			present = present || c.present(p)
		}
		if !present {
			continue
		}
		for _, r := range p.Rules {
			n := 0
			for _, c := range cs {
				n += c.matched[r]
			}
			if r.MustMatch && n == 0 {
				stale = append(stale, r)
			}
		}
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].Name < stale[j].Name })
	return stale
}

// openWrapped opens an input to audit, and the reader to read it by.
func openWrapped(source container.Source, wrap func(archive.Reader) archive.Reader) (*container.Input, archive.Reader, error) {
	src, err := source()
	if err != nil {
		return nil, nil, err
	}
	if wrap == nil {
		return src, src, nil
	}
	return src, wrap(src), nil
}

// indexChanges are the changes ix records, as apply's manifest has them:
// its Source is the path the package put the file at, but for a deferred
// file (the copy; Dest is the package's path) and a template (Dest is
// where the boot step writes it). Package and reason come from set: the
// rule's, the template's, or the addition's (whose Name is its package).
func indexChanges(ix *contract.Index, set *rules.Set) []manifest.Change {
	if ix == nil {
		return nil
	}
	type origin struct{ pkg, reason string }
	byRule, byAddition := map[string]origin{}, map[string]origin{}
	for _, r := range set.Rules() {
		byRule[r.Name] = origin{r.Package, r.Reason}
	}
	for _, t := range set.Templates {
		byRule[t.Name] = origin{"rootfs-trim", t.Reason}
	}
	for _, a := range set.Additions() {
		byAddition[a.Path] = origin{a.Package, a.Reason}
	}
	var cs []manifest.Change
	for _, f := range ix.Files {
		c := manifest.Change{Kind: f.Kind, Path: f.Source, To: f.Dest, Type: "file", Rule: f.Name, Mode: f.Mode, SHA256: f.SHA256}
		o, ok := byRule[f.Name]
		if f.Kind == contract.Added {
			c.Rule, c.To, o = "", "", byAddition[f.Source]
			if !ok {
				o.pkg = f.Name
			}
		}
		c.Package, c.Reason = o.pkg, o.reason
		if f.Link != "" {
			c.Type = "symlink"
		}
		if f.Kind == contract.Deferred {
			c.Path, c.To = f.Dest, f.Source
		}
		cs = append(cs, c)
	}
	return cs
}
