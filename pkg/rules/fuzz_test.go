package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

func FuzzLoad(f *testing.F) {
	for _, name := range []string{"policy.yaml", "podman.yaml", "containerd.yaml", "templates.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "rules", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("package: p\nrules:\n  - name: r\n    match: [\"etc/{a,b}/**\"]\n    action: relocate\n    to: usr/\n    reason: x\n")
	f.Fuzz(func(t *testing.T, doc string) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
		os.WriteFile(filepath.Join(dir, "t.tmpl"), []byte("{{ .Socket }}"), 0o644)
		if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		set, err := Load(dir)
		if err != nil {
			// Every problem is located.
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.Contains(line, "a.yaml:") {
					t.Fatalf("error without file:line: %q", line)
				}
			}
			return
		}
		// Whatever loads, matches without panicking.
		for _, r := range set.Rules() {
			for _, p := range r.Paths {
				p.Match("etc/cni/net.d/x.conf")
			}
		}
		for _, link := range []string{"/dev/null", "../../../opt/x", ""} {
			set.ForbiddenBy("etc/systemd/system/x.service", TypeSymlink, link)
		}
	})
}

func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"etc/cni/net.d/*", "/etc/x", "etc/**/y", "etc/{a,b}", "etc/[a-z]?", "etc/cni**"} {
		f.Add(s, "etc/cni/net.d/a")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		p, err := ParsePattern(pattern)
		if err != nil {
			return
		}
		// Patterns only ever see cleaned archive paths; the property is
		// that "/x", "./x" and "x" in a pattern all mean the cleaned "x".
		clean, err := pathx.Clean(name)
		if err != nil {
			return
		}
		for _, variant := range []string{"/" + p.String(), "./" + p.String()} {
			q, err := ParsePattern(variant)
			if err != nil {
				t.Fatalf("%q parses but %q does not: %v", pattern, variant, err)
			}
			if q.Match(clean) != p.Match(clean) {
				t.Fatalf("%q and %q disagree on %q", pattern, variant, clean)
			}
		}
	})
}

// FuzzPatternMatch holds Match, with its literal-prefix shortcut, to what
// doublestar says of the whole glob.
func FuzzPatternMatch(f *testing.F) {
	for _, s := range []string{"etc/cni/**", "etc/cni/net.d/*", "a/**/b", "etc/{a,b}/x", "usr/lib/*.so", "x\\*y", "etc/cni**"} {
		f.Add(s, "etc/cni")
		f.Add(s, "a/b")
		f.Add(s, "usr/lib/libc.so")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		// doublestar decodes invalid UTF-8 to U+FFFD, so "\x87" would
		// match "\xbe"; plain paths compare bytes. Not worth a rule.
		if !utf8.ValidString(pattern) || !utf8.ValidString(name) {
			return
		}
		p, err := ParsePattern(pattern)
		if err != nil {
			return
		}
		want, err := doublestar.Match(p.String(), name)
		if err != nil {
			t.Fatalf("%q: doublestar: %v", p, err)
		}
		if got := p.Match(name); got != want {
			t.Fatalf("%q.Match(%q) = %v, doublestar says %v", p, name, got, want)
		}
	})
}
