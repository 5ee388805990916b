package rules

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/configkey"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// Action is what a package rule does with a matching file.
type Action uint8

const (
	// Strip removes the file from the image.
	Strip Action = iota + 1
	// Defer removes it from its place and keeps a copy under
	// usr/share/minikube/deferred/ that the boot step puts back when its
	// runtime (or CNI) is the chosen one.
	Defer
	// Relocate moves it to another path in the image.
	Relocate
	// Retarget keeps a symlink where it is and points it at To: systemd's
	// enablement link to a unit that a relocation moved away.
	Retarget
	// Edit changes one key of a config file where it is, every other
	// byte kept: containerd.io's disabled_plugins = ["cri"].
	Edit
)

// actionDef is one rule action as rule files spell it: everything
// loading needs to know about it. A new action is a constant above and a
// row here (and its row in pkg/trim/actions.go); Load reads nothing else.
type actionDef struct {
	action Action
	name   string
	// takes lists the fields of actionFields the action takes; a rule
	// that sets any other one is refused.
	takes []string
	// load checks the fields the action needs and copies them into r
	// (nil: none).
	load func(l *loader, pos Pos, rr rawRule, r *Rule)
}

// actionDefs are every action, in declaration order.
var actionDefs = []actionDef{
	{Strip, "strip", nil, nil},
	{Defer, "defer", []string{"runtime", "cni", "restore_as"}, loadDefer},
	{Relocate, "relocate", []string{"to", "existing"}, loadRelocate},
	{Retarget, "retarget", []string{"to"}, loadRetarget},
	{Edit, "edit", []string{"format", "key", "remove", "set", "unset"}, loadEdit},
}

// rawRule is a rule as its file writes it.
type rawRule struct {
	Name      located   `yaml:"name"`
	Match     []located `yaml:"match"`
	Action    located   `yaml:"action"`
	To        located   `yaml:"to"`
	Existing  located   `yaml:"existing"`
	Runtime   located   `yaml:"runtime"`
	CNI       located   `yaml:"cni"`
	RestoreAs located   `yaml:"restore_as"`
	Format    located   `yaml:"format"`
	Key       located   `yaml:"key"`
	Remove    []located `yaml:"remove"`
	Set       setValue  `yaml:"set"`
	Unset     located   `yaml:"unset"`
	Fallback  *bool     `yaml:"fallback"`
	MustMatch *bool     `yaml:"must_match"`
	Waive     located   `yaml:"waive"`
	Stale     located   `yaml:"stale_reason"`
	Reason    located   `yaml:"reason"`
	Link      located   `yaml:"link"`
}

// ruleField is a field of rawRule that only some actions take.
type ruleField struct {
	name string
	get  func(rr *rawRule) located
}

// actionFields are the fields only some actions take (actionDef.takes),
// in groups a message names together.
var actionFields = [][]ruleField{
	{{"restore_as", func(rr *rawRule) located { return rr.RestoreAs }}},
	{{"to", func(rr *rawRule) located { return rr.To }}, {"existing", func(rr *rawRule) located { return rr.Existing }}},
	{{"runtime", func(rr *rawRule) located { return rr.Runtime }}, {"cni", func(rr *rawRule) located { return rr.CNI }}},
	{{"format", func(rr *rawRule) located { return rr.Format }}, {"key", func(rr *rawRule) located { return rr.Key }},
		{"remove", func(rr *rawRule) located { return joined(rr.Remove) }}, {"set", func(rr *rawRule) located { return rr.Set.located }},
		{"unset", func(rr *rawRule) located { return rr.Unset }}},
}

func loadRelocate(l *loader, pos Pos, rr rawRule, r *Rule) {
	file := pos.File
	if rr.To.V == "" {
		l.errorf(pos, "rule %s: relocate needs to:", r.Name)
		return
	}
	to, err := pathx.CleanRule(rr.To.V)
	if err != nil || to == "." {
		l.errorf(Pos{file, rr.To.Line}, "rule %s: to: bad path %q", r.Name, rr.To.V)
		return
	}
	if strings.HasSuffix(rr.To.V, "/") {
		to += "/"
	}
	r.To = to
	if len(r.Paths) > 1 && !strings.HasSuffix(r.To, "/") {
		l.errorf(Pos{file, rr.To.Line}, "rule %s: several paths relocate to one file; end to: with / to keep their names", r.Name)
	}
	for _, pt := range r.Paths {
		if _, lit := pt.Literal(); !lit && !strings.HasSuffix(r.To, "/") {
			l.errorf(Pos{file, rr.To.Line}, "rule %s: a glob relocates into a directory; end to: with /", r.Name)
		}
	}
	switch rr.Existing.V {
	case "", "error":
	case "strip":
		r.Existing = ExistingStrip
	default:
		l.errorf(Pos{file, rr.Existing.Line}, "rule %s: existing: %q: want error or strip", r.Name, rr.Existing.V)
	}
}

func loadRetarget(l *loader, pos Pos, rr rawRule, r *Rule) {
	// A link target is not a path of the image: kept as written
	// (absolute or relative to the link), only checked to be one.
	switch t := rr.To.V; {
	case t == "":
		l.errorf(pos, "rule %s: retarget needs to: (the link's new target)", r.Name)
	case strings.ContainsRune(t, 0) || strings.TrimSpace(t) != t || len(t) > 4095:
		l.errorf(Pos{pos.File, rr.To.Line}, "rule %s: to: bad link target %q", r.Name, t)
	default:
		r.To = t
	}
}

func loadDefer(l *loader, pos Pos, rr rawRule, r *Rule) {
	file := pos.File
	if r.Runtime == "" && r.CNI == "" {
		l.errorf(pos, "rule %s: defer needs runtime: or cni: (when does the boot step put it back?)", r.Name)
	}
	l.checkChoice(Pos{file, rr.Runtime.Line}, r.Name, "runtime", r.Runtime, contract.Runtimes)
	l.checkChoice(Pos{file, rr.CNI.Line}, r.Name, "cni", r.CNI, contract.CNIs)
	if rr.RestoreAs.V != "" {
		if n := rr.RestoreAs.V; strings.ContainsAny(n, "/\x00") || n == "." || n == ".." || strings.TrimSpace(n) != n {
			l.errorf(Pos{file, rr.RestoreAs.Line}, "rule %s: restore_as: %q: want a file name (the deferred file is restored in its own directory)", r.Name, n)
		} else {
			r.RestoreAs = n
		}
	}
}

func actionNamed(name string) (actionDef, bool) {
	for _, d := range actionDefs {
		if d.name == name {
			return d, true
		}
	}
	return actionDef{}, false
}

func (a Action) String() string {
	for _, d := range actionDefs {
		if d.action == a {
			return d.name
		}
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// MarshalText makes actions readable in JSON manifests.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// Severity grades a finding as Yocto's QA and Buildroot's checks do.
type Severity uint8

const (
	Error Severity = iota + 1
	Warning
	Note
)

var severityNames = [...]string{Error: "error", Warning: "warning", Note: "note"}

func (s Severity) String() string {
	if int(s) < len(severityNames) && s != 0 {
		return severityNames[s]
	}
	return "unknown"
}

// MarshalText makes severities readable in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Pos is a place in a rule file.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// EntryType is a file type a policy item can be limited to.
type EntryType string

// The types a policy's `types` may list.
const (
	TypeFile    EntryType = "file"
	TypeSymlink EntryType = "symlink"
	TypeDir     EntryType = "dir"
	TypeOther   EntryType = "other" // devices, fifos, sockets
)

// Forbid is one policy item: paths no package may leave in the final rootfs.
type Forbid struct {
	Name  string
	Paths []Pattern
	Allow []Pattern
	// AllowTargets lets a symlink through whose target, resolved in the
	// image (pathx.ResolveLink), matches one of them: systemd's masks
	// (-> /dev/null) and aliases into the image's own unit directories.
	AllowTargets []Pattern
	Types        []EntryType // empty: every type but directories
	// RemoveAtBoot lets the boot step remove a matching file that appears
	// after the image was built; otherwise it only reports it.
	RemoveAtBoot bool
	Reason       string
	Link         string
	Pos          Pos
}

// Keep is a directory that must exist in the image even when emptied.
type Keep struct {
	Path   string
	Reason string
	Pos    Pos
}

// Rule is one per-package rule.
type Rule struct {
	Name     string
	Package  string // canonical package name
	Paths    []Pattern
	Action   Action
	To       string // Relocate: destination path (cleaned); Retarget: the link's new target
	Existing ExistingPolicy
	Runtime  string // Defer: the runtime the file belongs to
	CNI      string // Defer: the CNI it belongs to, if any
	// RestoreAs is the name (in the same directory) under which the boot
	// step restores a deferred file (Defer only; empty: its own name).
	// cri-o ships its bridge as 10-crio-bridge.conflist.disabled, which
	// libcni never reads: restored, it must lose the suffix.
	RestoreAs string
	// Edit is the key an edit rule changes, and how.
	Edit *configkey.Rule
	// Fallback marks a rule of a package: "*" file that handles what no
	// other rule does: it acts only on files the policy forbids, after
	// every package rule and every other "*" rule, and what it handles is
	// reported as unreviewed (apply warns, audit lists, check fails).
	Fallback  bool
	MustMatch bool
	Waiver    string // when set, findings of this rule are warnings, with this reason
	// StaleReason says why the rule may match nothing in a newer
	// package (stale_reason:): the package's own content, not a
	// problem, as podman 4's default network living in the binary.
	// check then reports the stale rule as a warning with this reason.
	StaleReason string
	Reason      string
	Link        string
	Pos         Pos
}

// Rule tiers, in the order they decide: the owning package's rules, then
// rules for any owner, then fallback rules.
const (
	tierPackage = iota
	tierAny
	tierFallback
)

func (r *Rule) tier() int {
	switch {
	case r.Package != AnyPackage:
		return tierPackage
	case r.Fallback:
		return tierFallback
	}
	return tierAny
}

// scope is who a rule speaks for in conflict checks: its package, or for
// rules for any owner its file (several files may say package: "*").
func (r *Rule) scope() string {
	if r.Package == AnyPackage {
		return AnyPackage + r.Pos.File
	}
	return r.Package
}

// AnyPackage is the package name of rules that apply whatever the owner.
const AnyPackage = "*"

// ExistingPolicy says what a relocation does when its destination is
// already in the image.
type ExistingPolicy uint8

const (
	// ExistingError refuses: two packages would claim one path.
	ExistingError ExistingPolicy = iota
	// ExistingStrip drops the relocated file: the image already has a
	// proper copy (containerd's unit under usr/lib/systemd/system).
	ExistingStrip
)

// Addition is a file a rule set adds to the image.
type Addition struct {
	Path    string // destination, cleaned
	Source  string // file under the rules directory, for messages
	Data    []byte // its content, read beneath the rules directory at load
	Mode    uint32
	Package string
	Reason  string
	Pos     Pos
}

// Package groups the rules of one Buildroot package.
type Package struct {
	Name    string
	Aliases []string // every other name, Variants included
	// Variants are the names of another distribution of the package (the
	// cri-o deb beside the static bundle): its rules are the package's,
	// but check locks it under its own name, with its own version, so an
	// image or a lock may hold both.
	Variants []string
	Rules    []*Rule
	Adds     []*Addition
	Pos      Pos
}

// Set is a loaded rule directory.
type Set struct {
	Dir       string
	Policy    []*Forbid
	Keep      []*Keep
	Packages  []*Package // sorted by name
	Templates []*Template
	// BootRuntime is which runtime the image may start at boot (nil:
	// no policy).
	BootRuntime *BootRuntime
	// BootRuntimeRule strips the forbidden runtimes' enablement links; a
	// rule for any owner that decides before the owner's rules (a
	// package's retarget would keep a forbidden runtime enabled).
	BootRuntimeRule *Rule
	// Configs say how each runtime reads its config files (configs:).
	Configs []*Config
	// Digest is the sha256 of every rule file and source, in path order,
	// so a manifest says exactly which rules made an image.
	Digest string

	byName map[string]*Package // canonical names and aliases
}

// Lookup returns the package called name, or one it is an alias of.
func (s *Set) Lookup(name string) *Package {
	return s.byName[name]
}

// LockName is the name check locks the package called name under: its
// package line's name, or a variant's own; a name no rule file gives is
// its own.
func (s *Set) LockName(name string) string {
	p := s.byName[name]
	if p == nil || slices.Contains(p.Variants, name) {
		return name
	}
	return p.Name
}

// Rules returns every package rule, in package then file order.
func (s *Set) Rules() []*Rule {
	var all []*Rule
	for _, p := range s.Packages {
		all = append(all, p.Rules...)
	}
	return all
}

// RuleNamed returns the package rule called name, nil for none.
func (s *Set) RuleNamed(name string) *Rule {
	for _, r := range s.Rules() {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Additions returns every added file, sorted by destination.
func (s *Set) Additions() []*Addition {
	var all []*Addition
	for _, p := range s.Packages {
		all = append(all, p.Adds...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	return all
}

// ForbiddenBy returns the policy items that forbid name, a cleaned path of
// an entry of type t; link is a symlink's target as it is written ("" for
// anything else).
func (s *Set) ForbiddenBy(name string, t EntryType, link string) []*Forbid {
	var hits []*Forbid
	for _, f := range s.Policy {
		if f.Forbids(name, t, link) {
			hits = append(hits, f)
		}
	}
	return hits
}

// Forbids reports whether f forbids name, a cleaned path of an entry of
// type t (link: a symlink's target). apply checks entries with it and
// render the files it finds in /etc at boot, from the policy the index
// carries.
func (f *Forbid) Forbids(name string, t EntryType, link string) bool {
	if len(f.Types) == 0 {
		if t == TypeDir {
			return false
		}
	} else if !slices.Contains(f.Types, t) {
		return false
	}
	if !matchAny(f.Paths, name) || matchAny(f.Allow, name) {
		return false
	}
	return t != TypeSymlink || len(f.AllowTargets) == 0 || !matchAny(f.AllowTargets, pathx.ResolveLink(name, link))
}

// IsKept reports whether name is a directory the policy keeps.
func (s *Set) IsKept(name string) *Keep {
	for _, k := range s.Keep {
		if k.Path == name {
			return k
		}
	}
	return nil
}

// Match returns the rule of package pkg (canonical name) that matches name,
// or nil. Within a package the first rule in file order wins; overlapping
// rules are refused at load time when their actions differ. Fallback rules
// are left to MatchFallback.
func (p *Package) Match(name string) *Rule { return p.match(name, false) }

// MatchFallback returns the first fallback rule that matches name, or nil.
// The caller asks only for a file the policy forbids and no other rule
// handles.
func (p *Package) MatchFallback(name string) *Rule { return p.match(name, true) }

func (p *Package) match(name string, fallback bool) *Rule {
	for _, r := range p.Rules {
		if r.Fallback == fallback && matchAny(r.Paths, name) {
			return r
		}
	}
	return nil
}

// RestoredName is where the boot step puts a deferred file back: its own
// path, or RestoreAs in the same directory.
func (r *Rule) RestoredName(source string) string {
	if r.RestoreAs == "" {
		return source
	}
	if i := strings.LastIndexByte(source, '/'); i >= 0 {
		return source[:i+1] + r.RestoreAs
	}
	return r.RestoreAs
}

func matchAny(ps []Pattern, name string) bool {
	return slices.ContainsFunc(ps, func(p Pattern) bool { return p.Match(name) })
}

// Tag names the condition of a deferred file for its directory.
func (r *Rule) Tag() string {
	switch {
	case r.Runtime != "" && r.CNI != "":
		return r.Runtime + "+" + r.CNI
	case r.Runtime != "":
		return r.Runtime
	default:
		return r.CNI
	}
}
