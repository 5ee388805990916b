package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/schematest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// sarifCase is one real audit or check run, in SARIF and in JSON.
type sarifCase struct {
	name  string
	sarif []byte
	json  []byte // the same run's --format json, for the positions
	notes bool   // check: the JSON has notes, which SARIF leaves out
	// github is, for diff (whose JSON is no list of findings), the same
	// run's --report github, whose annotations the results must match.
	github []byte
}

// sarifCases runs audit and check on the example in a scratch working
// directory holding a copy of the rules, as a repository's CI would: the
// rule files' URIs come out relative to it.
func sarifCases(t *testing.T) []sarifCase {
	example, err := filepath.Abs(exampleDir)
	if err != nil {
		t.Fatal(err)
	}
	rulesDir, _ := filepath.Abs(exampleRules)
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "rules"), os.DirFS(rulesDir)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	fileList := filepath.Join(example, "packages-file-list.txt")
	target := filepath.Join(example, "target")
	// The example with a network no rule handles: a new offender at the
	// policy item's line, and its unknown owner not in the lock.
	bumped := filepath.Join(work, "bumped")
	if err := os.CopyFS(bumped, os.DirFS(target)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(bumped, "etc/cni/net.d/99-new.conflist"), []byte("{}\n"), 0o644)
	os.WriteFile("empty.lock", []byte(`{"version": 1, "packages": {}}`+"\n"), 0o644)
	trimmed := filepath.Join(work, "trimmed")
	if code, _, stderr := run(t, nil, "apply", "--rules", "rules", "--packages-file-list", fileList, target, trimmed); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	audit := []string{"audit", "--rules", "rules", "--packages-file-list", fileList}
	checkArgs := func(lock string) []string {
		return []string{"check", "--rules", "rules", "--lock", lock, "--packages-file-list", fileList}
	}
	lock, err := os.ReadFile(filepath.Join(example, "check.lock"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("check.lock", lock, 0o644)
	var cases []sarifCase
	for _, tc := range []struct {
		name  string
		args  []string
		input string
		code  int
	}{
		{"audit offenders", audit, target, ExitFindings},
		{"audit clean", audit, trimmed, ExitOK},
		{"check clean", checkArgs("check.lock"), target, ExitOK},
		{"check new offender", checkArgs("check.lock"), bumped, ExitFindings},
		{"check empty lock", checkArgs("empty.lock"), target, ExitFindings},
	} {
		var outs [2][]byte
		for i, format := range []string{"sarif", "json"} {
			args := append(append(append([]string{}, tc.args...), "--format", format), tc.input)
			code, stdout, stderr := run(t, nil, args...)
			if code != tc.code {
				t.Fatalf("%s: %s: exit %d, want %d\n%s", tc.name, strings.Join(args, " "), code, tc.code, stderr)
			}
			outs[i] = []byte(stdout)
		}
		cases = append(cases, sarifCase{name: tc.name, sarif: outs[0], json: outs[1], notes: tc.args[0] == "check"})
	}
	// diff of a bump: a new offender (the policy's line) and a deferred
	// file whose content changed (its rule's line).
	changed := filepath.Join(work, "changed")
	if err := os.CopyFS(changed, os.DirFS(bumped)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(changed, "etc/cni/net.d/10-containerd-net.conflist"), []byte(`{"name":"changed"}`+"\n"), 0o644)
	for _, tc := range []struct {
		name     string
		old, new string
		code     int
	}{
		{"diff bump", target, changed, ExitFindings},
		{"diff same", target, target, ExitOK},
	} {
		var outs [2][]byte
		for i, format := range []string{"sarif", "github"} {
			args := []string{"diff", "--rules", "rules", "--packages-file-list", fileList, "--report", format, tc.old, tc.new}
			code, stdout, stderr := run(t, nil, args...)
			if code != tc.code {
				t.Fatalf("%s: %s: exit %d, want %d\n%s", tc.name, strings.Join(args, " "), code, tc.code, stderr)
			}
			outs[i] = []byte(stdout)
		}
		cases = append(cases, sarifCase{name: tc.name, sarif: outs[0], github: outs[1]})
	}
	return cases
}

// ghAnnotationLine is one annotation of a github report: level, file,
// line and the check in its title.
var ghAnnotationLine = regexp.MustCompile(`^::(error|warning) file=([^,]+),line=(\d+),title=rootfs-trim (?:diff )?\[([^\]]+)\]::`)

// What GitHub code scanning requires of an uploaded SARIF file that its
// structure shows ("SARIF support for code scanning" on docs.github.com,
// and codeql-action's upload refusing a result without a location): each
// rule with an id, descriptions and help; each result naming a rule of
// the run by ruleId and ruleIndex, with a level, a message and one to ten
// locations, each a repository-relative URI and a line from 1; and, here,
// the result at the finding's rule file and line.
func TestSARIFForCodeScanning(t *testing.T) {
	for _, c := range sarifCases(t) {
		t.Run(c.name, func(t *testing.T) {
			var log sarifLog
			dec := json.NewDecoder(bytes.NewReader(c.sarif))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&log); err != nil {
				t.Fatalf("decoding: %v\n%s", err, c.sarif)
			}
			for _, p := range codeScanningProblems(log) {
				t.Error(p)
			}
			if t.Failed() || len(log.Runs) != 1 {
				return
			}
			if c.github != nil {
				var want, got []string
				for _, l := range strings.Split(string(c.github), "\n") {
					if m := ghAnnotationLine.FindStringSubmatch(l); m != nil {
						want = append(want, strings.ReplaceAll(m[4], " ", "-")+" "+m[1]+" "+m[2]+":"+m[3])
					}
				}
				for _, r := range log.Runs[0].Results {
					l := r.Locations[0].PhysicalLocation
					got = append(got, r.Properties.Check+" "+r.Level+" "+l.ArtifactLocation.URI+":"+fmt.Sprint(l.Region.StartLine))
				}
				if len(want) == 0 && c.name != "diff same" {
					t.Fatalf("no annotations in the github report:\n%s", c.github)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("results against the github annotations (-github +sarif):\n%s", diff)
				}
				return
			}
			var report struct {
				Findings []struct {
					Severity string `json:"severity"`
					Check    string `json:"check"`
					Pos      struct {
						File string `json:"file"`
						Line int    `json:"line"`
					} `json:"pos"`
				} `json:"findings"`
			}
			if err := json.Unmarshal(c.json, &report); err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, f := range report.Findings {
				if c.notes && f.Severity == "note" {
					continue
				}
				at := fmt.Sprintf("%s:%d", f.Pos.File, f.Pos.Line)
				if f.Pos.File == "" { // check's package-level findings: on the lock
					at = "lock"
				}
				want = append(want, f.Check+" "+f.Severity+" "+at)
			}
			for _, r := range log.Runs[0].Results {
				at := "none"
				if len(r.Locations) > 0 {
					l := r.Locations[0].PhysicalLocation
					at = l.ArtifactLocation.URI + ":" + fmt.Sprint(l.Region.StartLine)
					if strings.HasSuffix(l.ArtifactLocation.URI, ".lock") {
						at = "lock"
					}
				}
				got = append(got, r.Properties.Check+" "+r.Level+" "+at)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("results against the JSON findings (-json +sarif):\n%s", diff)
			}
		})
	}
}

func codeScanningProblems(log sarifLog) []string {
	var ps []string
	bad := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		bad("version %q with %d runs, want 2.1.0 with one", log.Version, len(log.Runs))
		return ps
	}
	run := log.Runs[0]
	if run.Tool.Driver.Name != "rootfs-trim" || run.Tool.Driver.Version == "" {
		bad("tool.driver: name %q version %q", run.Tool.Driver.Name, run.Tool.Driver.Version)
	}
	ids := map[string]int{}
	for i, r := range run.Tool.Driver.Rules {
		if _, dup := ids[r.ID]; dup || r.ID == "" {
			bad("rules[%d]: id %q empty or repeated", i, r.ID)
		}
		ids[r.ID] = i
		if r.ShortDescription.Text == "" || r.FullDescription.Text == "" || r.Help.Text == "" {
			bad("rules[%d] %s: a description or help is empty", i, r.ID)
		}
		if r.HelpURI != "" && !strings.HasPrefix(r.HelpURI, "https://") {
			bad("rules[%d] %s: helpUri %q", i, r.ID, r.HelpURI)
		}
	}
	for i, r := range run.Results {
		if j, ok := ids[r.RuleID]; !ok || j != r.RuleIndex {
			bad("results[%d]: ruleId %q, ruleIndex %d: not that rule of the run", i, r.RuleID, r.RuleIndex)
		}
		if r.Level != "error" && r.Level != "warning" && r.Level != "note" {
			bad("results[%d]: level %q", i, r.Level)
		}
		if r.Message.Text == "" || r.PartialFingerprints[sarifFingerprint] == "" {
			bad("results[%d]: empty message or fingerprint", i)
		}
		if len(r.Locations) < 1 || len(r.Locations) > 10 {
			bad("results[%d]: %d locations, want 1 to 10", i, len(r.Locations))
		}
		for _, l := range r.Locations {
			uri := l.PhysicalLocation.ArtifactLocation.URI
			if uri == "" || strings.Contains(uri, ":") || strings.HasPrefix(uri, "/") || strings.HasPrefix(uri, "../") {
				bad("results[%d]: uri %q is not relative to the repository", i, uri)
			}
			if l.PhysicalLocation.Region.StartLine < 1 {
				bad("results[%d]: no startLine from 1", i)
			}
		}
	}
	return ps
}

// The results are distinct alerts: two findings share a fingerprint only
// when they are the same finding.
func TestSARIFFingerprintsDiffer(t *testing.T) {
	for _, c := range sarifCases(t)[:1] {
		var log sarifLog
		if err := json.Unmarshal(c.sarif, &log); err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for i, r := range log.Runs[0].Results {
			fp := r.PartialFingerprints[sarifFingerprint]
			if j, ok := seen[fp]; ok {
				t.Errorf("results %d and %d share the fingerprint %s", j, i, fp)
			}
			seen[fp] = i
		}
		if len(seen) < 4 {
			t.Errorf("%d results, want the example's 4 offenders", len(seen))
		}
	}
}

// sarifTools is where test/sarif/fetch-multitool.sh put the SARIF 2.1.0
// schema and the SARIF SDK's multitool (ROOTFS_TRIM_SARIF: make test and
// .ci/run set it).
func sarifTools(t *testing.T) string {
	dir := os.Getenv("ROOTFS_TRIM_SARIF")
	if dir == "" {
		if os.Getenv(archivetest.RequireToolsEnv) == "1" {
			t.Fatalf("ROOTFS_TRIM_SARIF is not set, and %s=1 forbids skipping: test/sarif/fetch-multitool.sh DIR prints what to set it to", archivetest.RequireToolsEnv)
		}
		t.Skip("ROOTFS_TRIM_SARIF is not set: test/sarif/fetch-multitool.sh DIR fetches the SARIF schema and multitool and prints the directory (make test and .ci/run do)")
	}
	for _, f := range []string{"sarif-2.1.0.json", "Sarif.Multitool"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("ROOTFS_TRIM_SARIF=%s: %v", dir, err)
		}
	}
	return dir
}

// audit's and check's SARIF validate against the SARIF 2.1.0 JSON Schema
// (as the SARIF SDK ships it), and pass the SDK's own validator with the
// spec's rules and GitHub's ingestion rules (GH1001...) with no error or
// warning.
func TestSARIFValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the multitool takes a few seconds a run")
	}
	tools := sarifTools(t)
	tools, err := filepath.Abs(tools)
	if err != nil {
		t.Fatal(err)
	}
	schema := schematest.Compile(t, filepath.Join(tools, "sarif-2.1.0.json"))
	for _, c := range sarifCases(t) {
		t.Run(c.name, func(t *testing.T) {
			if err := schematest.Valid(schema, c.sarif); err != nil {
				t.Errorf("not SARIF 2.1.0: %v\n%s", err, c.sarif)
			}
			in := filepath.Join(t.TempDir(), "in.sarif")
			out := filepath.Join(t.TempDir(), "validation.sarif")
			if err := os.WriteFile(in, c.sarif, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(filepath.Join(tools, "Sarif.Multitool"), "validate", "--rule-kind", "Sarif;Gh", "-o", out, in)
			// No ICU needed: the tool's messages are all it formats.
			cmd.Env = append(os.Environ(), "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1", "DOTNET_CLI_TELEMETRY_OPTOUT=1")
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("Sarif.Multitool validate: %v\n%s", err, msg)
			}
			var report struct {
				Runs []struct {
					Results []struct {
						RuleID  string `json:"ruleId"`
						Level   string `json:"level"`
						Message struct {
							Text string `json:"text"`
						} `json:"message"`
					} `json:"results"`
				} `json:"runs"`
			}
			data, err := os.ReadFile(out)
			if err == nil {
				err = json.Unmarshal(data, &report)
			}
			if err != nil || len(report.Runs) != 1 {
				t.Fatalf("reading the multitool's report: %v (%d runs)", err, len(report.Runs))
			}
			for _, r := range report.Runs[0].Results {
				if r.Level != "note" && r.Level != "none" {
					t.Errorf("multitool: %s %s: %s", r.Level, r.RuleID, r.Message.Text)
				}
			}
		})
	}
}
