package trim

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// Decider is the one decision step that apply (stream and tree), audit and
// check run on every entry: entry in, Decision out. Everything a rule
// action means to the pipeline is in the actions table (actions.go); the
// callers only dispatch on it.
type Decider struct {
	*Classifier
	// own are the paths apply writes itself (OwnPaths): an earlier apply's
	// copies are handed to the caller as Own rather than classified.
	own map[string]bool

	// For Dangling: the symlinks that stay, and what the rules take away
	// from its place (files, and stripped directories with all beneath).
	links []Link
	gone  map[string]*rules.Rule
	// earlier: paths in gone that only an earlier apply's index says were
	// taken away (an applied image), not a rule matching an entry now.
	earlier map[string]bool
}

// Link is a symlink that stays in the image while the rules take away what
// it points at: systemd's multi-user.target.wants/containerd.service ->
// /etc/systemd/system/containerd.service once that unit moved to
// /usr/lib/systemd/system.
type Link struct {
	Path, Target string
	// Gone is the path the target resolves to in the image, Rule the rule
	// that took it away.
	Gone string
	Rule *rules.Rule
	Mode uint32
	// Earlier: an earlier apply took the target away (its index says so);
	// the image at hand no longer has it.
	Earlier bool
}

// NewDecider returns the decision step for set; owners may be nil. own
// lists the paths whose regular files are reported as Own (nil: none).
func NewDecider(set *rules.Set, owners *owners.Table, own map[string]bool) *Decider {
	return &Decider{Classifier: NewClassifier(set, owners), own: own, gone: map[string]*rules.Rule{}, earlier: map[string]bool{}}
}

// Decision is the verdict on one entry.
type Decision struct {
	// Skip: a trailer, nothing to decide.
	Skip bool
	// Own: a file at a path apply writes itself (Path); its data goes to
	// TakeOwn, and the entry never reaches the output as it is.
	Own  bool
	Path string
	// Verdict is set unless Skip or Own: owner, rule, findings.
	*Verdict
	// Spec is what the verdict's action means to the pipeline; nil when
	// the entry stays as it is.
	Spec *ActionSpec
	// File and Data: the regular file the entry is now a name of, and
	// whether its data is that file's content from here on (see
	// archive.Landing): a later entry written in place over a hard-link
	// group gives every name of it the later content.
	File uint32
	Data bool
}

// Decide classifies e. Entries must come parents first (see Classifier).
func (d *Decider) Decide(e *archive.Entry) (Decision, error) {
	if e.Type == archive.TypeTrailer {
		// The view ends the member's hard-link groups there, as the
		// kernel's free_hash does: a later segment's same inode number
		// is another file.
		d.view.Resolve(e)
		return Decision{Skip: true}, nil
	}
	if d.own != nil && e.Type == archive.TypeRegular {
		if name, err := pathx.Clean(e.Name); err == nil && d.own[name] {
			// Not classified, but unpacked all the same: later entries
			// land where it, too, is in the way.
			land, err := d.view.Resolve(e)
			if err != nil {
				return Decision{}, fmt.Errorf("entry %s: %w", names.Quote(e.Name), err)
			}
			return Decision{Own: true, Path: name, File: land.File, Data: land.Data}, nil
		}
	}
	v, err := d.Classify(e)
	if err != nil {
		return Decision{}, err
	}
	if a := v.Action(); a != 0 && len(v.Forbidden) == 0 && Actions[a].Applied(e, v.Rule) {
		// Already what the rule makes of it: nothing to do, nothing to
		// report.
		v.Rule = nil
	}
	dec := Decision{Path: v.Path, Verdict: v, File: v.land.File, Data: v.land.Data}
	if a := v.Action(); a != 0 {
		dec.Spec = Actions[a]
		if !dec.Spec.InPlace { // an entry written again in place is not taken away
			d.gone[v.Path] = v.Rule
			delete(d.earlier, v.Path)
		}
	} else if e.Type == archive.TypeSymlink && v.Rule == nil {
		d.links = append(d.links, Link{Path: v.Path, Target: e.Linkname, Mode: e.Mode})
	}
	return dec, nil
}

// Dangling returns the symlinks no rule touched whose target, resolved in
// the image (an absolute target from the image's root, a relative one
// from the link's directory, never above the root), is a path the rules
// took away: each link an apply leaves dangling. Only the link's own
// components are resolved, not other symlinks on the way. Call it after
// the last entry: a target may come after its link.
func (d *Decider) Dangling() []Link {
	if len(d.gone) == 0 {
		return nil
	}
	var out []Link
	for _, l := range d.links {
		t := l.Target
		if !path.IsAbs(t) {
			t = path.Join("/", path.Dir(l.Path), t)
		}
		t = strings.TrimPrefix(path.Clean("/"+t), "/")
		for p := t; p != "." && p != ""; p = path.Dir(p) {
			if r, ok := d.gone[p]; ok {
				l.Gone, l.Rule, l.Earlier = t, r, d.earlier[p]
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// noteIndex reads an earlier apply's index from r and counts the rules it
// records as applied (see Classifier.noteApplied).
func (d *Decider) noteIndex(r io.Reader) (*contract.Index, error) {
	ix, err := contract.DecodeIndex(r)
	if err != nil {
		return nil, err
	}
	d.noteApplied(ix)
	d.noteTaken(ix)
	return ix, nil
}

// noteTaken adds to gone what an earlier apply took from its place, as
// its index records it: in an applied image the links to those paths
// dangle because of that apply, and Dangling reports them as the apply
// did. A path a rule matches in this input stays that rule's.
func (d *Decider) noteTaken(ix *contract.Index) {
	for _, f := range ix.Files {
		spec := specOfKind(f.Kind)
		if spec == nil {
			continue
		}
		p := spec.Taken(f)
		if p == "" {
			continue
		}
		if _, ok := d.gone[p]; ok {
			continue
		}
		r := d.Set.RuleNamed(f.Name)
		if r == nil {
			// The rule is no longer in the set: name it as the index does.
			r = &rules.Rule{Name: f.Name, Action: spec.Action}
		}
		d.gone[p], d.earlier[p] = r, true
	}
}

// ownFile is what apply keeps of a file at one of its own paths: the
// content's sha256 and, for the index, the earlier apply's index.
type ownFile struct {
	sum   string
	index *contract.Index
}

// takeOwn reads the data of a Decision.Own entry: both appliers keep its
// sum to compare with what they write, and the earlier index.
func (d *Decider) takeOwn(name string, r io.Reader) (ownFile, error) {
	data, err := newSpool(r)
	if err != nil {
		return ownFile{}, err
	}
	defer data.Close()
	f := ownFile{sum: data.sum}
	if name != contract.IndexPath {
		return f, nil
	}
	rd, err := data.Reader()
	if err != nil {
		return f, err
	}
	f.index, err = d.noteIndex(rd)
	return f, err
}

// danglingChanges records each link Dangling finds in the manifest; the
// link itself is written as it came in.
func danglingChanges(d *Decider) []manifest.Change {
	var out []manifest.Change
	for _, l := range d.Dangling() {
		out = append(out, manifest.Change{Kind: contract.Dangling, Path: l.Path, To: l.Target, Type: archive.TypeSymlink.String(),
			Package: d.Owners.Owner(l.Path), Rule: l.Rule.Name, Size: int64(len(l.Target)), Mode: fmt.Sprintf("%04o", l.Mode),
			Reason: "points at " + l.goneReason()})
	}
	return out
}

// goneReason says what took the link's target away.
func (l Link) goneReason() string {
	if l.Earlier {
		return fmt.Sprintf("%s, which an earlier apply took away from there (rule %s)", names.Quote(l.Gone), l.Rule.Name)
	}
	return fmt.Sprintf("%s, which rule %s takes away from there", names.Quote(l.Gone), l.Rule.Name)
}
