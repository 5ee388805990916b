package trim

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// AnyPackage is the package name of rules that apply whatever the owner.
const AnyPackage = rules.AnyPackage

// Verdict is what the rules make of one entry.
type Verdict struct {
	Path string // cleaned
	Type rules.EntryType
	// Owners are the packages that installed it, last writer last; looked
	// up only for entries a rule or the policy names (Owner looks up the
	// others).
	Owners []string
	// Rule is the package rule that handles the entry, nil if none.
	Rule *rules.Rule
	// Joint are, when the owners are unknown and the rules of several
	// packages match the entry alike (jointRules), all of them, Rule the
	// first: which package shipped it is not known, so no one package's
	// reason is the finding's.
	Joint []*rules.Rule
	// Forbidden lists the policy items the entry violates where it is.
	Forbidden []*rules.Forbid
	// Inherited is set when the entry goes because a directory above it
	// was stripped.
	Inherited bool
	// Kept is set for a directory the policy keeps although a rule matched it.
	Kept *rules.Keep
	// Through is set when the policy forbids the entry at another path,
	// the one the booted system sees it at through an in-tree directory
	// symlink ("etc/cni -> ../opt/evilcni"), or where its consumer puts it
	// (in x/, x -> etc/cni/net.d, x/a.conflist, the kernel makes the file
	// in etc/cni/net.d); Alias is that path. For the symlink itself
	// Through is the link and Alias empty.
	Through, Alias string
	// land is where the entry landed.
	land archive.Landing
}

// Owner is the package to name in reports.
func (v *Verdict) Owner(o *owners.Table) string {
	if v.Owners == nil {
		return o.Owner(v.Path)
	}
	return o.Name(v.Owners)
}

// Offending reports whether the entry is something a package must not ship.
func (v *Verdict) Offending() bool {
	return v.Rule != nil || len(v.Forbidden) > 0
}

// Unhandled reports a policy violation no rule takes care of: a new offender.
func (v *Verdict) Unhandled() bool {
	return len(v.Forbidden) > 0 && v.Rule == nil
}

// Unreviewed reports a file only a fallback rule handled: apply strips it
// but warns, audit lists it, check fails on it until a package rule names
// it.
func (v *Verdict) Unreviewed() bool {
	return v.Rule != nil && v.Rule.Fallback
}

// OwnPaths are the paths apply writes itself: added files, templates and
// the index. An earlier apply's copies of them are replaced, not reported.
func OwnPaths(set *rules.Set) map[string]bool {
	own := map[string]bool{contract.IndexPath: true}
	for _, a := range set.Additions() {
		own[a.Path] = true
	}
	for _, t := range set.Templates {
		own[contract.TemplateDir+"/"+t.Name+".tmpl"] = true
	}
	return own
}

// Action is what apply does with the entry at its place.
func (v *Verdict) Action() rules.Action {
	if v.Rule == nil || v.Kept != nil {
		return 0
	}
	return v.Rule.Action
}

// Classifier decides verdicts. Entries must come parents first, as every
// reader yields them, so that a stripped directory takes its contents along.
type Classifier struct {
	Set    *rules.Set
	Owners *owners.Table
	// Strict ignores fallback rules (apply --strict): a forbidden file no
	// other rule handles is an unhandled offender.
	Strict bool

	strippedDirs []strippedDir
	matched      map[*rules.Rule]int
	ordered      []*rules.Package // package search order without ownership data

	// Every package's paths, for anyRuleMatches: plain paths in a set,
	// globs in a list.
	rulePaths map[string]bool
	ruleGlobs []rules.Pattern

	// policyDirs are the directories the policy's paths lie in; dirLinks
	// the symlinks seen so far at one of them, with their targets
	// resolved in the image.
	policyDirs map[string][]*rules.Forbid
	dirLinks   []dirLink

	// view follows the input as its consumer unpacks it (archive.Resolver):
	// where each entry lands, and where a link's target leads.
	view *archive.Resolver
}

type dirLink struct {
	link, raw string
}

type strippedDir struct {
	prefix string // "etc/cni/net.mk/"
	rule   *rules.Rule
	joint  []*rules.Rule // Verdict.Joint
}

// NewClassifier returns a classifier for set; owners may be nil.
func NewClassifier(set *rules.Set, o *owners.Table) *Classifier {
	if o == nil {
		o = owners.New()
	}
	c := &Classifier{Set: set, Owners: o, matched: map[*rules.Rule]int{}, view: archive.NewResolver(0)}
	c.rulePaths = map[string]bool{}
	c.policyDirs = map[string][]*rules.Forbid{}
	for _, f := range set.Policy {
		for _, pat := range f.Paths {
			for _, d := range pat.Dirs() {
				if l := c.policyDirs[d]; len(l) == 0 || l[len(l)-1] != f {
					c.policyDirs[d] = append(l, f)
				}
			}
		}
	}
	for _, p := range set.Packages {
		if p.Name != AnyPackage {
			c.ordered = append(c.ordered, p)
		}
		for _, r := range p.Rules {
			for _, pat := range r.Paths {
				if lit, ok := pat.Literal(); ok {
					c.rulePaths[lit] = true
				} else {
					c.ruleGlobs = append(c.ruleGlobs, pat)
				}
			}
		}
	}
	return c
}

// SetInput says what the entries come from, before the first: a tar
// stream is refused where tar extractors disagree on where an entry lands,
// and everything is matched where the kernel's unpacker puts it
// (archive.NewResolver). Without it, both.
func (c *Classifier) SetInput(k archive.Kind) { c.view = archive.NewResolver(k) }

// EntryType maps an archive type onto the types a policy can name.
func EntryType(t archive.Type) rules.EntryType {
	switch t {
	case archive.TypeRegular, archive.TypeHardlink:
		return rules.TypeFile
	case archive.TypeSymlink:
		return rules.TypeSymlink
	case archive.TypeDir:
		return rules.TypeDir
	}
	return rules.TypeOther
}

// Classify returns the verdict for e. Trailers get an empty verdict (and
// end the hard-link groups of the view).
func (c *Classifier) Classify(e *archive.Entry) (*Verdict, error) {
	if e.Type == archive.TypeTrailer {
		c.view.Resolve(e)
		return &Verdict{}, nil
	}
	name, err := pathx.Clean(e.Name)
	if err != nil {
		return nil, fmt.Errorf("entry %q: %w", e.Name, err)
	}
	land, err := c.view.Resolve(e)
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", names.Quote(e.Name), err)
	}
	v := &Verdict{Path: name, Type: EntryType(e.Type), land: land}
	for _, d := range c.strippedDirs {
		if strings.HasPrefix(name, d.prefix) {
			v.Owners = c.Owners.Of(name)
			v.Rule, v.Joint, v.Inherited = d.rule, d.joint, true
			c.matched[d.rule]++
			return v, nil
		}
	}
	v.Forbidden = c.Set.ForbiddenBy(name, v.Type, e.Linkname)
	at := name
	if land.Path != "" {
		at = land.Path
	}
	if len(v.Forbidden) == 0 && at != name {
		if hits := c.Set.ForbiddenBy(at, v.Type, e.Linkname); len(hits) > 0 {
			v.Forbidden, v.Alias, v.Through = hits, at, strings.Join(land.Via, ", ")
		}
	}
	if e.Type == archive.TypeSymlink || (len(v.Forbidden) == 0 && len(c.dirLinks) > 0) {
		c.throughLinks(v, e, at)
	}
	// Owners matter only to an entry that a rule or the policy names: a
	// few in a tree of tens of thousands, where the lookups were a
	// noticeable part of apply's time.
	if len(v.Forbidden) == 0 && !c.anyRuleMatches(name) {
		return v, nil
	}
	v.Owners = c.Owners.Of(name)
	v.Rule, v.Joint = c.findRule(name, v)
	if v.Rule == nil {
		return v, nil
	}
	if v.Type == rules.TypeDir {
		if k := c.Set.IsKept(name); k != nil {
			v.Kept = k
			return v, nil
		}
		if !Actions[v.Rule.Action].Dirs {
			// Only files move; a directory the rule matches is left to its
			// contents, each matched on its own.
			v.Rule = nil
			return v, nil
		}
		c.strippedDirs = append(c.strippedDirs, strippedDir{prefix: name + "/", rule: v.Rule, joint: v.Joint})
	}
	c.matched[v.Rule]++
	return v, nil
}

// anyRuleMatches reports whether some rule of some package matches name,
// whoever owns it: if none does, findRule finds nothing.
func (c *Classifier) anyRuleMatches(name string) bool {
	return c.rulePaths[name] || slices.ContainsFunc(c.ruleGlobs, func(g rules.Pattern) bool { return g.Match(name) })
}

// findRule returns the rule that handles name: the owner's, else one for
// any owner, else the fallback's for what the policy forbids. Without
// ownership data, the rules of every package that match (jointRules):
// joint lists them when there are several.
func (c *Classifier) findRule(name string, v *Verdict) (rule *rules.Rule, joint []*rules.Rule) {
	if r := c.Set.BootRuntimeRule; r != nil && r.Matches(name) {
		return r, nil
	}
	if c.Owners.Known() {
		for i := len(v.Owners) - 1; i >= 0; i-- {
			if p := c.Set.Lookup(v.Owners[i]); p != nil {
				if r := p.Match(name); r != nil {
					return r, nil
				}
			}
		}
	} else if rs := c.jointRules(name); len(rs) == 1 {
		return rs[0], nil
	} else if len(rs) > 1 {
		return rs[0], rs
	}
	p := c.Set.Lookup(AnyPackage)
	if p == nil {
		return nil, nil
	}
	if r := p.Match(name); r != nil {
		return r, nil
	}
	// The fallback decides last, and only for what the policy forbids.
	if len(v.Forbidden) > 0 && !c.Strict {
		return p.MatchFallback(name), nil
	}
	return nil, nil
}

// jointRules are, for an entry whose owner is unknown, the rules of every
// package that match name, each package's first, in set order: the first
// package's alone would say its reason of a file another package may have
// shipped (containerd's "points crictl at containerd.sock" of a crictl.yaml
// naming crio.sock). Where they differ (rules.SameOutcome; only globs get
// here), none is taken: the entry is left to the rules for any owner and
// the fallback, which audit and apply report as unreviewed.
func (c *Classifier) jointRules(name string) []*rules.Rule {
	var rs []*rules.Rule
	for _, p := range c.ordered {
		if r := p.Match(name); r != nil {
			if len(rs) > 0 && !rules.SameOutcome(rs[0], r) {
				return nil
			}
			rs = append(rs, r)
		}
	}
	return rs
}

// Stale returns the must-match rules that matched nothing, for packages
// that are known to be present. Without ownership data nothing is known to
// be present, and no rule is called stale.
func (c *Classifier) Stale() []*rules.Rule { return staleAcross(c.Set, []*Classifier{c}) }

// noteApplied counts the rules an earlier apply recorded in its index as
// matched (a record of an action's kind): their files are gone or moved
// because they worked, not because they went stale.
func (c *Classifier) noteApplied(ix *contract.Index) {
	for _, f := range ix.Files {
		if r := c.Set.RuleNamed(f.Name); r != nil && specOfKind(f.Kind) != nil {
			c.matched[r]++
		}
	}
}

// Active reports whether the package called name is in the image: its
// files are in the ownership data, or, without any, one of its rules
// matched (now or in an earlier apply).
func (c *Classifier) Active(name string) bool {
	p := c.Set.Lookup(name)
	if p == nil {
		return false
	}
	if c.Owners.Known() {
		return c.present(p)
	}
	return slices.ContainsFunc(p.Rules, func(r *rules.Rule) bool { return c.matched[r] > 0 })
}

func (c *Classifier) present(p *rules.Package) bool {
	if p.Name == AnyPackage {
		return false
	}
	return slices.ContainsFunc(append([]string{p.Name}, p.Aliases...), c.Owners.Present)
}

// noteDirLink remembers l; a later link at the same path takes its place,
// as it does in the image, so that the list stays as short as the
// policy's directories are few, however many links an input repeats.
func (c *Classifier) noteDirLink(l dirLink) {
	for i := range c.dirLinks {
		if c.dirLinks[i].link == l.link {
			c.dirLinks[i] = l
			return
		}
	}
	c.dirLinks = append(c.dirLinks, l)
}

// throughLinks finds what the booted system sees that the entry's own path
// hides. A symlink at a directory the policy's paths lie in (etc/cni ->
// ../opt/evilcni) is itself a finding, under the policy items it would let
// files bypass, and is remembered; an entry beneath where a remembered
// link's target leads is matched against the policy at the path the link
// gives it (opt/evilcni/net.d/x.conflist is /etc/cni/net.d/x.conflist at
// boot). at is where the entry lands (archive.Resolver).
//
// Targets resolve in the image as path lookup does when the entry comes:
// an absolute one from its root, a relative one from the link's
// directory, never above the root, through the symlinks on the way.
// Entries under a target that came before the link are not matched again
// (a stream is read once), but the link itself is always reported, so the
// run stops either way.
func (c *Classifier) throughLinks(v *Verdict, e *archive.Entry, at string) {
	if e.Type == archive.TypeSymlink {
		if hits := c.policyDirs[at]; len(hits) > 0 {
			c.noteDirLink(dirLink{link: at, raw: e.Linkname})
			if len(v.Forbidden) == 0 {
				v.Forbidden = hits
			}
			v.Through = at + " -> " + e.Linkname
			return
		}
	}
	if len(v.Forbidden) > 0 {
		return
	}
	for _, l := range c.dirLinks {
		target := c.view.Canonical(path.Dir(l.link), l.raw)
		rest, ok := strings.CutPrefix(at, target+"/")
		if target == "." {
			rest, ok = at, true
		}
		if !ok {
			continue
		}
		alias := l.link + "/" + rest
		if hits := c.Set.ForbiddenBy(alias, v.Type, e.Linkname); len(hits) > 0 {
			v.Forbidden, v.Alias, v.Through = hits, alias, l.link+" -> "+l.raw
			return
		}
	}
}
