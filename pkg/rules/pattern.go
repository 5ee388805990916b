package rules

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Pattern is a glob over cleaned archive paths, anchored at the rootfs root:
// `*`, `?` and classes never cross `/`, a whole `**` segment matches zero or
// more directories, `{a,b}` alternates. "/etc/x", "./etc/x" and "etc/x" are
// the same pattern.
type Pattern struct {
	// Raw is the pattern as written, for messages.
	Raw  string
	glob string
	// literal is set when the pattern has no metacharacter: a plain path
	// compares faster and tells export which rules Buildroot can express.
	literal bool
	prefix  string // the glob's text before its first metacharacter
}

// ParsePattern normalises and validates a glob. doublestar validates syntax
// only; this also refuses patterns that can never match a cleaned path
// ("etc/cni**", "etc//x", "../x") or that would match the whole tree.
func ParsePattern(raw string) (Pattern, error) {
	p := strings.TrimSpace(raw)
	if p != raw {
		return Pattern{}, fmt.Errorf("pattern %q has leading or trailing spaces", raw)
	}
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	p = strings.TrimLeft(p, "/")
	p = strings.TrimSuffix(p, "/")
	if strings.TrimSpace(p) != p {
		// "0 /" would otherwise become the glob "0 " (found by fuzzing).
		return Pattern{}, fmt.Errorf("pattern %q has leading or trailing spaces", raw)
	}
	if p == "" || p == "." {
		return Pattern{}, fmt.Errorf("pattern %q names the root itself", raw)
	}
	if !doublestar.ValidatePattern(p) {
		return Pattern{}, fmt.Errorf("pattern %q is not a valid glob", raw)
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return Pattern{}, fmt.Errorf("pattern %q has an empty path segment", raw)
		case seg == "." || seg == "..":
			return Pattern{}, fmt.Errorf("pattern %q has a %q segment; archive paths are cleaned", raw, seg)
		case strings.Contains(seg, "**") && seg != "**":
			return Pattern{}, fmt.Errorf("pattern %q: ** must be a whole path segment (%q never matches across directories); write %q",
				raw, seg, strings.Replace(seg, "**", "*", 1)+" or "+"…/**")
		}
	}
	if strings.Trim(p, "*/") == "" {
		return Pattern{}, fmt.Errorf("pattern %q matches the whole rootfs", raw)
	}
	meta := strings.IndexAny(p, `*?[{\`)
	if meta < 0 {
		return Pattern{Raw: raw, glob: p, literal: true}, nil
	}
	// Without its last slash: "etc/cni/**" matches "etc/cni" too.
	prefix := strings.TrimSuffix(p[:meta], "/")
	return Pattern{Raw: raw, glob: p, prefix: prefix}, nil
}

// Match reports whether the cleaned archive path name matches.
func (p Pattern) Match(name string) bool {
	if p.literal {
		return p.glob == name
	}
	// Every entry of a tree meets every pattern: most are told apart by
	// the literal part before the first wildcard, and the glob was
	// validated when it was compiled.
	if !strings.HasPrefix(name, p.prefix) {
		return false
	}
	return doublestar.MatchUnvalidated(p.glob, name)
}

// Literal returns the path when the pattern is a plain path.
func (p Pattern) Literal() (string, bool) { return p.glob, p.literal }

func (p Pattern) String() string { return p.glob }

// Dirs lists the directories every path the pattern matches lies in, as
// far as its literal text says: "etc", "etc/cni" and "etc/cni/net.d" for
// etc/cni/net.d/*.conf. A symlink at one of them changes what the booted
// system sees there.
func (p Pattern) Dirs() []string {
	text := p.glob
	if i := strings.IndexAny(text, `*?[{\`); i >= 0 {
		text = text[:i]
	}
	var dirs []string
	for i := 0; i < len(text); i++ {
		if text[i] == '/' {
			dirs = append(dirs, text[:i])
		}
	}
	return dirs
}

// MatchesIn reports whether the pattern can match a path directly in the
// directory dir (a cleaned path, "." for the root): a directory whose
// mtime apply keeps when it takes such a path out of it. A whole "**" as
// the last segment matches its directory too ("etc/cni/net.mk/**" takes
// etc/cni/net.mk out of etc/cni).
func (p Pattern) MatchesIn(dir string) bool {
	parent := func(g string) string {
		if i := strings.LastIndexByte(g, '/'); i >= 0 {
			return g[:i]
		}
		return "."
	}
	holds := func(g string) bool {
		if g == "." || dir == "." {
			return g == dir
		}
		return doublestar.MatchUnvalidated(g, dir)
	}
	if g, ok := strings.CutSuffix(p.glob, "/**"); ok && (holds(p.glob) || holds(parent(g))) {
		return true
	}
	return holds(parent(p.glob))
}

var errNoPattern = errors.New("no paths given")
