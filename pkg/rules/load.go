package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// LoadError lists every problem found in a rule directory, each at its
// file:line, so a user fixes them all in one go.
type LoadError struct {
	Problems []string
}

func (e *LoadError) Error() string {
	return strings.Join(e.Problems, "\n")
}

// Load reads every *.yaml file of dir (not recursively: files/ and
// templates/ hold the sources they refer to), validates and compiles them.
//
// Everything is read beneath dir through an os.Root: a symlink that leads
// out of it (files/hostetc -> /etc, say) is refused, naming the link, so a
// rule set can never carry a host file into an image. Sources are read
// once, here; apply writes what was read (Addition.Data, Template.Data).
func Load(dir string) (*Set, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if ok, _ := path.Match("*.yaml", e.Name()); ok {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no rule files (*.yaml)", dir)
	}
	sort.Strings(names)
	l := &loader{set: &Set{Dir: dir, byName: map[string]*Package{}}, dir: dir, root: root,
		ruleNames: map[string]Pos{}, digestFiles: map[string][]byte{}}
	for _, name := range names {
		full := filepath.Join(dir, name)
		data, err := readBeneath(root, name, maxRuleFile)
		if err != nil {
			// Never the content: a link to /etc/shadow is not read.
			var ee *escapeError
			if errors.As(err, &ee) && ee.link == name {
				err = fmt.Errorf("a symlink leading out of the rules directory (to %s)", ee.target)
			}
			l.errorf(Pos{full, 1}, "%v", err)
			continue
		}
		l.digestFiles[name] = data
		l.file(full, data)
	}
	l.bootRuntimeRules()
	l.crossCheck()
	if len(l.problems) > 0 {
		return nil, &LoadError{Problems: l.problems}
	}
	sort.Slice(l.set.Packages, func(i, j int) bool { return l.set.Packages[i].Name < l.set.Packages[j].Name })
	l.set.Digest = digestOf(l.digestFiles)
	return l.set, nil
}

// Bounds on what a rule set reads: rule files and the configuration files
// they add are small; a link to a disk image or a log is a mistake.
const (
	maxRuleFile   = 64 << 20
	maxSourceFile = 16 << 20
)

// readBeneath reads the regular file name (slash-separated, relative to
// root) without following any symlink out of root, and without blocking on
// a fifo. Its errors leave naming the file to the caller.
func readBeneath(root *os.Root, name string, limit int64) ([]byte, error) {
	if link, target, ok := linkOut(root, name); ok {
		return nil, &escapeError{link: link, target: target}
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, unwrapPath(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, unwrapPath(err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("more than the %d bytes a rule set may hold", limit)
	}
	return data, nil
}

// escapeError names the symlink that leads out of the rules directory.
type escapeError struct {
	link, target string
}

func (e *escapeError) Error() string {
	return fmt.Sprintf("%s is a symlink leading out of the rules directory (to %s)", e.link, e.target)
}

// linkOut finds the first symlink on name's path that os.Root refuses to
// follow because it leads out of root, and its target.
func linkOut(root *os.Root, name string) (link, target string, ok bool) {
	parts := strings.Split(name, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := root.Lstat(p)
		if err != nil {
			return "", "", false
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		// os.Root's error for this ("path escapes from parent") is not
		// exported; any failure other than a missing target means the
		// link cannot be followed beneath root.
		if _, err := root.Stat(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			target, _ := root.Readlink(p)
			return p, target, true
		}
	}
	return "", "", false
}

// unwrapPath drops the *PathError's operation and path, which the caller
// names in its own words.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

type loader struct {
	set       *Set
	dir       string
	root      *os.Root
	problems  []string
	ruleNames map[string]Pos
	// digestFiles holds every file read, by its path relative to dir.
	digestFiles map[string][]byte
}

func (l *loader) errorf(pos Pos, format string, args ...any) {
	// One problem per line: values quoted from the file may hold newlines
	// (found by FuzzLoad) or escapes.
	msg := names.Text(fmt.Sprintf(format, args...))
	l.problems = append(l.problems, pos.String()+": "+msg)
}

// located is a scalar with the line it was written on.
type located struct {
	V    string
	Line int
}

func (s *located) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a single value, not a %s", n.Line, kindName(n.Kind))
	}
	s.V, s.Line = n.Value, n.Line
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	}
	return "value"
}

type rawDoc struct {
	Policy    []rawForbid   `yaml:"policy"`
	Keep      []rawKeep     `yaml:"keep"`
	Package   located       `yaml:"package"`
	Aliases   []located     `yaml:"aliases"`
	Variants  []located     `yaml:"variants"`
	Rules     []rawRule     `yaml:"rules"`
	Add       []rawAdd      `yaml:"add"`
	Templates []rawTemplate `yaml:"templates"`
	// BootRuntime is the one-CRI-endpoint policy (bootruntime.go).
	BootRuntime *rawBootRuntime `yaml:"boot_runtime"`
	Configs     []rawConfig     `yaml:"configs"`
}

type rawForbid struct {
	Name   located   `yaml:"name"`
	Forbid []located `yaml:"forbid"`
	Allow  []located `yaml:"allow"`
	// AllowTargets are the symlink targets that are no violation.
	AllowTargets []located `yaml:"allow_targets"`
	Types        []located `yaml:"types"`
	AtBoot       located   `yaml:"at_boot"`
	Reason       located   `yaml:"reason"`
	Link         located   `yaml:"link"`
}

type rawKeep struct {
	Path   located `yaml:"path"`
	Reason located `yaml:"reason"`
}

type rawAdd struct {
	Path   located `yaml:"path"`
	Source located `yaml:"source"`
	Mode   located `yaml:"mode"`
	Reason located `yaml:"reason"`
}

type rawTemplate struct {
	Name    located   `yaml:"name"`
	Source  located   `yaml:"source"`
	Dest    located   `yaml:"dest"`
	Runtime []located `yaml:"runtime"`
	CNI     []located `yaml:"cni"`
	Mode    located   `yaml:"mode"`
	Reason  located   `yaml:"reason"`
}

var (
	yamlLine     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownField = regexp.MustCompile(`^field (.+) not found in type \S+$`)
	quotedValue  = regexp.MustCompile("`[^`]*`")
	// plainWord is what a key or value the decoder complains about may be
	// for the message to quote it. A *.yaml that is really some other file
	// (a link to a password file, say) parses as keys: never quote those.
	plainWord = regexp.MustCompile(`^[A-Za-z0-9_./-]{1,64}$`)
)

func (l *loader) file(name string, data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc rawDoc
	err := dec.Decode(&doc)
	if err == io.EOF {
		l.errorf(Pos{name, 1}, "empty rule file")
		return
	}
	if err != nil {
		l.yamlError(name, data, err)
		return
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		l.errorf(Pos{name, extra.Line}, "one YAML document per rule file")
		return
	}
	for _, f := range doc.Policy {
		l.forbid(name, f)
	}
	for _, k := range doc.Keep {
		pos := Pos{name, k.Path.Line}
		p, err := pathx.CleanRule(k.Path.V)
		if err != nil || k.Path.V == "" {
			l.errorf(pos, "keep: bad path %q", k.Path.V)
			continue
		}
		if k.Reason.V == "" {
			l.errorf(pos, "keep %s: a reason is required", p)
		}
		l.set.Keep = append(l.set.Keep, &Keep{Path: p, Reason: k.Reason.V, Pos: pos})
	}
	for _, t := range doc.Templates {
		l.template(name, t)
	}
	if doc.BootRuntime != nil {
		l.bootRuntime(name, doc.BootRuntime)
	}
	for _, c := range doc.Configs {
		l.config(name, c)
	}
	if doc.Package.V == "" {
		if len(doc.Rules) > 0 || len(doc.Add) > 0 || len(doc.Aliases) > 0 || len(doc.Variants) > 0 {
			l.errorf(Pos{name, 1}, "rules, add, aliases and variants need a package: line")
		}
		return
	}
	l.pkg(name, doc)
}

// yamlError turns the decoder's "line N: ..." messages into file:line ones.
// A syntax error's line is yaml.v3's context mark; it is replaced by the
// problem's (problemLine).
func (l *loader) yamlError(name string, data []byte, err error) {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		for _, m := range te.Errors {
			l.lineMessage(name, m)
		}
		return
	}
	m := err.Error()
	if sm := yamlLine.FindStringSubmatch(m); sm != nil {
		context, _ := strconv.Atoi(sm[1])
		// The context line itself is not shown: for a parser error it is
		// yaml.v3's 0-based mark (the rules: line for a block whose
		// first "-" is the line after).
		m = fmt.Sprintf("line %d: %s", problemLine(data, sm[2], context), sm[2])
	}
	l.lineMessage(name, m)
}

// problemLine finds the line of a syntax error that yaml.v3 reports at the
// line of its context mark (where the enclosing block starts: the rules:
// line, for a bad indent 100 lines below). Its parser knows the problem
// mark too, but parser.fail (decode.go) prefers the context mark and the
// error keeps neither. So: a second parse. The file's first n lines fail
// with the same problem once n takes in the mistake, and not before: the
// smallest such n, found by bisection from the context line (each step one
// parse), is the problem's line. Only a failed load pays for it.
func problemLine(data []byte, problem string, context int) int {
	var ends []int // ends[i]: the offset after line i+1
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	fails := func(n int) bool {
		var node yaml.Node
		err := yaml.Unmarshal(data[:ends[n-1]], &node)
		if err == nil {
			return false
		}
		sm := yamlLine.FindStringSubmatch(err.Error())
		return sm != nil && sm[2] == problem
	}
	lo, hi := max(context, 1), len(ends)
	if lo > hi || !fails(hi) {
		return context
	}
	for lo < hi {
		if mid := (lo + hi) / 2; fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

func (l *loader) lineMessage(name, m string) {
	if sm := yamlLine.FindStringSubmatch(m); sm != nil {
		line, _ := strconv.Atoi(sm[1])
		msg := sm[2]
		if fm := unknownField.FindStringSubmatch(msg); fm != nil {
			msg = fmt.Sprintf("unknown key %q", fm[1])
			if !plainWord.MatchString(fm[1]) {
				msg = "unknown key (not shown: this is not a rule file)"
			}
		}
		msg = quotedValue.ReplaceAllStringFunc(msg, func(v string) string {
			if plainWord.MatchString(strings.Trim(v, "`")) {
				return v
			}
			return "a value (not shown)"
		})
		l.errorf(Pos{name, line}, "%s", msg)
		return
	}
	l.errorf(Pos{name, 1}, "%s", strings.TrimPrefix(m, "yaml: "))
}

func (l *loader) patterns(pos Pos, what string, raw []located) []Pattern {
	var ps []Pattern
	for _, r := range raw {
		p, err := ParsePattern(r.V)
		if err != nil {
			l.errorf(Pos{pos.File, r.Line}, "%s: %v", what, err)
			continue
		}
		ps = append(ps, p)
	}
	return ps
}

func (l *loader) claimName(pos Pos, kind, name string) bool {
	if name == "" {
		l.errorf(pos, "%s without a name", kind)
		return false
	}
	if prev, ok := l.ruleNames[name]; ok {
		l.errorf(pos, "duplicate name %q (first defined at %s)", name, prev)
		return false
	}
	l.ruleNames[name] = pos
	return true
}

func (l *loader) forbid(file string, r rawForbid) {
	pos := Pos{file, r.Name.Line}
	if !l.claimName(pos, "policy item", r.Name.V) {
		return
	}
	f := &Forbid{Name: r.Name.V, Reason: r.Reason.V, Link: r.Link.V, Pos: pos}
	if len(r.Forbid) == 0 {
		l.errorf(pos, "policy %s: forbid: %v", f.Name, errNoPattern)
	}
	f.Paths = l.patterns(pos, "policy "+f.Name+": forbid", r.Forbid)
	f.Allow = l.patterns(pos, "policy "+f.Name+": allow", r.Allow)
	for _, t := range r.Types {
		switch et := EntryType(t.V); et {
		case TypeFile, TypeSymlink, TypeDir, TypeOther:
			f.Types = append(f.Types, et)
		default:
			l.errorf(Pos{file, t.Line}, "policy %s: unknown type %q (want file, symlink, dir or other)", f.Name, t.V)
		}
	}
	f.AllowTargets = l.patterns(pos, "policy "+f.Name+": allow_targets", r.AllowTargets)
	if len(r.AllowTargets) > 0 && len(f.Types) > 0 && !slices.Contains(f.Types, TypeSymlink) {
		l.errorf(Pos{file, r.AllowTargets[0].Line}, "policy %s: allow_targets: only a symlink has a target; add symlink to types:", f.Name)
	}
	switch r.AtBoot.V {
	case "", "report":
	case "remove":
		f.RemoveAtBoot = true
	default:
		l.errorf(Pos{file, r.AtBoot.Line}, "policy %s: at_boot %q: want report or remove", f.Name, r.AtBoot.V)
	}
	if f.Reason == "" {
		l.errorf(pos, "policy %s: a reason is required", f.Name)
	}
	l.set.Policy = append(l.set.Policy, f)
}

func (l *loader) pkg(file string, doc rawDoc) {
	pos := Pos{file, doc.Package.Line}
	p := &Package{Name: doc.Package.V, Pos: pos}
	if p.Name == AnyPackage {
		// Several files may hold rules for any owner (leftovers.yaml,
		// a site's fallback.yaml): one package, rules in file order.
		if prev := l.set.byName[AnyPackage]; prev != nil {
			p = prev
		} else {
			l.set.byName[AnyPackage] = p
			l.set.Packages = append(l.set.Packages, p)
		}
		if len(doc.Aliases) > 0 || len(doc.Variants) > 0 {
			line := append(doc.Aliases, doc.Variants...)[0].Line
			l.errorf(Pos{file, line}, "package \"*\" has no aliases or variants: its rules apply whatever the owner")
		}
		l.pkgContent(file, p, doc)
		return
	}
	names := append(append([]located{doc.Package}, doc.Aliases...), doc.Variants...)
	for i, n := range names {
		if prev, ok := l.set.byName[n.V]; ok {
			l.errorf(Pos{file, n.Line}, "package name %q is already used by package %s at %s", n.V, prev.Name, prev.Pos)
			continue
		}
		l.set.byName[n.V] = p
		if i > 0 {
			p.Aliases = append(p.Aliases, n.V)
		}
		if i > len(doc.Aliases) {
			p.Variants = append(p.Variants, n.V)
		}
	}
	l.pkgContent(file, p, doc)
	l.set.Packages = append(l.set.Packages, p)
}

func (l *loader) pkgContent(file string, p *Package, doc rawDoc) {
	for _, rr := range doc.Rules {
		if r := l.rule(file, p, rr); r != nil {
			p.Rules = append(p.Rules, r)
		}
	}
	for _, ra := range doc.Add {
		if a := l.addition(file, p, ra); a != nil {
			p.Adds = append(p.Adds, a)
		}
	}
}

func (l *loader) rule(file string, p *Package, rr rawRule) *Rule {
	pos := Pos{file, rr.Name.Line}
	if !l.claimName(pos, "rule", rr.Name.V) {
		return nil
	}
	r := &Rule{Name: rr.Name.V, Package: p.Name, Reason: rr.Reason.V, Link: rr.Link.V, Pos: pos,
		Runtime: rr.Runtime.V, CNI: rr.CNI.V, Waiver: rr.Waive.V, StaleReason: rr.Stale.V, MustMatch: true}
	if rr.MustMatch != nil {
		r.MustMatch = *rr.MustMatch
	}
	if rr.Fallback != nil && *rr.Fallback {
		r.Fallback = true
		switch {
		case p.Name != AnyPackage:
			l.errorf(pos, "rule %s: fallback: only goes in a package: \"*\" file (a package's own rules always decide first)", r.Name)
		case rr.Action.V != "strip":
			l.errorf(pos, "rule %s: a fallback rule strips (action: strip): it handles files nobody reviewed", r.Name)
		case r.MustMatch:
			l.errorf(pos, "rule %s: a fallback rule needs must_match: false (it is for files no rule names)", r.Name)
		}
	}
	if r.StaleReason != "" && !r.MustMatch {
		l.errorf(Pos{file, rr.Stale.Line}, "rule %s: stale_reason needs a must-match rule (must_match: false never goes stale)", r.Name)
	}
	if len(rr.Match) == 0 {
		l.errorf(pos, "rule %s: match: %v", r.Name, errNoPattern)
	}
	r.Paths = l.patterns(pos, "rule "+r.Name+": match", rr.Match)
	def, ok := actionNamed(rr.Action.V)
	if !ok {
		l.errorf(Pos{file, max(rr.Action.Line, pos.Line)}, "rule %s: action %q: want %s", r.Name, rr.Action.V, wantActions())
	}
	r.Action = def.action
	if r.Reason == "" {
		l.errorf(pos, "rule %s: a reason is required: say which problem it prevents", r.Name)
	}
	if def.load != nil {
		def.load(l, pos, rr, r)
	}
	l.checkFields(file, r.Name, def, &rr)
	return r
}

// wantActions lists every action for a message: "strip, defer or relocate".
func wantActions() string {
	var all []string
	for _, d := range actionDefs {
		all = append(all, d.name)
	}
	return orList(all)
}

// orList joins words as a message says them: "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// takenBy lists the actions that take field.
func takenBy(field string) []string {
	var out []string
	for _, d := range actionDefs {
		if slices.Contains(d.takes, field) {
			out = append(out, d.name)
		}
	}
	return out
}

// checkFields refuses the fields of actionFields that the rule sets and its
// action does not take: first those of a group the action takes in part,
// one by one, then each group it does not take at all, as one.
func (l *loader) checkFields(file, rule string, def actionDef, rr *rawRule) {
	takes := func(f ruleField) bool { return slices.Contains(def.takes, f.name) }
	for _, group := range actionFields {
		if !slices.ContainsFunc(group, takes) {
			continue
		}
		for _, f := range group {
			if v := f.get(rr); v.V != "" && !takes(f) {
				l.errorf(Pos{file, v.Line}, "rule %s: %s: only goes with action %s", rule, f.name, orList(takenBy(f.name)))
			}
		}
	}
	for _, group := range actionFields {
		if slices.ContainsFunc(group, takes) {
			continue
		}
		set, line := false, 0
		for _, f := range group {
			v := f.get(rr)
			set, line = set || v.V != "", line+v.Line
		}
		if !set {
			continue
		}
		if len(group) == 1 {
			l.errorf(Pos{file, line}, "rule %s: %s: only goes with action %s", rule, group[0].name, orList(takenBy(group[0].name)))
			continue
		}
		// The actions that take the whole group, and those that take a
		// part: "to:/existing: only go with action relocate (to: also
		// with retarget)".
		var names []string
		for _, f := range group {
			names = append(names, f.name+":")
		}
		var all, also []string
		for _, d := range actionDefs {
			if !slices.ContainsFunc(group, func(f ruleField) bool { return !slices.Contains(d.takes, f.name) }) {
				all = append(all, d.name)
			}
		}
		for _, f := range group {
			var extra []string
			for _, a := range takenBy(f.name) {
				if !slices.Contains(all, a) {
					extra = append(extra, a)
				}
			}
			if len(extra) > 0 {
				also = append(also, f.name+": also with "+orList(extra))
			}
		}
		msg := strings.TrimSuffix(strings.Join(names, "/"), ":") + ": only go with action " + orList(all)
		if len(also) > 0 {
			msg += " (" + strings.Join(also, "; ") + ")"
		}
		l.errorf(Pos{file, line}, "rule %s: %s", rule, msg)
	}
}

func (l *loader) checkChoice(pos Pos, rule, what, v string, allowed []string) {
	if v == "" || slices.Contains(allowed, v) {
		return
	}
	l.errorf(pos, "rule %s: %s %q: want one of %s", rule, what, v, strings.Join(allowed, ", "))
}

// source reads a file a rule names, beneath the rules directory, and
// returns its path (for messages) and content.
func (l *loader) source(pos Pos, what, src string) (string, []byte, bool) {
	if src == "" {
		l.errorf(pos, "%s: source: is required", what)
		return "", nil, false
	}
	clean, err := pathx.Clean(src)
	if err != nil || path.IsAbs(src) || clean == "." {
		l.errorf(pos, "%s: source %q must be a path inside the rules directory", what, src)
		return "", nil, false
	}
	data, err := readBeneath(l.root, clean, maxSourceFile)
	if err != nil {
		l.errorf(pos, "%s: source %s: %v", what, src, err)
		return "", nil, false
	}
	l.digestFiles[clean] = data
	return filepath.Join(l.dir, filepath.FromSlash(clean)), data, true
}

func parseMode(s string, def uint32) (uint32, error) {
	if s == "" {
		return def, nil
	}
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o7777 {
		return 0, fmt.Errorf("mode %q: want octal permissions such as \"0644\"", s)
	}
	return uint32(m), nil
}

func (l *loader) addition(file string, p *Package, ra rawAdd) *Addition {
	pos := Pos{file, ra.Path.Line}
	dest, err := pathx.CleanRule(ra.Path.V)
	if err != nil || dest == "." {
		l.errorf(pos, "add: bad path %q", ra.Path.V)
		return nil
	}
	what := "add " + dest
	src, data, ok := l.source(Pos{file, max(ra.Source.Line, pos.Line)}, what, ra.Source.V)
	if !ok {
		return nil
	}
	mode, err := parseMode(ra.Mode.V, 0o644)
	if err != nil {
		l.errorf(Pos{file, ra.Mode.Line}, "%s: %v", what, err)
	}
	if ra.Reason.V == "" {
		l.errorf(pos, "%s: a reason is required", what)
	}
	return &Addition{Path: dest, Source: src, Data: data, Mode: mode, Package: p.Name, Reason: ra.Reason.V, Pos: pos}
}

func (l *loader) template(file string, rt rawTemplate) {
	pos := Pos{file, rt.Name.Line}
	if !l.claimName(pos, "template", rt.Name.V) {
		return
	}
	t := &Template{Name: rt.Name.V, Reason: rt.Reason.V, Pos: pos}
	dest, err := pathx.CleanRule(rt.Dest.V)
	switch {
	case rt.Dest.V == "":
		l.errorf(pos, "template %s: dest: is required", t.Name)
	case err != nil:
		l.errorf(Pos{file, rt.Dest.Line}, "template %s: dest: %v", t.Name, err)
	case !strings.HasPrefix(dest, "etc/"):
		l.errorf(Pos{file, rt.Dest.Line}, "template %s: dest %q is outside /etc; the boot step only writes configuration", t.Name, rt.Dest.V)
	}
	t.Dest = dest
	src, data, ok := l.source(Pos{file, max(rt.Source.Line, pos.Line)}, "template "+t.Name, rt.Source.V)
	if ok {
		t.Source, t.Data = src, data
	}
	for _, v := range rt.Runtime {
		l.checkChoice(Pos{file, v.Line}, t.Name, "runtime", v.V, contract.Runtimes)
		t.When.Runtimes = append(t.When.Runtimes, v.V)
	}
	for _, v := range rt.CNI {
		l.checkChoice(Pos{file, v.Line}, t.Name, "cni", v.V, contract.CNIs)
		t.When.CNIs = append(t.When.CNIs, v.V)
	}
	if ok {
		if err := checkTemplate(t); err != nil {
			l.errorf(Pos{file, rt.Source.Line}, "template %s: %v", t.Name, err)
		}
	}
	if t.Mode, err = parseMode(rt.Mode.V, 0o644); err != nil {
		l.errorf(Pos{file, rt.Mode.Line}, "template %s: %v", t.Name, err)
	}
	if t.Reason == "" {
		l.errorf(pos, "template %s: a reason is required", t.Name)
	}
	l.set.Templates = append(l.set.Templates, t)
}

// checkTemplate refuses at load what would fail or run without bound at
// boot: it parses the template within the step bound and renders it, within
// the output and time bounds, for every runtime and CNI its condition
// allows, with sample values.
func checkTemplate(t *Template) error {
	tmpl, err := DefaultTemplateLimits.Parse(t.Name, t.Data)
	if err != nil {
		return err
	}
	for _, runtime := range contract.Runtimes {
		for _, cni := range contract.CNIs {
			if !t.When.Holds(runtime, cni) {
				continue
			}
			if _, err := DefaultTemplateLimits.run(tmpl, SampleData(tmpl, runtime, cni)); err != nil {
				return fmt.Errorf("with runtime %s and cni %s: %w", runtime, cni, err)
			}
		}
	}
	return nil
}

// crossCheck finds conflicts between rules of different places: one path
// claimed with different outcomes, additions colliding, relocations onto
// forbidden paths.
func (l *loader) crossCheck() {
	rules := l.set.Rules()
	l.ruleConflicts(rules)
	for _, a := range rules {
		if a.Action == Relocate && !strings.HasSuffix(a.To, "/") {
			if hits := l.set.ForbiddenBy(a.To, TypeFile, ""); len(hits) > 0 {
				l.errorf(a.Pos, "rule %s relocates to %s, which policy %s forbids", a.Name, a.To, hits[0].Name)
			}
		}
	}
	seen := map[string]*Addition{}
	for _, a := range l.set.Additions() {
		if prev, ok := seen[a.Path]; ok {
			l.errorf(a.Pos, "add %s: already added at %s", a.Path, prev.Pos)
		}
		seen[a.Path] = a
		if hits := l.set.ForbiddenBy(a.Path, TypeFile, ""); len(hits) > 0 {
			l.errorf(a.Pos, "add %s: policy %s forbids that path", a.Path, hits[0].Name)
		}
	}
}

// outcome is what a rule does with a path it matches: rules of different
// packages that match one path must agree on it.
type outcome struct {
	action        Action
	to, tag, edit string
}

func outcomeOf(r *Rule) outcome {
	o := outcome{r.Action, r.To, r.Tag() + "/" + r.RestoreAs, ""}
	if r.Edit != nil {
		o.edit = r.Edit.String()
	}
	return o
}

// SameOutcome reports whether rules a and b do the same with a path both
// match, as the load-time conflict check compares them.
func SameOutcome(a, b *Rule) bool { return outcomeOf(a) == outcomeOf(b) }

type globRef struct {
	rule int
	p    Pattern
}

// ruleConflicts reports each rule that can match a path an earlier rule of
// another package also matches, with another outcome. The paths checked
// are the literal ones (glob against glob is undecidable in general and
// left to the run-time checks). Each literal path forms a group of the
// rules that match it: those naming it, found in a map, and the globs
// whose literal prefix (the text before the first wildcard) is a prefix
// of it, found by looking each of its prefixes up, then matched. So the
// cost is O(P·L + M) for P literal paths of length up to L and M pairs of
// a glob and a path that starts with the glob's literal prefix, instead
// of comparing every pair of rules.
//
// Rules decide in tiers (the owning package's, then any owner's, then the
// fallback), so only rules of one tier can contradict each other: each
// tier is checked on its own.
func (l *loader) ruleConflicts(all []*Rule) {
	tiers := make([][]*Rule, tierFallback+1)
	for _, r := range all {
		tiers[r.tier()] = append(tiers[r.tier()], r)
	}
	for _, rules := range tiers {
		l.tierConflicts(rules)
	}
}

func (l *loader) tierConflicts(rules []*Rule) {
	byPath := map[string][]int{} // literal path -> indexes of the rules naming it
	var paths []string           // in first-seen order, for a stable report
	globs := map[string][]globRef{}
	for i, r := range rules {
		for _, p := range r.Paths {
			lit, ok := p.Literal()
			if !ok {
				globs[p.prefix] = append(globs[p.prefix], globRef{i, p})
				continue
			}
			have := byPath[lit]
			if len(have) == 0 {
				paths = append(paths, lit)
			}
			if len(have) == 0 || have[len(have)-1] != i {
				byPath[lit] = append(have, i)
			}
		}
	}
	reported := map[int]bool{}
	var group []int
	for _, p := range paths {
		group = append(group[:0], byPath[p]...)
		if len(globs) > 0 {
			for k := 0; k <= len(p); k++ {
				for _, g := range globs[p[:k]] {
					if g.p.Match(p) {
						group = append(group, g.rule)
					}
				}
			}
		}
		if len(group) < 2 {
			continue
		}
		sort.Ints(group)
		group = slices.Compact(group)
		l.groupConflicts(rules, group, byPath[p], p, reported)
	}
}

// groupConflicts reports, in a group of rules (sorted by rule order) that
// all match path, each rule that an earlier rule of another package
// contradicts, where one of the two names path literally (lits, sorted).
// Whether one does is counted (earlier rules, minus those of the same
// package, minus those with the same outcome, plus those with both), so a
// group costs its size unless it holds conflicts.
func (l *loader) groupConflicts(rules []*Rule, group, lits []int, path string, reported map[int]bool) {
	type key struct {
		scope string
		out   outcome
	}
	// Counts over the earlier rules, and over the earlier literal ones.
	type counts struct {
		n      int
		byPkg  map[string]int
		byOut  map[outcome]int
		byBoth map[key]int
	}
	newCounts := func() *counts {
		return &counts{byPkg: map[string]int{}, byOut: map[outcome]int{}, byBoth: map[key]int{}}
	}
	all, literal := newCounts(), newCounts()
	isLit := func(i int) bool {
		_, ok := slices.BinarySearch(lits, i)
		return ok
	}
	for _, j := range group {
		b := rules[j]
		ob := outcomeOf(b)
		bLit := isLit(j)
		c := literal
		if bLit {
			c = all
		}
		if !reported[j] && c.n-c.byPkg[b.scope()]-c.byOut[ob]+c.byBoth[key{b.scope(), ob}] > 0 {
			for _, i := range group {
				if i >= j {
					break
				}
				if a := rules[i]; a.scope() != b.scope() && outcomeOf(a) != ob && (bLit || isLit(i)) {
					l.errorf(b.Pos, "rule %s conflicts with rule %s (%s): both match %s but do different things", b.Name, a.Name, a.Pos, path)
					reported[j] = true
					break
				}
			}
		}
		for _, c := range []*counts{all, literal} {
			if c == literal && !bLit {
				continue
			}
			c.n++
			c.byPkg[b.scope()]++
			c.byOut[ob]++
			c.byBoth[key{b.scope(), ob}]++
		}
	}
}

// digestOf hashes every file read, by its path relative to the rules
// directory: the digest must not depend on where the checkout lives.
func digestOf(files map[string][]byte) string {
	h := digest.New()
	for _, n := range slices.Sorted(maps.Keys(files)) {
		data := files[n]
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(data))
		h.Write(data)
	}
	return "sha256:" + digest.Sum(h)
}
