// Package packages proves the shipped rules against what the runtime
// packages really install: the fixtures in testdata/packages (Debian 12's
// packages, hand-made mirrors of upstream tarballs and the minikube ISO's
// Buildroot packages on both architectures). For every tree and every name
// the package goes by, `audit` must find each file the policy forbids
// handled by that package's own rule and attributed to it, `apply
// --dry-run` must carry each one out, and `check` must pass against the
// lock that records the version the tree mirrors.
package packages

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/schematest"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

var update = flag.Bool("update", false, "rewrite the fixtures' locks (check --update-lock)")

// bin is rootfs-trim, built once for the package's tests: the CLI is
// internal to cmd/rootfs-trim, so the fixtures are checked through the
// binary a user runs.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "packages-test-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "rootfs-trim")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/rootfs-trim")
	cmd.Dir, cmd.Env = "../..", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// handled is what the rules must make of one offending file.
type handled struct {
	Rule   string
	Action string
}

// fixture is a tree under testdata/packages and what the shipped rules
// must find in it.
type fixture struct {
	dir string // under testdata/packages; holds root/, version and check.lock
	// names are every name the package goes by (Buildroot's on both
	// architectures, Debian's): the tree is audited as each. The first is
	// the one its lock records.
	names []string
	want  map[string]handled // offending path -> rule
	// stale are the must-match rules that the package's content leaves
	// with nothing to match, each with a stale_reason: audit and check
	// report them as warnings, and check passes.
	stale []string
}

// crio's files, whatever cri-o tree they come from.
var (
	crioCrictl = handled{"crio-crictl", "strip"}
	crioUnit   = handled{"crio-unit-in-usr-local", "relocate"}
	crioNames  = []string{"crio-bin", "cri-o"}
)

var fixtures = []fixture{
	// Debian 12, from the real packages (fetch.sh).
	{dir: "debian-12/podman", names: []string{"podman"}, want: map[string]handled{
		"etc/cni/net.d/87-podman-bridge.conflist": {"podman-bridge", "relocate"},
	}},
	{dir: "debian-12/containerd", names: []string{"containerd", "containerd.io"}},
	{dir: "debian-12/docker.io", names: []string{"docker.io", "docker-ce"}},
	{dir: "debian-12/containernetworking-plugins", names: []string{"containernetworking-plugins"}},
	{dir: "debian-12/golang-github-containers-common", names: []string{"golang-github-containers-common"}},

	// Upstream tarballs and packages, mirrored by hand.
	{dir: "upstream/cri-o-bundle-v1.35.0", names: crioNames, want: map[string]handled{
		"etc/cni/net.d/10-crio-bridge.conflist.disabled": {"crio-bridge-disabled", "defer"},
		"etc/crictl.yaml": crioCrictl,
		"usr/local/lib/systemd/system/crio.service": crioUnit,
	}},
	{dir: "upstream/cri-o-bundle-v1.31.0", names: crioNames, want: map[string]handled{
		"etc/cni/net.d/11-crio-ipv4-bridge.conflist": {"crio-ipv4-bridge", "defer"},
		"etc/crictl.yaml": crioCrictl,
		"usr/local/lib/systemd/system/crio.service": crioUnit,
	}},
	{dir: "upstream/cri-o-contrib-cni-v1.31.0", names: crioNames, want: map[string]handled{
		"etc/cni/net.d/10-crio-bridge.conflist":      {"crio-bridge", "defer"},
		"etc/cni/net.d/11-crio-ipv4-bridge.conflist": {"crio-ipv4-bridge", "defer"},
		"etc/cni/net.d/99-loopback.conflist":         {"crio-loopback", "defer"},
	}},
	{dir: "upstream/cri-o-contrib-cni-v1.24.0", names: crioNames, want: map[string]handled{
		"etc/cni/net.d/10-crio-bridge.conf":      {"crio-bridge", "defer"},
		"etc/cni/net.d/11-crio-ipv4-bridge.conf": {"crio-ipv4-bridge", "defer"},
		"etc/cni/net.d/99-loopback.conf":         {"crio-loopback", "defer"},
	}},
	{dir: "upstream/cri-o-deb-v1.35.0", names: []string{"cri-o", "crio-bin"}, want: map[string]handled{
		"etc/cni/net.d/10-crio-bridge.conflist.disabled": {"crio-bridge-disabled", "defer"},
		"etc/crictl.yaml": crioCrictl,
	}},
	{dir: "upstream/cri-o-kubic-deb-v1.24.0", names: []string{"cri-o", "crio-bin"}, want: map[string]handled{
		"etc/cni/net.d/100-crio-bridge.conf": {"crio-legacy-bridge", "defer"},
		"etc/cni/net.d/200-loopback.conf":    {"crio-legacy-loopback", "defer"},
		"etc/crictl.yaml":                    crioCrictl,
	}},
	{dir: "upstream/cri-o-kubic-deb-v1.28.0", names: []string{"cri-o", "crio-bin"}, want: map[string]handled{
		"etc/cni/net.d/100-crio-bridge.conflist": {"crio-legacy-bridge", "defer"},
		"etc/cni/net.d/200-loopback.conflist":    {"crio-legacy-loopback", "defer"},
		"etc/crictl.yaml":                        crioCrictl,
	}},
	{dir: "upstream/cri-containerd-cni-1.7.27", names: []string{"cri-containerd-cni", "containerd-bin", "containerd-bin-aarch64"}, want: map[string]handled{
		"etc/cni/net.d/10-containerd-net.conflist": {"containerd-net", "defer"},
		"etc/crictl.yaml":                          {"containerd-crictl", "strip"},
		"etc/systemd/system/containerd.service":    {"containerd-unit-in-etc", "relocate"},
	}},
	{dir: "upstream/containerd-2.3.4", names: []string{"containerd-bin", "containerd-bin-aarch64"}},
	{dir: "upstream/podman-v3.4.7", names: []string{"podman"}, want: map[string]handled{
		"etc/cni/net.d/87-podman-bridge.conflist": {"podman-bridge", "relocate"},
	}},
	// netavark: the default network lives in the binary, no conflist.
	{dir: "upstream/podman-v5.8.2", names: []string{"podman"}, stale: []string{"podman-bridge"}},
}

// isoTargets are the ISO's Buildroot targets, attributed by their
// packages-file-list.txt. rules/check.lock records both: the lock is keyed
// by the rule files' package names, so the arm64 names
// (containerd-bin-aarch64, ...) fold into the same entries.
var isoTargets = []struct {
	arch string
	lock string // relative to the repository
}{
	{"x86_64", "rules/check.lock"},
	{"aarch64", "rules/check.lock"},
}

// isoWant is the same on both architectures: podman keeps its name, and
// its v3 conflist is the one offending file the ISO ships.
var isoWant = map[string]finding{
	"etc/cni/net.d/87-podman-bridge.conflist": {Package: "podman", Rule: "podman-bridge", Action: "relocate"},
}

type finding struct {
	Path    string `json:"path,omitempty"`
	Package string `json:"package"`
	Rule    string `json:"rule,omitempty"`
	Action  string `json:"action,omitempty"`
	Check   string `json:"check"`
}

type report struct {
	Findings []finding `json:"findings"`
}

func TestPackageTrees(t *testing.T) {
	root := repoRoot(t)
	set := loadRules(t, root)
	for _, fx := range fixtures {
		dir := filepath.Join(root, "testdata/packages", fx.dir)
		tree := filepath.Join(dir, "root")
		t.Run(fx.dir, func(t *testing.T) {
			forbidden := policyFiles(t, tree)
			for _, name := range fx.names {
				t.Run(name, func(t *testing.T) {
					got := audit(t, root, "--package", name, tree)
					want := map[string]finding{}
					for p, h := range fx.want {
						want[p] = finding{Package: name, Rule: h.Rule, Action: h.Action, Check: "offender"}
					}
					for _, r := range fx.stale {
						rule := ruleNamed(t, set, r)
						want[staleKey(r)] = finding{Package: rule.Package, Rule: r, Action: rule.Action.String(), Check: "stale-rule"}
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("audit --package %s: findings (-want +got):\n%s", name, diff)
					}
					checkOwnRules(t, set, name, got)
					checkCovered(t, forbidden, got)
					dryRun(t, root, fx.want, "--package", name, tree)
				})
			}
			// One lock, whatever name the package goes by: check keys it
			// by the rule file's package name, or a variant's own (cri-o
			// beside crio-bin): then the lock holds an entry under each,
			// and each name's check sees only its own.
			keys := map[string]bool{}
			for _, name := range fx.names {
				keys[set.LockName(name)] = true
			}
			for _, name := range fx.names {
				t.Run("check/"+name, func(t *testing.T) {
					version := readVersion(t, dir)
					lock := filepath.Join(dir, "check.lock")
					args := []string{name + "@" + version + "=" + tree}
					if len(keys) > 1 {
						args = append([]string{"--allow-missing"}, args...)
					}
					runCheck(t, root, lock, fx.stale, args...)
				})
			}
		})
	}
}

func TestISOTargets(t *testing.T) {
	root := repoRoot(t)
	set := loadRules(t, root)
	for _, iso := range isoTargets {
		t.Run(iso.arch, func(t *testing.T) {
			dir := filepath.Join(root, "testdata/packages/iso", iso.arch)
			target := filepath.Join(dir, "target")
			list := filepath.Join(dir, "packages-file-list.txt")
			got := audit(t, root, "--packages-file-list", list, target)
			want := map[string]finding{}
			for p, f := range isoWant {
				f.Check = "offender"
				want[p] = f
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("audit: findings (-want +got):\n%s", diff)
			}
			for _, f := range got {
				checkOwnRules(t, set, f.Package, map[string]finding{f.Path: f})
			}
			checkCovered(t, policyFiles(t, target), got)
			wantApply := map[string]handled{}
			for p, f := range isoWant {
				wantApply[p] = handled{f.Rule, f.Action}
			}
			dryRun(t, root, wantApply, "--packages-file-list", list, target)
			runCheck(t, root, filepath.Join(root, iso.lock), nil,
				"--packages-file-list", list, "--show-info", filepath.Join(dir, "show-info.json"), target)
		})
	}
}

// TestISONamesHaveRules: every runtime package the ISO installs, under the
// name Buildroot gives it on each architecture, is one the rules know, so
// that `check` locks it and a bump that ships an offender names it.
func TestISONamesHaveRules(t *testing.T) {
	root := repoRoot(t)
	set := loadRules(t, root)
	for _, arch := range []string{"x86_64", "aarch64"} {
		data, err := os.ReadFile(filepath.Join(root, "testdata/packages/iso", arch, "packages-file-list.txt"))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			pkg, _, _ := strings.Cut(line, ",")
			if !seen[pkg] && set.Lookup(pkg) == nil {
				t.Errorf("%s: package %s has no rule file", arch, pkg)
			}
			seen[pkg] = true
		}
	}
}

// audit runs `rootfs-trim audit --format json` and returns its findings by
// path.
func audit(t *testing.T, root string, args ...string) map[string]finding {
	t.Helper()
	out, code := run(t, append([]string{"audit", "--rules", filepath.Join(root, "rules"), "--format", "json"}, args...)...)
	if code != 0 && code != 1 {
		t.Fatalf("audit %v: exit %d\n%s", args, code, out)
	}
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("audit %v: %v\n%s", args, err, out)
	}
	got := map[string]finding{}
	for _, f := range r.Findings {
		// Which runtime starts at boot (boot_runtime) is a property of a
		// whole image, not of a package's files: pkg/trim's
		// TestApplyThenPresetAll and scenario_boot_runtime hold it.
		if strings.HasPrefix(f.Check, "runtime-") {
			continue
		}
		if _, dup := got[f.Path]; dup {
			t.Errorf("audit %v: %s reported twice", args, f.Path)
		}
		p := f.Path
		if f.Check == "stale-rule" {
			p = staleKey(f.Rule)
		}
		f.Path = ""
		got[p] = f
	}
	return got
}

// checkOwnRules: each file is handled by a rule of the package that owns
// it (name or alias), never by a rule for any owner.
func checkOwnRules(t *testing.T, set *rules.Set, name string, got map[string]finding) {
	t.Helper()
	p := set.Lookup(name)
	if p == nil {
		t.Errorf("package %s: no rule file names it", name)
		return
	}
	own := map[string]bool{}
	for _, r := range p.Rules {
		own[r.Name] = true
	}
	for path, f := range got {
		if f.Rule != "" && !own[f.Rule] {
			t.Errorf("%s: handled by rule %s, not one of package %s (%s)", path, f.Rule, p.Name, name)
		}
	}
}

// policyFiles lists what the policy is about, found by walking the tree
// rather than by asking the rules: every CNI configuration in
// etc/cni/net.d but the overlay's .keep, etc/crictl.yaml, unit files in
// etc/systemd/system and runtime units in usr/local/lib/systemd/system.
func policyFiles(t *testing.T, tree string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(tree, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(tree, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		dir, base := filepath.Dir(rel), filepath.Base(rel)
		switch {
		case dir == "etc/cni/net.d" && base != ".keep",
			rel == "etc/crictl.yaml",
			dir == "etc/systemd/system" && d.Type().IsRegular() && strings.Contains(base, "."),
			dir == "usr/local/lib/systemd/system":
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	return paths
}

// checkCovered: audit reports every file policyFiles found, each handled.
func checkCovered(t *testing.T, forbidden []string, got map[string]finding) {
	t.Helper()
	for _, p := range forbidden {
		f, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: forbidden by the policy, but audit does not report it", p)
		case f.Rule == "":
			t.Errorf("%s: a new offender (%s): no rule of package %s handles it", p, f.Check, f.Package)
		case f.Check == "unreviewed":
			t.Errorf("%s: only the fallback rule %s handles it: package %s needs a rule of its own", p, f.Rule, f.Package)
		}
	}
}

// dryRun runs `apply --dry-run` and checks that it carries out each rule;
// it returns what apply printed.
func dryRun(t *testing.T, root string, want map[string]handled, args ...string) string {
	t.Helper()
	// --strict: no fallback rule may be needed for a package we know.
	out, code := run(t, append([]string{"apply", "--rules", filepath.Join(root, "rules"), "--dry-run", "--strict"}, args...)...)
	if code != 0 {
		t.Fatalf("apply --dry-run %v: exit %d\n%s", args, code, out)
		return ""
	}
	verb := map[string]string{"strip": "removed", "defer": "deferred", "relocate": "relocated"}
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && (fields[0] == "removed" || fields[0] == "deferred" || fields[0] == "relocated") {
			got[fields[1]] = fields[0]
		}
	}
	wantVerbs := map[string]string{}
	for p, h := range want {
		wantVerbs[p] = verb[h.Action]
	}
	if diff := cmp.Diff(wantVerbs, got); diff != "" {
		t.Errorf("apply --dry-run %v (-want +got):\n%s\n%s", args, diff, out)
	}
	return out
}

// runCheck runs `check` against lock; with -update it rewrites the lock
// first. It must pass, with no finding but a warning for each stale rule
// expected, which says why (its stale_reason).
func runCheck(t *testing.T, root, lock string, stale []string, args ...string) {
	t.Helper()
	base := []string{"check", "--rules", filepath.Join(root, "rules"), "--lock", lock}
	if *update {
		if out, code := run(t, append(append(base, "--update-lock"), args...)...); code != 0 {
			t.Fatalf("check --update-lock: exit %d\n%s", code, out)
		}
	}
	out, code := run(t, append(append(base, "--format", "json"), args...)...)
	schematest.Validate(t, "check", []byte(out))
	if data, err := os.ReadFile(lock); err != nil {
		t.Error(err)
	} else {
		schematest.Validate(t, "lock", data)
	}
	var r struct {
		Findings []struct {
			finding
			Rule     string `json:"rule"`
			Severity string `json:"severity"`
			Reason   string `json:"reason"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	set := loadRules(t, root)
	want := map[string]string{}
	for _, name := range stale {
		want[name] = "warning stale-rule matched nothing: " + ruleNamed(t, set, name).StaleReason
	}
	got := map[string]string{}
	for _, f := range r.Findings {
		if f.Severity == "note" {
			continue // a variant's entry, absent under the other name (--allow-missing)
		}
		got[f.Rule] = f.Severity + " " + f.Check + " " + f.Reason
	}
	if code != 0 || !cmp.Equal(want, got) {
		t.Errorf("check %v: exit %d, want 0 and only the stale rules %v (go test ./test/packages -update rewrites the lock):\n%s", args, code, stale, out)
	}
}

func staleKey(rule string) string { return "stale-rule " + rule }

func ruleNamed(t *testing.T, set *rules.Set, name string) *rules.Rule {
	t.Helper()
	for _, r := range set.Rules() {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no rule %s", name)
	return nil
}

// run runs rootfs-trim in process and returns its standard output; what
// it printed on standard error fails the test.
func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = []string{"LC_ALL=C", "PATH=" + os.Getenv("PATH")}
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("rootfs-trim %s: %v", strings.Join(args, " "), err)
		}
		code = exit.ExitCode()
	}
	// A stale rule is a warning apply prints; audit and check report
	// them, and the tests compare those with what they expect.
	var other []string
	for _, line := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
		if line != "" && !(strings.HasPrefix(line, "warning: ") && strings.HasSuffix(line, " [stale-rule]")) {
			other = append(other, line)
		}
	}
	if len(other) > 0 {
		t.Errorf("rootfs-trim %s: stderr:\n%s", strings.Join(args, " "), strings.Join(other, "\n"))
	}
	return stdout.String(), code
}

func loadRules(t *testing.T, root string) *rules.Set {
	t.Helper()
	set, err := rules.Load(filepath.Join(root, "rules"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func readVersion(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "version"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

func repoRoot(t *testing.T) string { return schematest.Root(t) }
