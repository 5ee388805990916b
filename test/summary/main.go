package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the go test command line args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		fmt.Fprintln(stderr, "usage: summary go test -json [flags] [packages]")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, stderr
	events, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "summary:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "summary:", err)
		return 2
	}
	s := newSummary(stdout, modulePrefix())
	readErr := s.read(events)
	if readErr != nil {
		io.Copy(io.Discard, events) // let go test finish
	}
	waitErr := cmd.Wait()
	s.print()
	code := exitCode(stderr, waitErr, s)
	if readErr != nil {
		fmt.Fprintln(stderr, "summary: reading go test's output:", readErr)
		if code == 0 {
			code = 2
		}
	}
	return code
}

// exitCode keeps go test's status; a failure seen in the stream fails the
// run even if go test somehow exited 0.
func exitCode(stderr io.Writer, waitErr error, s *summary) int {
	if ee, ok := waitErr.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if waitErr != nil {
		fmt.Fprintln(stderr, "summary:", waitErr)
		return 2
	}
	if s.failed > 0 {
		return 1
	}
	return 0
}

// modulePrefix is "MODULE/" from ./go.mod, trimmed from package names.
func modulePrefix() string {
	data, err := os.ReadFile("go.mod")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`) + "/"
		}
	}
	return ""
}

// event is test2json's TestEvent, plus the build events that go test -json
// interleaves since Go 1.24.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
	ImportPath  string
}

type skip struct{ pkg, test, reason string }

// longTests are the tests that run for minutes, with what they do and
// about how long they take on an idle 2-core machine (more on a busy one).
var longTests = map[string]string{
	"test/boot TestBootMinikube":  "two minikube VMs under QEMU (unchanged and patched), each through two boots and every runtime: about 5 min of CPU each",
	"test/boot TestBootRender":    "an applied image booted under QEMU: about 20 s",
	"test/boot TestBootSplice":    "initrds rewritten by splicing, each booted under QEMU: about 20 s each",
	"cmd/rootfs-trim TestScripts": "every command-line scenario (testdata/script): about 2 min",
}

type summary struct {
	w      io.Writer
	prefix string
	// output of each running test (package + "\x00" + test), and of each
	// package outside any test, shown only if it fails
	output      map[string]*strings.Builder
	failedTests map[string]bool // packages where a test failed
	skips       []skip
	passed      int
	failed      int
	skipped     int
	failedPkgs  []string
	resultLines map[string]string // a failed package's FAIL line, printed after its output
}

func newSummary(w io.Writer, prefix string) *summary {
	return &summary{w: w, prefix: prefix, output: map[string]*strings.Builder{}, failedTests: map[string]bool{}, resultLines: map[string]string{}}
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(s.w, "%s\n", line) // not an event: go test's own complaint
			continue
		}
		s.add(e)
	}
	return sc.Err()
}

func (s *summary) buf(key string) *strings.Builder {
	b := s.output[key]
	if b == nil {
		b = &strings.Builder{}
		s.output[key] = b
	}
	return b
}

func (s *summary) add(e event) {
	if e.ImportPath != "" { // build-output, build-fail
		if e.Action == "build-output" {
			fmt.Fprint(s.w, e.Output)
		}
		return
	}
	key := e.Package + "\x00" + e.Test
	if e.Test == "" {
		s.addPackage(e, key)
		return
	}
	switch e.Action {
	case "run":
		if what, ok := longTests[s.short(e.Package)+" "+e.Test]; ok {
			// Said as it starts: go test -json shows nothing of a test
			// until it ends, and these take minutes.
			fmt.Fprintf(s.w, "... %s %s: %s\n", s.short(e.Package), e.Test, what)
		}
	case "output":
		s.buf(key).WriteString(e.Output)
	case "pass":
		s.passed++
		delete(s.output, key)
	case "fail":
		s.failed++
		s.failedTests[e.Package] = true
		fmt.Fprint(s.w, s.buf(key).String())
		delete(s.output, key)
	case "skip":
		s.skipped++
		s.skips = append(s.skips, skip{s.short(e.Package), e.Test, skipReason(s.buf(key).String())})
		delete(s.output, key)
	}
}

// addPackage prints the package's result line as go test does, and the
// package's own output (TestMain, a panic outside a test) when it fails.
func (s *summary) addPackage(e event, key string) {
	switch e.Action {
	case "output":
		if strings.HasPrefix(e.Output, "FAIL\t") {
			s.resultLines[e.Package] = e.Output
			return
		}
		if isResultLine(e.Output) {
			fmt.Fprint(s.w, e.Output)
			return
		}
		s.buf(key).WriteString(e.Output)
	case "fail":
		if !s.failedTests[e.Package] {
			// Nothing else counts this failure: a build failure, a
			// crash or TestMain exiting non-zero.
			out := s.buf(key).String()
			out = strings.ReplaceAll(out, "FAIL\n", "")
			fmt.Fprint(s.w, out)
			s.failed++
		}
		fmt.Fprint(s.w, s.resultLines[e.Package])
		what := s.short(e.Package)
		if e.FailedBuild != "" {
			what += " (build failed)"
		}
		s.failedPkgs = append(s.failedPkgs, what)
		delete(s.output, key)
	case "pass", "skip":
		delete(s.output, key)
	}
}

func isResultLine(out string) bool {
	for _, p := range []string{"ok  \t", "?   \t"} {
		if strings.HasPrefix(out, p) {
			return true
		}
	}
	return false
}

// skipReason is what the test logged before t.Skip: its output less the
// === and --- framing lines, with the file:line prefixes kept.
func skipReason(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		lines = append(lines, t)
	}
	if len(lines) == 0 {
		return "(no reason given)"
	}
	return strings.Join(lines, " / ")
}

func (s *summary) short(pkg string) string { return strings.TrimPrefix(pkg, s.prefix) }

func (s *summary) print() {
	if len(s.skips) > 0 {
		fmt.Fprintf(s.w, "\nSkipped (%d):\n", len(s.skips))
		for _, k := range s.skips {
			fmt.Fprintf(s.w, "  %s %s: %s\n", k.pkg, k.test, k.reason)
		}
	}
	if len(s.failedPkgs) > 0 {
		fmt.Fprintf(s.w, "\nFailed packages: %s\n", strings.Join(s.failedPkgs, ", "))
	}
	fmt.Fprintf(s.w, "\n%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
}
