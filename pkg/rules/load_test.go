package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The rules the project ships must load cleanly.
func TestShippedRulesLoad(t *testing.T) {
	set, err := Load(filepath.Join("..", "..", "rules"))
	if err != nil {
		t.Fatalf("shipped rules: %v", err)
	}
	for _, pkg := range []string{"podman", "crio-bin", "cri-o", "containerd-bin", "cri-containerd-cni", "cri-dockerd", "buildkit", "*"} {
		if set.Lookup(pkg) == nil {
			t.Errorf("no rules for package %s", pkg)
		}
	}
	if !strings.HasPrefix(set.Digest, "sha256:") {
		t.Errorf("digest %q", set.Digest)
	}
	for _, r := range set.Rules() {
		if r.Reason == "" || r.Link == "" {
			t.Errorf("rule %s (%s) has no reason or link", r.Name, r.Pos)
		}
	}
}

func TestPatterns(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		nomatch []string
		err     string
	}{
		{pattern: "etc/cni/net.d/*", match: []string{"etc/cni/net.d/a.conf", "etc/cni/net.d/.keep"}, nomatch: []string{"etc/cni/net.d", "etc/cni/net.d/sub/a"}},
		{pattern: "/etc/crictl.yaml", match: []string{"etc/crictl.yaml"}},
		{pattern: "./etc/crictl.yaml", match: []string{"etc/crictl.yaml"}, nomatch: []string{"usr/etc/crictl.yaml"}},
		{pattern: "etc/cni/**", match: []string{"etc/cni", "etc/cni/net.d/x/y"}},
		{pattern: "etc/systemd/system/*.{service,socket}", match: []string{"etc/systemd/system/a.socket"}, nomatch: []string{"etc/systemd/system/multi-user.target.wants/a.service"}},
		{pattern: "etc/cni**", err: "** must be a whole path segment"},
		{pattern: "etc//x", err: "empty path segment"},
		{pattern: "etc/../x", err: `".." segment`},
		{pattern: "etc/[x", err: "not a valid glob"},
		{pattern: "**", err: "whole rootfs"},
		{pattern: "/", err: "root itself"},
		{pattern: " etc/x", err: "spaces"},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			p, err := ParsePattern(tc.pattern)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.match {
				if !p.Match(m) {
					t.Errorf("%s does not match %s", tc.pattern, m)
				}
			}
			for _, m := range tc.nomatch {
				if p.Match(m) {
					t.Errorf("%s matches %s", tc.pattern, m)
				}
			}
		})
	}
}

func writeRules(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const okPolicy = `policy:
  - name: cni
    forbid: ["etc/cni/net.d/*"]
    reason: first config wins
`

// Every rule-file mistake is reported at its file:line.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"unknown key", map[string]string{"a.yaml": okPolicy + "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    actoin: strip\n    reason: x\n"},
			[]string{`a.yaml:9: unknown key "actoin"`}},
		{"allow_targets for files only", map[string]string{"a.yaml": "policy:\n  - name: f\n    forbid: [etc/x]\n    types: [file]\n    allow_targets: [/dev/null]\n    reason: x\n"},
			[]string{`a.yaml:5: policy f: allow_targets: only a symlink has a target; add symlink to types:`}},
		{"allow_targets bad glob", map[string]string{"a.yaml": "policy:\n  - name: f\n    forbid: [etc/x]\n    allow_targets: [\"usr/lib**\"]\n    reason: x\n"},
			[]string{`a.yaml:4: policy f: allow_targets: pattern "usr/lib**"`}},
		{"missing action", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    reason: x\n"},
			[]string{`a.yaml:3: rule r: action "": want strip, defer, relocate, retarget or edit`}},
		{"retarget without to", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: retarget\n    reason: x\n"},
			[]string{`a.yaml:3: rule r: retarget needs to: (the link's new target)`}},
		{"retarget with existing", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: retarget\n    to: /usr/x\n    existing: strip\n    reason: x\n"},
			[]string{`a.yaml:7: rule r: existing: only goes with action relocate`}},
		{"retarget to a bad target", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: retarget\n    to: \" /usr/x\"\n    reason: x\n"},
			[]string{`a.yaml:6: rule r: to: bad link target " /usr/x"`}},
		{"bad glob", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match:\n      - etc/cni**\n    action: strip\n    reason: x\n"},
			[]string{`a.yaml:5: rule r: match: pattern "etc/cni**": ** must be a whole path segment`}},
		{"duplicate rule", map[string]string{
			"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: strip\n    reason: x\n",
			"b.yaml": "package: q\nrules:\n  - name: r\n    match: [etc/y]\n    action: strip\n    reason: x\n"},
			[]string{`b.yaml:3: duplicate name "r" (first defined at `}},
		{"conflict", map[string]string{
			"a.yaml": "package: p\nrules:\n  - name: r1\n    match: [etc/x]\n    action: strip\n    reason: x\n",
			"b.yaml": "package: q\nrules:\n  - name: r2\n    match: [\"etc/*\"]\n    action: relocate\n    to: usr/\n    reason: x\n"},
			[]string{`b.yaml:3: rule r2 conflicts with rule r1 (`, `both match etc/x`}},
		{"duplicate package", map[string]string{
			"a.yaml": "package: p\naliases: [q]\n",
			"b.yaml": "package: q\n"},
			[]string{`b.yaml:1: package name "q" is already used by package p`}},
		{"fallback in a package", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: strip\n    fallback: true\n    must_match: false\n    reason: x\n"},
			[]string{`a.yaml:3: rule r: fallback: only goes in a package: "*" file`}},
		{"fallback that defers", map[string]string{"a.yaml": "package: \"*\"\nrules:\n  - name: r\n    match: [etc/x]\n    action: defer\n    runtime: crio\n    fallback: true\n    must_match: false\n    reason: x\n"},
			[]string{`a.yaml:3: rule r: a fallback rule strips`}},
		{"fallback must match", map[string]string{"a.yaml": "package: \"*\"\nrules:\n  - name: r\n    match: [etc/x]\n    action: strip\n    fallback: true\n    reason: x\n"},
			[]string{`a.yaml:3: rule r: a fallback rule needs must_match: false`}},
		{"two any-owner files disagree", map[string]string{
			"a.yaml": "package: \"*\"\nrules:\n  - name: r1\n    match: [etc/x]\n    action: strip\n    reason: x\n",
			"b.yaml": "package: \"*\"\nrules:\n  - name: r2\n    match: [\"etc/*\"]\n    action: relocate\n    to: usr/\n    reason: x\n"},
			[]string{`b.yaml:3: rule r2 conflicts with rule r1 (`}},
		{"aliases for any owner", map[string]string{"a.yaml": "package: \"*\"\naliases: [x]\n"},
			[]string{`a.yaml:2: package "*" has no aliases`}},
		{"variants for any owner", map[string]string{"a.yaml": "package: \"*\"\nvariants: [x]\n"},
			[]string{`a.yaml:2: package "*" has no aliases or variants`}},
		{"a variant another package's name", map[string]string{
			"a.yaml": "package: p\nvariants: [q]\n",
			"b.yaml": "package: q\n"},
			[]string{`b.yaml:1: package name "q" is already used by package p`}},
		{"variants with no package", map[string]string{"a.yaml": "variants: [q]\n"},
			[]string{`a.yaml:1: rules, add, aliases and variants need a package: line`}},
		{"restore_as with a directory", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: defer\n    runtime: crio\n    restore_as: ../y\n    reason: x\n"},
			[]string{`a.yaml:7: rule r: restore_as: "../y": want a file name`}},
		{"restore_as without defer", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: strip\n    restore_as: y\n    reason: x\n"},
			[]string{`a.yaml:6: rule r: restore_as: only goes with action defer`}},
		{"to without relocate", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: strip\n    to: /usr/x\n    reason: x\n"},
			[]string{`a.yaml:6: rule r: to:/existing: only go with action relocate (to: also with retarget)`}},
		{"cni without defer", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: relocate\n    to: /usr/x\n    cni: bridge\n    reason: x\n"},
			[]string{`a.yaml:7: rule r: runtime:/cni: only go with action defer`}},
		{"stale_reason without must_match", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: strip\n    must_match: false\n    stale_reason: gone in v4\n    reason: x\n"},
			[]string{`a.yaml:7: rule r: stale_reason needs a must-match rule`}},
		{"missing reason", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: strip\n"},
			[]string{`a.yaml:3: rule r: a reason is required`}},
		{"defer without condition", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: defer\n    reason: x\n"},
			[]string{`a.yaml:3: rule r: defer needs runtime: or cni:`}},
		{"unknown runtime", map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: defer\n    runtime: rkt\n    reason: x\n"},
			[]string{`a.yaml:6: rule r: runtime "rkt": want one of containerd, crio, docker`}},
		{"add collides with policy", map[string]string{"a.yaml": okPolicy + "package: p\nadd:\n  - path: /etc/cni/net.d/x.conf\n    source: f\n    reason: x\n", "f": "x"},
			[]string{`a.yaml:7: add etc/cni/net.d/x.conf: policy cni forbids that path`}},
		{"missing source", map[string]string{"a.yaml": "package: p\nadd:\n  - path: etc/x\n    source: nope\n    reason: x\n"},
			[]string{`a.yaml:4: add etc/x: source nope: no such file or directory`}},
		{"source escapes", map[string]string{"a.yaml": "package: p\nadd:\n  - path: etc/x\n    source: ../../etc/passwd\n    reason: x\n"},
			[]string{`a.yaml:4: add etc/x: source "../../etc/passwd" must be a path inside the rules directory`}},
		{"template outside etc", map[string]string{"a.yaml": "templates:\n  - name: t\n    source: t.tmpl\n    dest: /usr/bin/evil\n    reason: x\n", "t.tmpl": "x"},
			[]string{`a.yaml:4: template t: dest "/usr/bin/evil" is outside /etc`}},
		{"template syntax", map[string]string{"a.yaml": "templates:\n  - name: t\n    source: t.tmpl\n    dest: etc/x\n    reason: x\n", "t.tmpl": "{{ .Runtime"},
			[]string{`a.yaml:3: template t: template: t:1: unclosed action`}},
		{"bad mode", map[string]string{"a.yaml": "package: p\nadd:\n  - path: etc/x\n    source: f\n    mode: rw-r--r--\n    reason: x\n", "f": "x"},
			[]string{`a.yaml:5: add etc/x: mode "rw-r--r--": want octal permissions`}},
		{"not yaml", map[string]string{"a.yaml": "package: [\n"},
			[]string{`a.yaml:`}},
		{"two documents", map[string]string{"a.yaml": okPolicy + "---\npackage: p\n"},
			[]string{`a.yaml:5: one YAML document per rule file`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeRules(t, tc.files)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", msg, w)
				}
			}
		})
	}
}

// Precedence: a package's rule, then rules for any owner (several files
// may say package: "*"), then fallback rules; none of them conflicts with
// a rule of another tier matching the same path.
func TestPrecedence(t *testing.T) {
	dir := writeRules(t, map[string]string{
		"policy.yaml":    okPolicy,
		"p.yaml":         "package: p\nrules:\n  - name: p-defer\n    match: [etc/cni/net.d/a.conf]\n    action: defer\n    runtime: crio\n    reason: x\n",
		"leftovers.yaml": "package: \"*\"\nrules:\n  - name: any-old\n    match: [\"etc/cni/net.d/*.old\", etc/cni/net.d/a.conf]\n    action: relocate\n    to: usr/share/old/\n    must_match: false\n    reason: x\n",
		"site.yaml":      "package: \"*\"\nrules:\n  - name: site-fallback\n    match: [\"etc/cni/net.d/*\"]\n    action: strip\n    fallback: true\n    must_match: false\n    reason: x\n",
	})
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	any := set.Lookup(AnyPackage)
	if any == nil || len(any.Rules) != 2 {
		t.Fatalf("package \"*\": %+v", any)
	}
	got := map[string]string{}
	for _, name := range []string{"etc/cni/net.d/a.conf", "etc/cni/net.d/b.old", "etc/cni/net.d/c.conflist"} {
		var who []string
		if r := set.Lookup("p").Match(name); r != nil {
			who = append(who, r.Name)
		}
		if r := any.Match(name); r != nil {
			who = append(who, r.Name)
		}
		if r := any.MatchFallback(name); r != nil {
			who = append(who, r.Name)
		}
		got[name] = strings.Join(who, " ")
	}
	want := map[string]string{
		"etc/cni/net.d/a.conf":     "p-defer any-old site-fallback",
		"etc/cni/net.d/b.old":      "any-old site-fallback",
		"etc/cni/net.d/c.conflist": "site-fallback",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

func TestRestoredName(t *testing.T) {
	r := &Rule{RestoreAs: "10-crio-bridge.conflist"}
	if got := r.RestoredName("etc/cni/net.d/10-crio-bridge.conflist.disabled"); got != "etc/cni/net.d/10-crio-bridge.conflist" {
		t.Errorf("RestoredName = %q", got)
	}
	if got := (&Rule{}).RestoredName("etc/x"); got != "etc/x" {
		t.Errorf("RestoredName without restore_as = %q", got)
	}
}

func TestForbiddenBy(t *testing.T) {
	set, err := Load(filepath.Join("..", "..", "rules"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		link string // a symlink's target
		typ  EntryType
		want []string
	}{
		{"etc/cni/net.d/87-podman-bridge.conflist", "", TypeFile, []string{"cni-configs"}},
		{"etc/cni/net.d/.keep", "", TypeFile, nil},
		// podman's lock file: libcni never reads it (issue 38).
		{"etc/cni/net.d/cni.lock", "", TypeFile, nil},
		{"etc/cni/net.d/cni.lock.conflist", "", TypeFile, []string{"cni-configs"}},
		{"etc/cni/net.d", "", TypeDir, nil},
		{"etc/cni/net.mk", "", TypeDir, []string{"legacy-cni-dir"}},
		{"etc/crictl.yaml", "", TypeFile, []string{"crictl-config"}},
		{"etc/systemd/system/containerd.service", "", TypeFile, []string{"units-in-etc"}},
		{"etc/systemd/system/containerd.service", "", TypeSymlink, []string{"unit-links-in-etc"}},
		{"etc/systemd/system/multi-user.target.wants/containerd.service", "/opt/containerd.service", TypeSymlink, nil},
		// A symlink unit in /etc/systemd/system: masks and links into the
		// image's unit directories only (issue 23).
		{"etc/systemd/system/docker.service", "/opt/docker.service", TypeSymlink, []string{"unit-links-in-etc"}},
		{"etc/systemd/system/docker.service", "/usr/local/lib/systemd/system/docker.service", TypeSymlink, []string{"unit-links-in-etc"}},
		{"etc/systemd/system/docker.service", "../../../opt/docker.service", TypeSymlink, []string{"unit-links-in-etc"}},
		{"etc/systemd/system/docker.service", "/usr/lib/systemd/system/../../../../opt/docker.service", TypeSymlink, []string{"unit-links-in-etc"}},
		{"etc/systemd/system/docker.service", "/usr/lib/systemd/system/sub/docker.service", TypeSymlink, []string{"unit-links-in-etc"}},
		{"etc/systemd/system/docker.service", "docker-real.service", TypeSymlink, []string{"unit-links-in-etc"}},
		{"etc/systemd/system/multi-user.target", "/home/docker/evil.target", TypeSymlink, []string{"unit-links-in-etc"}},
		{"etc/systemd/system/docker.service", "/dev/null", TypeSymlink, nil},
		{"etc/systemd/system/docker.service", "/usr/lib/systemd/system/docker.service", TypeSymlink, nil},
		{"etc/systemd/system/docker.service", "/lib/systemd/system/docker.service", TypeSymlink, nil},
		{"etc/systemd/system/dbus-org.freedesktop.network1.service", "../../../usr/lib/systemd/system/systemd-networkd.service", TypeSymlink, nil},
		{"etc/systemd/system/default.target", "/usr/lib/systemd/system/multi-user.target", TypeSymlink, nil},
		{"etc/systemd/system/docker.service.d", "/opt/dropins", TypeSymlink, nil},
		{"etc/containerd/config.toml", "", TypeFile, nil},
		{"etc/crio/crio.conf.d/02-crio.conf", "", TypeFile, nil},
		{"etc/buildkit/buildkitd.toml", "", TypeFile, nil},
		{"etc/buildkit/cni.json", "", TypeFile, []string{"buildkit-cni-config"}},
	}
	for _, tc := range tests {
		var got []string
		for _, f := range set.ForbiddenBy(tc.path, tc.typ, tc.link) {
			got = append(got, f.Name)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (%s %s) (-want +got):\n%s", tc.path, tc.typ, tc.link, d)
		}
	}
}

func TestPatternDirs(t *testing.T) {
	for pat, want := range map[string][]string{
		"etc/cni/net.d/**":        {"etc", "etc/cni", "etc/cni/net.d"},
		"etc/cni/net.d/10-*.conf": {"etc", "etc/cni", "etc/cni/net.d"},
		"etc/crictl.yaml":         {"etc"},
		"usr/local/lib/{a,b}/x":   {"usr", "usr/local", "usr/local/lib"},
	} {
		p, err := ParsePattern(pat)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, p.Dirs()); d != "" {
			t.Errorf("%s: (-want +got)\n%s", pat, d)
		}
	}
}

// TestPatternMatchesIn: the directories a pattern can match a path
// directly in, as a journal's directories are checked against.
func TestPatternMatchesIn(t *testing.T) {
	dirs := []string{".", "etc", "etc/cni", "etc/cni/net.d", "etc/cni/net.d/sub", "usr/local/lib/a", "usr/local/lib/c", "usr/bin"}
	for pat, want := range map[string][]string{
		"etc/cni/net.d/**":        {"etc/cni", "etc/cni/net.d", "etc/cni/net.d/sub"},
		"etc/cni/net.d/10-*.conf": {"etc/cni/net.d"},
		"etc/crictl.yaml":         {"etc"},
		"etc/*/net.d/x":           {"etc/cni/net.d"},
		"usr/local/lib/{a,b}/x":   {"usr/local/lib/a"},
		"crictl.yaml":             {"."},
	} {
		p, err := ParsePattern(pat)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range dirs {
			if p.MatchesIn(d) {
				got = append(got, d)
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", pat, d)
		}
	}
}

// Loading reads the actions table (actionDefs) and nothing else: the
// message for an unknown action names every action, and each field an
// action does not take is refused naming every action that does.
func TestActionTableDrivesLoad(t *testing.T) {
	values := map[string]string{"to": "/usr/x", "existing": "strip", "runtime": "crio", "cni": "bridge", "restore_as": "y",
		"format": "toml", "key": "a", "remove": "[x]", "set": "x", "unset": "true"}
	dir := writeRules(t, map[string]string{"a.yaml": "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: nope\n    reason: x\n"})
	_, err := Load(dir)
	if err == nil {
		t.Fatal("Load accepted action nope")
	}
	for _, d := range actionDefs {
		if !strings.Contains(err.Error(), d.name) {
			t.Errorf("unknown action: %q does not name action %s", err, d.name)
		}
	}
	for _, d := range actionDefs {
		if got, ok := actionNamed(d.name); !ok || got.action != d.action || d.action.String() != d.name {
			t.Errorf("action %s: not found by its name", d.name)
		}
		for _, group := range actionFields {
			for _, f := range group {
				if _, ok := values[f.name]; !ok {
					t.Fatalf("field %s: no value in this test", f.name)
				}
				t.Run(d.name+"/"+f.name, func(t *testing.T) {
					yaml := "package: p\nrules:\n  - name: r\n    match: [etc/x]\n    action: " + d.name + "\n    " + f.name + ": " + values[f.name] + "\n    reason: x\n"
					_, err := Load(writeRules(t, map[string]string{"a.yaml": yaml}))
					msg := ""
					if err != nil {
						msg = err.Error()
					}
					refused := strings.Contains(msg, f.name+":") && strings.Contains(msg, "only go")
					if refused == slices.Contains(d.takes, f.name) {
						t.Fatalf("action %s (takes %v), field %s: refused %v: %q", d.name, d.takes, f.name, refused, msg)
					}
					for _, a := range takenBy(f.name) {
						if refused && !strings.Contains(msg, a) {
							t.Errorf("%q does not name action %s, which takes %s", msg, a, f.name)
						}
					}
				})
			}
		}
	}
}

// A YAML syntax error is reported at the line that holds the mistake, not
// at the start of the block it is in: a bad indent deep in rules/crio.yaml
// came out as crio.yaml:8, the rules: line.
func TestYAMLSyntaxErrorLine(t *testing.T) {
	crio, err := os.ReadFile(filepath.Join("..", "..", "rules", "crio.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(crio), "\n")
	deep := -1 // the last rule's action: line, indented one space short
	for i, l := range lines {
		if strings.HasPrefix(l, "    action: ") {
			deep = i
		}
	}
	lines[deep] = "   " + strings.TrimSpace(lines[deep])
	tests := []struct {
		name, text string
		want       string
	}{
		{"bad indent deep in crio.yaml", strings.Join(lines, "\n"),
			fmt.Sprintf("crio.yaml:%d: did not find expected '-' indicator", deep+1)},
		{"unclosed flow sequence", "package: p\nrules:\n  - name: r\n    match: [etc/x,\n    action: strip\n    reason: x\n",
			"crio.yaml:5: did not find expected ',' or ']'"},
		{"a tab for an indent", "package: p\nrules:\n  - name: r\n    match: [etc/x]\n\taction: strip\n",
			"crio.yaml:5: found character that cannot start any token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "crio.yaml"), []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}
