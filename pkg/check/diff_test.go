package check

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

func TestMain(m *testing.M) {
	archivetest.SetToolEnv()
	os.Exit(m.Run())
}

// numbered is n lines of a configuration file, each its own.
func numbered(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("  \"key%d\": \"value %d\",\n", i, i)
	}
	return lines
}

func edit(lines []string, f func([]string) []string) string {
	return strings.Join(f(append([]string(nil), lines...)), "")
}

// The deferred-file diff is what GNU diff -u prints (the headers' dates
// aside): it used to be one hunk of the whole file, with + before -.
func TestUnifiedDiffMatchesGNUDiff(t *testing.T) {
	archivetest.RequireTool(t, "diff")
	base := numbered(30)
	text := strings.Join(base, "")
	cases := map[string][2]string{
		"one line":        {text, edit(base, func(l []string) []string { l[14] = "  \"subnet\": \"10.89.0.0/16\",\n"; return l })},
		"first and last":  {text, edit(base, func(l []string) []string { l[0], l[29] = "{\n", "}\n"; return l })},
		"7 apart: two":    {text, edit(base, func(l []string) []string { l[5], l[12] = "x\n", "y\n"; return l })},
		"6 apart: merged": {text, edit(base, func(l []string) []string { l[5], l[11] = "x\n", "y\n"; return l })},
		"insert only":     {text, edit(base, func(l []string) []string { return append(l[:10], append([]string{"new\n", "lines\n"}, l[10:]...)...) })},
		"delete only":     {text, edit(base, func(l []string) []string { return append(l[:3], l[6:]...) })},
		"3 for 2":         {text, edit(base, func(l []string) []string { return append(l[:8], append([]string{"a\n", "b\n"}, l[11:]...)...) })},
		"to empty":        {"one\ntwo\n", ""},
		"from empty":      {"", "one\ntwo\n"},
		"no eol in old":   {"a\nb\nc", "a\nb\nc\n"},
		"no eol in new":   {"a\nb\nc\n", "a\nb\nC"},
		"no eol in both":  {"a\nb\nc\nd\ne\nf", "a\nB\nc\nd\ne\nf"},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		lines := append([]string(nil), base...)
		for range 1 + rng.IntN(4) {
			i := rng.IntN(len(lines))
			switch rng.IntN(3) {
			case 0:
				lines[i] = fmt.Sprintf("changed %d\n", rng.IntN(1000))
			case 1:
				lines = append(lines[:i], lines[i+1:]...)
			default:
				lines = append(lines[:i], append([]string{fmt.Sprintf("added %d\n", rng.IntN(1000))}, lines[i:]...)...)
			}
		}
		cases[fmt.Sprintf("random %d", n)] = [2]string{text, strings.Join(lines, "")}
	}
	dir := t.TempDir()
	for name, c := range cases {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if err := os.WriteFile(a, []byte(c[0]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b, []byte(c[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("diff", "-u", a, b).Output()
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1) {
			t.Fatalf("%s: diff: %v", name, err)
		}
		// GNU diff's headers carry the file names and dates: compare from
		// the first hunk.
		_, want, _ := bytes.Cut(out, []byte("\n@@"))
		got := unifiedDiff("locked/x", "input/x", c[0], c[1])
		if !strings.HasPrefix(got, "--- locked/x\n+++ input/x\n@@") {
			t.Errorf("%s: headers: %q", name, got)
			continue
		}
		_, gotHunks, _ := strings.Cut(got, "\n@@")
		if d := cmp.Diff(string(want), gotHunks); d != "" {
			t.Errorf("%s: hunks differ from GNU diff -u (-diff +ours):\n%s", name, d)
		}
	}
	if got := unifiedDiff("a", "b", text, text); got != "" {
		t.Errorf("equal texts: %q, want nothing", got)
	}
}

// Two 64 KiB files of one-character lines would need a 4 G-cell table;
// beyond maxDiffCells the differing middle is shown removed and added.
func TestUnifiedDiffBounded(t *testing.T) {
	a := strings.Repeat("a\n", 32<<10)
	b := strings.Repeat("b\n", 32<<10)
	got := unifiedDiff("x", "y", "same\n"+a+"end\n", "same\n"+b+"end\n")
	if !strings.HasPrefix(got, "--- x\n+++ y\n@@ -1,32770 +1,32770 @@\n same\n-a\n") || !strings.HasSuffix(got, "+b\n end\n") {
		t.Errorf("got %.80q ... %q", got, got[len(got)-20:])
	}
}
