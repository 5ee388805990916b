// Package fuzz tests run.sh, the runner behind `make fuzz`: that it runs
// every target, fails on every real finding, and lets through only Go
// 1.26's bare deadline error (golang/go#75804).
package fuzz

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The tail of real `go test -fuzz` reports, as Go 1.26 prints them.
const (
	// Printed by .ci/run on 2026-11-30, FuzzParseEnv, no crasher.
	deadlineRace = `fuzz: elapsed: 9s, execs: 95861 (10576/sec), new interesting: 2 (total: 138)
fuzz: elapsed: 11s, execs: 108741 (6374/sec), new interesting: 2 (total: 138)
--- FAIL: FuzzRace (11.06s)
    context deadline exceeded
FAIL
exit status 1
FAIL	example.com/m/p	11.091s
`
	crasher = `fuzz: elapsed: 1s, execs: 1000 (1000/sec), new interesting: 0 (total: 3)
--- FAIL: FuzzCrash (1.20s)
    --- FAIL: FuzzCrash (0.00s)
        x_test.go:12: round trip differs

    Failing input written to testdata/fuzz/FuzzCrash/5a1b2c
    To re-run:
    go test -run=FuzzCrash/5a1b2c
FAIL
exit status 1
FAIL	example.com/m/p	1.230s
`
	// A crasher found while the deadline fired: both lines appear.
	crasherAtDeadline = `--- FAIL: FuzzCrash (10.02s)
    context deadline exceeded
    Failing input written to testdata/fuzz/FuzzCrash/5a1b2c
FAIL
exit status 1
FAIL	example.com/m/p	10.100s
`
	deadlinePlusError = `--- FAIL: FuzzCrash (10.02s)
    context deadline exceeded
    fuzzing process hung or terminated unexpectedly: exit status 2
FAIL
exit status 1
FAIL	example.com/m/p	10.100s
`
	buildFailure = `# example.com/m/p
p/x_test.go:3:1: syntax error: non-declaration statement outside function body
FAIL	example.com/m/p [build failed]
`
	panicked = `panic: runtime error: index out of range [3] with length 3
--- FAIL: FuzzCrash (0.00s)
    context deadline exceeded
FAIL
`
)

func TestRunner(t *testing.T) {
	script, err := filepath.Abs("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("run.sh needs bash:", err)
	}

	tests := []struct {
		name      string
		outputs   map[string]string // target → go test output; absent: passed
		wantFail  bool
		wantInOut string
	}{
		{name: "all pass", wantInOut: "fuzz: all targets passed"},
		{
			name:      "deadline race is tolerated",
			outputs:   map[string]string{"FuzzRace": deadlineRace},
			wantInOut: "fuzz: deadline race tolerated in: FuzzRace",
		},
		{
			// The held report of a tolerated race must not come out
			// after the targets that pass after it.
			name:      "deadline race before passing targets",
			outputs:   map[string]string{"FuzzCrash": deadlineRace},
			wantInOut: "fuzz: deadline race tolerated in: FuzzCrash",
		},
		{
			name:      "crasher fails",
			outputs:   map[string]string{"FuzzCrash": crasher},
			wantFail:  true,
			wantInOut: "fuzz: FAILED: FuzzCrash",
		},
		{
			name:      "crasher at the deadline fails",
			outputs:   map[string]string{"FuzzCrash": crasherAtDeadline},
			wantFail:  true,
			wantInOut: "fuzz: FAILED: FuzzCrash",
		},
		{
			name:      "deadline with another error fails",
			outputs:   map[string]string{"FuzzCrash": deadlinePlusError},
			wantFail:  true,
			wantInOut: "fuzz: FAILED: FuzzCrash",
		},
		{
			name:      "build failure fails",
			outputs:   map[string]string{"FuzzCrash": buildFailure},
			wantFail:  true,
			wantInOut: "fuzz: FAILED: FuzzCrash",
		},
		{
			name:      "panic fails",
			outputs:   map[string]string{"FuzzCrash": panicked},
			wantFail:  true,
			wantInOut: "fuzz: FAILED: FuzzCrash",
		},
		{
			name:      "every target runs after a failure",
			outputs:   map[string]string{"FuzzCrash": crasher, "FuzzRace": deadlineRace},
			wantFail:  true,
			wantInOut: "fuzz: FAILED: FuzzCrash",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			module := fakeModule(t)
			fake := fakeGo(t, tt.outputs)
			cmd := exec.Command("bash", script)
			cmd.Env = append(os.Environ(),
				"GO="+fake.bin, "FUZZTIME=7s", "FUZZ_ROOT="+module)
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != tt.wantFail {
				t.Fatalf("run.sh failed = %v (%v), want %v; output:\n%s", failed, err, tt.wantFail, out)
			}
			if err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
					t.Fatalf("run.sh: %v, want exit status 1; output:\n%s", err, out)
				}
			}
			if !strings.Contains(string(out), tt.wantInOut) {
				t.Errorf("output lacks %q:\n%s", tt.wantInOut, out)
			}
			// A tolerated race prints no FAIL line; a real failure
			// prints go test's whole report.
			for target, report := range tt.outputs {
				_, failLines, _ := strings.Cut(report, "--- FAIL: ")
				shown := strings.Contains(string(out), "--- FAIL: "+failLines)
				if real := report != deadlineRace; shown != real && failLines != "" {
					t.Errorf("%s: report shown = %v, want %v; output:\n%s", target, shown, real, out)
				}
			}
			if !tt.wantFail && strings.Contains(string(out), "FAIL") {
				t.Errorf("a green run prints FAIL:\n%s", out)
			}
			// Every target, once, in its own package, with the budget.
			want := []string{
				"test -run=^$ -fuzz=^FuzzCrash$ -fuzztime=7s ./a",
				"test -run=^$ -fuzz=^FuzzLoad$ -fuzztime=7s ./a",
				"test -run=^$ -fuzz=^FuzzLoad$ -fuzztime=7s ./b/c",
				"test -run=^$ -fuzz=^FuzzRace$ -fuzztime=7s ./b/c",
			}
			if diff := cmp.Diff(want, fake.calls(t)); diff != "" {
				t.Errorf("go invocations (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeModule lays out two packages with four fuzz targets, one name shared
// by both packages, and a test file that is not a fuzz target.
func fakeModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"a/x_test.go":   "package a\n\nfunc FuzzCrash(f *testing.F) {}\n\nfunc FuzzLoad(f *testing.F) {}\n",
		"a/y_test.go":   "package a\n\nfunc TestFuzzy(t *testing.T) {}\n// func FuzzComment(f *testing.F) {}\n",
		"b/c/z_test.go": "package c\n\nfunc FuzzRace(f *testing.F) {}\nfunc FuzzLoad(f *testing.F) {}\n",
		"b/c/z.go":      "package c\n\nfunc FuzzNotATest(f *testing.F) {}\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type fakeGoBin struct {
	bin, log string
}

// fakeGo writes a `go` that logs its arguments and prints the canned
// output for the target named by -fuzz, exiting 1 when there is one.
func fakeGo(t *testing.T, outputs map[string]string) fakeGoBin {
	t.Helper()
	dir := t.TempDir()
	for target, out := range outputs {
		if err := os.WriteFile(filepath.Join(dir, target+".out"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := fakeGoBin{bin: filepath.Join(dir, "go"), log: filepath.Join(dir, "calls")}
	script := `#!/bin/sh
echo "$*" >> "` + f.log + `"
for a in "$@"; do
	case "$a" in -fuzz=*) target=${a#-fuzz=^}; target=${target%$} ;; esac
done
if [ -f "` + dir + `/$target.out" ]; then
	cat "` + dir + `/$target.out"
	exit 1
fi
echo PASS
`
	if err := os.WriteFile(f.bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f fakeGoBin) calls(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(f.log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestReadmeNamesEveryTarget keeps the threat table's list of fuzz targets
// (docs/security.md) true: it must name exactly the targets that make fuzz runs.
func TestReadmeNamesEveryTarget(t *testing.T) {
	root := filepath.Join("..", "..")
	var have []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(data), -1) {
			have = append(have, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, line := range strings.Split(string(readme), "\n") {
		if _, list, ok := strings.Cut(line, "fuzzed: "); ok {
			for _, m := range readmeName.FindAllStringSubmatch(list, -1) {
				named = append(named, m[1])
			}
		}
	}
	sort.Strings(have)
	sort.Strings(named)
	if len(have) == 0 {
		t.Fatal("no fuzz targets found")
	}
	if diff := cmp.Diff(have, named); diff != "" {
		t.Errorf("docs/security.md's fuzzed: list (-targets in the code +named there):\n%s", diff)
	}
}

var (
	fuzzFunc   = regexp.MustCompile(`(?m)^func (Fuzz\w*)\(f \*testing\.F\)`)
	readmeName = regexp.MustCompile("`(Fuzz\\w*)`")
)
