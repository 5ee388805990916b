package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
