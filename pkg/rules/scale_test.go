package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// writeManyRules writes n rules spread over packages of 1000 rules each,
// as a large site's rule set would be: mostly literal paths, one glob in
// ten, each package in its own part of the tree, and every path also
// named by a rule of another package doing the same thing (overlaps that
// are not conflicts, which the check must still look at).
func writeManyRules(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	const perPkg = 1000
	for p := 0; p*perPkg < n; p++ {
		var b strings.Builder
		fmt.Fprintf(&b, "package: pkg%d\nrules:\n", p)
		for i := p * perPkg; i < min(n, (p+1)*perPkg); i++ {
			// Package p's rules touch directory p, and half of package
			// p-1's paths, with the same action.
			d := p
			if i%2 == 1 && p > 0 {
				d = p - 1
			}
			match := fmt.Sprintf("etc/d%d/f%d.conf", d, i%perPkg)
			if i%10 == 0 {
				match = fmt.Sprintf("etc/d%d/g%d/*.conf", d, i%perPkg)
			}
			fmt.Fprintf(&b, "  - name: r%d\n    match: [%q]\n    action: strip\n    must_match: false\n    reason: x\n", i, match)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%04d.yaml", p)), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// BenchmarkLoadManyRules shows how loading scales with the number of
// rules: from 10^4 to 10^5 the time should grow about tenfold, not a
// hundredfold (make bench, or go test -bench LoadManyRules -benchtime 1x).
func BenchmarkLoadManyRules(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := writeManyRules(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				set, err := Load(dir)
				if err != nil {
					b.Fatal(err)
				}
				if got := len(set.Rules()); got != n {
					b.Fatalf("%d rules loaded, want %d", got, n)
				}
			}
		})
	}
}

// pairwiseConflicts is the definition the indexed check must agree with:
// rule j conflicts when an earlier rule i of the same tier (package rules,
// rules for any owner, fallback rules) and another scope (package, or
// file for "*" rules) does
// something else with a path that one names literally and the other's
// patterns match.
func pairwiseConflicts(rules []*Rule) map[string]bool {
	overlap := func(a, b []Pattern) bool {
		for _, p := range a {
			if lit, ok := p.Literal(); ok && matchAny(b, lit) {
				return true
			}
		}
		return false
	}
	out := map[string]bool{}
	for j, b := range rules {
		for _, a := range rules[:j] {
			if a.tier() == b.tier() && a.scope() != b.scope() && outcomeOf(a) != outcomeOf(b) && (overlap(a.Paths, b.Paths) || overlap(b.Paths, a.Paths)) {
				out[b.Name] = true
			}
		}
	}
	return out
}

// TestConflictsMatchPairwise: on rule sets with literal and glob paths in
// a few directories, with strips, relocations and defers over a few
// packages, the indexed check reports exactly the rules the pairwise
// definition finds.
func TestConflictsMatchPairwise(t *testing.T) {
	patterns := []string{"etc/a/x.conf", "etc/a/y.conf", "etc/a/*.conf", "etc/a/**", "etc/b/x.conf", "etc/b/{x,y}.conf",
		"etc/a/x.conf", "etc/?/x.conf", "etc/b/y.conf", "etc/**/x.conf"}
	actions := []string{"action: strip", "action: relocate\n    to: usr/x/", "action: defer\n    runtime: crio", "action: defer\n    runtime: docker"}
	for seed := range 300 {
		rnd := uint64(seed)*0x9E3779B97F4A7C15 + 1
		next := func(n int) int {
			rnd ^= rnd << 13
			rnd ^= rnd >> 7
			rnd ^= rnd << 17
			return int(rnd % uint64(n))
		}
		files := map[string]*strings.Builder{}
		var all []*Rule
		for i := range 2 + next(12) {
			// p0 to p2 are packages; any0 and any1 are two package: "*"
			// files, which must conflict with each other but never with a
			// package's rules.
			file := []string{"p0", "p1", "p2", "any0", "any1"}[next(5)]
			b := files[file]
			if b == nil {
				b = &strings.Builder{}
				pkg := file
				if strings.HasPrefix(file, "any") {
					pkg = `"*"`
				}
				fmt.Fprintf(b, "package: %s\nrules:\n", pkg)
				files[file] = b
			}
			action := actions[next(len(actions))]
			if strings.HasPrefix(file, "any") && next(2) == 0 {
				action = "action: strip\n    fallback: true"
			}
			var match []string
			for range 1 + next(2) {
				match = append(match, fmt.Sprintf("%q", patterns[next(len(patterns))]))
			}
			fmt.Fprintf(b, "  - name: r%d\n    match: [%s]\n    %s\n    must_match: false\n    reason: x\n", i, strings.Join(match, ", "), action)
		}
		docs := map[string]string{}
		for pkg, b := range files {
			docs[pkg+".yaml"] = b.String()
		}
		dir := writeRules(t, docs)
		// The reference needs the compiled rules, which Load only returns
		// when there is no conflict: load through the loader's steps.
		set, err := Load(dir)
		reported := map[string]bool{}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if _, rest, ok := strings.Cut(line, ": rule "); ok && strings.Contains(rest, " conflicts with rule ") {
					reported[strings.Fields(rest)[0]] = true
				} else {
					t.Fatalf("seed %d: unexpected problem %q", seed, line)
				}
			}
		}
		all = compiledRules(t, dir)
		if set != nil {
			all = set.Rules()
		}
		want := pairwiseConflicts(all)
		if d := cmp.Diff(want, reported, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("seed %d: conflicting rules (-pairwise +indexed):\n%s\nrules:\n%v", seed, d, docs)
		}
	}
}

// compiledRules loads dir without the cross-checks.
func compiledRules(t *testing.T, dir string) []*Rule {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	l := &loader{set: &Set{Dir: dir, byName: map[string]*Package{}}, dir: dir, root: root,
		ruleNames: map[string]Pos{}, digestFiles: map[string][]byte{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		l.file(filepath.Join(dir, e.Name()), data)
	}
	if len(l.problems) > 0 {
		t.Fatalf("rules do not compile: %v", l.problems)
	}
	return l.set.Rules()
}
