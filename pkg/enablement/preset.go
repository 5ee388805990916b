package enablement

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// PresetDirs are where systemctl looks for system preset files, in the
// order read_presets (src/shared/install.c) passes them to
// conf_files_list: a file name in an earlier directory hides the same name
// in a later one. /lib/systemd/system-preset is read only by a split-/usr
// build; minikube's and kicbase's images merge /usr.
var PresetDirs = []string{
	"etc/systemd/system-preset",
	"run/systemd/system-preset",
	"usr/local/lib/systemd/system-preset",
	"usr/lib/systemd/system-preset",
}

// PresetAction is what a preset line says of the units it matches.
type PresetAction uint8

const (
	// Enable: preset-all makes the links the unit's [Install] asks for.
	Enable PresetAction = iota + 1
	// Disable: preset-all removes every link to the unit in /etc and /run.
	Disable
	// Ignore (systemd 254 on): preset-all leaves the unit as it is.
	Ignore
)

func (a PresetAction) String() string {
	switch a {
	case Enable:
		return "enable"
	case Disable:
		return "disable"
	case Ignore:
		return "ignore"
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// PresetRule is one line of a preset file.
type PresetRule struct {
	Action  PresetAction
	Pattern string // an fnmatch(3) pattern, backslash literal
	// Instances are the instances an "enable foo@.service a b" line names.
	Instances []string
	File      string // the file's path in the image
	Line      int
}

func (r PresetRule) String() string {
	return fmt.Sprintf("%s:%d: %s %s", r.File, r.Line, r.Action, strings.Join(append([]string{r.Pattern}, r.Instances...), " "))
}

// Presets are the rules of every preset file, in the order systemctl
// reads them: the first that matches a unit decides.
type Presets []PresetRule

// ParsePreset reads one preset file as read_presets does: blank lines and
// lines starting with # or ; are skipped, and so is (with a warning from
// systemctl) any line that is no rule; "disable" keeps the rest of the
// line as its pattern, "enable" takes one unit name and, for a template,
// instance names.
func ParsePreset(file string, data []byte) Presets {
	var ps Presets
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := strings.Trim(sc.Text(), " \t\n\r")
		if l == "" || strings.ContainsRune("#;", rune(l[0])) {
			continue
		}
		for _, a := range []PresetAction{Enable, Disable, Ignore} {
			rest, ok := firstWord(l, a.String())
			if !ok {
				continue
			}
			if r, ok := presetRule(a, rest); ok {
				r.File, r.Line = file, n
				ps = append(ps, r)
			}
		}
	}
	return ps
}

// firstWord is systemd's first_word: s starts with word, followed by
// whitespace or nothing; it returns what follows the whitespace.
func firstWord(s, word string) (string, bool) {
	rest, ok := strings.CutPrefix(s, word)
	if !ok || (rest != "" && !strings.ContainsRune(" \t\n\r", rune(rest[0]))) {
		return "", false
	}
	return strings.TrimLeft(rest, " \t\n\r"), true
}

func presetRule(a PresetAction, rest string) (PresetRule, bool) {
	if a != Enable {
		return PresetRule{Action: a, Pattern: rest}, true
	}
	// split_pattern_into_name_and_instances: instances only for a template.
	words := strings.Fields(rest)
	if len(words) == 0 || len(words) > 1 && !isTemplate(words[0]) {
		return PresetRule{}, false
	}
	return PresetRule{Action: a, Pattern: words[0], Instances: words[1:]}, true
}

// ReadPresets reads the image's preset files as presets_find_config and
// read_presets (src/shared/install.c) do: every *.preset file of
// PresetDirs, one per name (the earliest directory's), in name order
// across the directories; a name linked to /dev/null or empty hides the
// later ones and says nothing.
func ReadPresets(fsys fs.FS) (Presets, error) {
	chosen := map[string]string{}
	for _, dir := range PresetDirs {
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading presets: %w", err)
		}
		for _, e := range entries {
			if _, seen := chosen[e.Name()]; !seen && strings.HasSuffix(e.Name(), ".preset") {
				chosen[e.Name()] = path.Join(dir, e.Name())
			}
		}
	}
	names := make([]string, 0, len(chosen))
	for n := range chosen {
		names = append(names, n)
	}
	slices.Sort(names)
	var ps Presets
	for _, n := range names {
		data, err := readInImage(fsys, chosen[n])
		if errors.Is(err, fs.ErrNotExist) { // dangling, or masked by /dev/null
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading presets: %w", err)
		}
		ps = append(ps, ParsePreset(chosen[n], data)...)
	}
	return ps, nil
}

// readInImage reads a file of the image, a symlink's target resolved in
// the image (an absolute target from its root, as systemctl --root
// does), one link deep. /dev/null, which masks, is not there.
func readInImage(fsys fs.FS, name string) ([]byte, error) {
	target, err := fs.ReadLink(fsys, name)
	switch {
	case err == nil && target == "/dev/null":
		return nil, fs.ErrNotExist
	case err == nil:
		name = pathx.ResolveLink(name, target)
	}
	return fs.ReadFile(fsys, name)
}

// Query returns the rule that decides unit (query_presets: the first rule
// whose pattern matches it, or whose template and instances name it), and
// false when none does, which preset-all takes as enable.
func (ps Presets) Query(unit string) (PresetRule, bool) {
	for _, r := range ps {
		if r.matchesInstance(unit) || fnmatch(r.Pattern, unit) {
			return r, true
		}
	}
	return PresetRule{}, false
}

// Enables reports whether preset-all enables unit.
func (ps Presets) Enables(unit string) bool {
	r, ok := ps.Query(unit)
	return !ok || r.Action == Enable
}

// matchesInstance is pattern_match_multiple_instances: an "enable
// foo@.service a b" line matches foo@.service (preset-all then enables
// foo@a.service and foo@b.service) and the instances foo@a.service and
// foo@b.service.
func (r PresetRule) matchesInstance(unit string) bool {
	if len(r.Instances) == 0 {
		return false
	}
	at := strings.IndexByte(unit, '@')
	dot := strings.LastIndexByte(unit, '.')
	if at < 0 || dot < at {
		return false
	}
	if unit[:at+1]+unit[dot:] != r.Pattern {
		return false
	}
	return at+1 == dot || slices.Contains(r.Instances, unit[at+1:dot])
}

func isTemplate(unit string) bool {
	at := strings.IndexByte(unit, '@')
	dot := strings.LastIndexByte(unit, '.')
	return at > 0 && dot == at+1
}

// fnmatch is fnmatch(3) with FNM_NOESCAPE and no other flag, as
// query_presets calls it: * and ? match any character, / and a leading
// dot included; [...] is a set, [!...] or [^...] its complement; a
// backslash is itself.
func fnmatch(pattern, name string) bool {
	p, n := []rune(pattern), []rune(name)
	var pi, ni, starP, starN = 0, 0, -1, 0
	for ni < len(n) {
		if pi < len(p) {
			switch c := p[pi]; c {
			case '*':
				starP, starN = pi, ni
				pi++
				continue
			case '?':
				pi++
				ni++
				continue
			case '[':
				if end, ok := matchSet(p[pi:], n[ni]); end > 0 {
					if ok {
						pi += end
						ni++
						continue
					}
				} else if n[ni] == '[' { // no closing ]: a literal [
					pi++
					ni++
					continue
				}
			default:
				if c == n[ni] {
					pi++
					ni++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starN++
		pi, ni = starP+1, starN
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchSet matches c against the set that p starts with; end is the
// set's length, 0 when it has no closing ].
func matchSet(p []rune, c rune) (end int, ok bool) {
	i := 1
	negate := i < len(p) && (p[i] == '!' || p[i] == '^')
	if negate {
		i++
	}
	for first := true; i < len(p); first = false {
		if p[i] == ']' && !first {
			return i + 1, ok != negate
		}
		lo := p[i]
		if i+2 < len(p) && p[i+1] == '-' && p[i+2] != ']' {
			ok = ok || (lo <= c && c <= p[i+2])
			i += 3
			continue
		}
		ok = ok || lo == c
		i++
	}
	return 0, false
}
