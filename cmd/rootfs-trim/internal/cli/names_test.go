package cli

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// hostileNames are file names an attacker controls: a GitHub workflow
// command after a newline, the runner's older form anywhere in a line,
// one that stops the runner's commands, an ANSI escape, a carriage
// return, a bidi override, and bytes that are not UTF-8.
var hostileNames = []string{
	"x\n::error file=README.md,line=1::pwned",
	"old##[error]form",
	"::stop-commands::tok",
	"esc\x1b[31mred",
	"cr\rname",
	"bidi\u202egnp.exe",
	"a\xff",
}

const namesRules = `policy:
  - name: cni
    forbid: ["etc/cni/net.d/*"]
    reason: first config wins
package: p
rules:
  - name: cni-defer
    match: ["etc/cni/net.d/*"]
    action: defer
    runtime: crio
    reason: restored for crio
`

// namesTree makes a target whose offending files have hostile names, and
// a rule set that defers them.
func namesTree(t *testing.T) (rulesDir, tree string) {
	t.Helper()
	rulesDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(rulesDir, "a.yaml"), []byte(namesRules), 0o644); err != nil {
		t.Fatal(err)
	}
	tree = filepath.Join(t.TempDir(), "target")
	if err := os.MkdirAll(filepath.Join(tree, "etc", "cni", "net.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range hostileNames {
		if err := os.WriteFile(filepath.Join(tree, "etc", "cni", "net.d", n), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rulesDir, tree
}

// checkShown fails when output could drive a terminal or a CI log: a
// control byte other than newline, a bidi override, bytes that are not
// UTF-8, or a line that is a workflow command (names.Command) other than
// rootfs-trim's own annotations, which hold no "##[" either.
func checkShown(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: output is not UTF-8:\n%q", what, out)
	}
	for _, r := range out {
		if (r < 0x20 && r != '\n') || r == 0x7f || r == '\u202e' {
			t.Errorf("%s: output holds %U:\n%q", what, r, out)
			break
		}
	}
	for _, line := range strings.Split(out, "\n") {
		own := ownAnnotation.MatchString(line) && !strings.Contains(line, "##[")
		if !own && names.Command(line) {
			t.Errorf("%s: a name made a workflow command: %q", what, line)
		}
	}
}

// ownAnnotation is a workflow command --format github writes: a finding's
// annotation, or the closing notice of check and diff.
var ownAnnotation = regexp.MustCompile(`^::(error|warning|notice) [^:]*title=rootfs-trim (?:\[[a-z-]+\]|check|diff)::`)

// exactNames collects, from JSON objects, the names a field carries,
// taking FIELD_b64 when present: the exact bytes of a name that is not
// UTF-8.
func exactNames(t *testing.T, objs []map[string]any, field string) []string {
	t.Helper()
	var names []string
	for _, o := range objs {
		s, _ := o[field].(string)
		if b, ok := o[field+"_b64"].(string); ok {
			raw, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				t.Fatalf("%s_b64 %q: %v", field, b, err)
			}
			s = string(raw)
		}
		names = append(names, s)
	}
	return names
}

func wantAll(t *testing.T, what string, got []string, prefix string) {
	t.Helper()
	set := map[string]bool{}
	for _, g := range got {
		set[g] = true
	}
	var missing []string
	for _, n := range hostileNames {
		if !set[prefix+n] {
			missing = append(missing, prefix+n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s: names not carried exactly: %q\n(got %q)", what, missing, got)
	}
}

func objects(t *testing.T, what string, v any) []map[string]any {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: not a list: %v", what, v)
	}
	var out []map[string]any
	for _, x := range list {
		out = append(out, x.(map[string]any))
	}
	return out
}

func decodeJSON(t *testing.T, what, data string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, data)
	}
	return doc
}

// TestHostileNamesShown: every text format quotes what a name could do to
// a terminal or a CI log, and every JSON document carries names exactly.
func TestHostileNamesShown(t *testing.T) {
	rulesDir, tree := namesTree(t)
	env := map[string]string{"SOURCE_DATE_EPOCH": "1700000000"}
	const dir = "etc/cni/net.d/"

	code, out, errOut := run(t, env, "list", tree)
	if code != ExitOK {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	checkShown(t, "list", out+errOut)

	code, out, errOut = run(t, env, "list", "--json", tree)
	if code != ExitOK {
		t.Fatalf("list --json: exit %d: %s", code, errOut)
	}
	wantAll(t, "list --json", exactNames(t, objects(t, "entries", decodeJSON(t, "list", out)["entries"]), "name"), dir)

	for _, format := range []string{"text", "github"} {
		code, out, errOut = run(t, env, "audit", "--rules", rulesDir, "--format", format, tree)
		if code != ExitFindings {
			t.Fatalf("audit --format %s: exit %d: %s", format, code, errOut)
		}
		checkShown(t, "audit --format "+format, out+errOut)
	}
	code, out, errOut = run(t, env, "audit", "--rules", rulesDir, "--format", "json", tree)
	if code != ExitFindings {
		t.Fatalf("audit --format json: exit %d: %s", code, errOut)
	}
	wantAll(t, "audit --format json", exactNames(t, objects(t, "findings", decodeJSON(t, "audit", out)["findings"]), "path"), dir)

	lock := filepath.Join(t.TempDir(), "check.lock")
	// Against no lock yet (new packages allowed), every file is a finding.
	code, out, errOut = run(t, env, "check", "--rules", rulesDir, "--lock", lock, "--allow-new", "--format", "json", "p="+tree)
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("check --format json: exit %d: %s", code, errOut)
	}
	wantAll(t, "check --format json", exactNames(t, objects(t, "findings", decodeJSON(t, "check", out)["findings"]), "path"), dir)
	code, out, errOut = run(t, env, "check", "--rules", rulesDir, "--lock", lock, "--update-lock", "p="+tree)
	if code != ExitOK {
		t.Fatalf("check --update-lock: exit %d: %s%s", code, out, errOut)
	}
	checkShown(t, "check --update-lock", out+errOut)
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	pkgs := decodeJSON(t, "lock", string(data))["packages"].(map[string]any)
	wantAll(t, "lock", exactNames(t, objects(t, "lock files", pkgs["p"].(map[string]any)["files"]), "path"), dir)
	for _, format := range []string{"text", "github"} {
		code, out, errOut = run(t, env, "check", "--rules", rulesDir, "--lock", lock, "--format", format, "p="+tree)
		if code != ExitOK {
			t.Fatalf("check --format %s: exit %d: %s%s", format, code, out, errOut)
		}
		checkShown(t, "check --format "+format, out+errOut)
	}
	// With the lock read back exactly, nothing has changed.
	code, out, errOut = run(t, env, "check", "--rules", rulesDir, "--lock", lock, "--format", "json", "p="+tree)
	if code != ExitOK || !strings.Contains(out, `"findings": []`) {
		t.Fatalf("check --format json after --update-lock: exit %d: %s%s", code, out, errOut)
	}

	man := filepath.Join(t.TempDir(), "manifest.json")
	code, out, errOut = run(t, env, "apply", "--rules", rulesDir, "--manifest", man, tree)
	if code != ExitOK {
		t.Fatalf("apply: exit %d: %s", code, errOut)
	}
	checkShown(t, "apply", out+errOut)
	data, err = os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, "manifest", exactNames(t, objects(t, "changes", decodeJSON(t, "manifest", string(data))["changes"]), "path"), dir)
	data, err = os.ReadFile(filepath.Join(tree, "usr/share/minikube/rootfs-trim/index.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := objects(t, "index files", decodeJSON(t, "index", string(data))["files"])
	wantAll(t, "index dest", exactNames(t, files, "dest"), dir)
	wantAll(t, "index source", exactNames(t, files, "source"), "usr/share/minikube/deferred/crio/"+dir)

	// The boot step puts the deferred files back under their exact names.
	code, out, errOut = run(t, env, "render", "--root", tree, "--runtime", "crio", "--cni", "kindnet")
	if code != ExitOK {
		t.Fatalf("render: exit %d: %s", code, errOut)
	}
	checkShown(t, "render", out+errOut)
	var restored []string
	for _, n := range hostileNames {
		if _, err := os.Stat(filepath.Join(tree, dir, n)); err == nil {
			restored = append(restored, n)
		}
	}
	if d := cmp.Diff(hostileNames, restored); d != "" {
		t.Errorf("render restored (-want +got):\n%s", d)
	}
}

// TestExportKeepsNamesOutOfMake: export writes makefile lines; a rule path
// that make would read as more than one path, an expansion or the end of a
// comment is listed as a comment, quoted, never as make code.
func TestExportKeepsNamesOutOfMake(t *testing.T) {
	dir := t.TempDir()
	doc := "package: p\nrules:\n" +
		"  - name: ok\n    match: [etc/plain.conf]\n    action: strip\n    reason: x\n" +
		"  - name: space\n    match: [\"etc/a b.conf\"]\n    action: strip\n    reason: x\n" +
		"  - name: dollar\n    match: [\"etc/$(shell touch /tmp/pwned).conf\"]\n    action: strip\n    reason: x\n" +
		"  - name: newline\n    match: [\"etc/x\\n$(info pwned)\"]\n    action: strip\n    reason: x\n" +
		"  - name: glob\n    match: [\"etc/g/*\\n$(info pwned)\"]\n    action: strip\n    reason: x\n"
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, nil, "export", "buildroot", "--rules", dir)
	if code != ExitOK {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	checkShown(t, "export", out)
	var makeLines []string
	for _, line := range strings.Split(out, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			makeLines = append(makeLines, line)
		}
	}
	if d := cmp.Diff([]string{"P_DROP_FILES_OR_DIRS += /etc/plain.conf"}, makeLines); d != "" {
		t.Errorf("make code (-want +got):\n%s\nwhole output:\n%s", d, out)
	}
}
