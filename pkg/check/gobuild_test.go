package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners/gobintest"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// TestGoModuleBump: in a kicbase-like tree, a buildkitd no list names is
// owned by its main module, github.com/moby/buildkit, which the shipped
// rules name as an alias of buildkit: the lock records its version, and
// a tarball bump is an error naming the module and both versions, which
// --update-lock accepts. An owners list whose version the binary
// contradicts is an error too.
func TestGoModuleBump(t *testing.T) {
	set, err := rules.Load("../../rules")
	if err != nil {
		t.Fatal(err)
	}
	b := gobintest.New(t)
	old, bumped := b.Module("github.com/moby/buildkit", "v0.17.0"), b.Module("github.com/moby/buildkit", "v0.18.0")
	crictl := b.Module("sigs.k8s.io/cri-tools", "v1.35.0")
	root := t.TempDir()
	put := func(name, src string, data []byte) {
		t.Helper()
		if src != "" {
			var err error
			if data, err = os.ReadFile(src); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put(owners.DpkgInfoDir+"/runc.list", "", []byte("/.\n/usr/sbin/runc\n"))
	put(owners.ListsDir+"/crictl.list", "", []byte("/usr/local/bin/crictl\n"))
	put(owners.ListsDir+"/crictl.version", "", []byte("v1.35.0\n"))
	put("usr/local/bin/crictl", crictl, nil)
	put("usr/local/bin/buildkitd", old, nil)
	run := func(lock *Lock) *Result {
		t.Helper()
		res, err := Run(Options{Set: set, Lock: lock, AllowNew: true, Inputs: []Input{{Path: root, Source: container.SourceOf(root, container.OpenOptions{}), Image: true}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	findings := func(res *Result, checks ...string) []string {
		var out []string
		for _, f := range res.Findings {
			for _, c := range checks {
				if f.Check == c {
					out = append(out, f.Severity.String()+" "+f.Package+": "+f.Path+" "+f.Reason)
				}
			}
		}
		return out
	}
	first := run(NewLock())
	if got := first.NewLock.Packages["buildkit"]; got == nil || got.Version != "v0.17.0" {
		t.Fatalf("the lock's buildkit: %+v, want version v0.17.0", got)
	}
	if got := run(first.NewLock); len(findings(got, CheckModuleVersion, CheckContradicted)) > 0 || got.Failed() {
		t.Fatalf("the same tree again: %v", got.Findings)
	}

	put("usr/local/bin/buildkitd", bumped, nil)
	bump := run(first.NewLock)
	want := []string{"error buildkit:  module github.com/moby/buildkit: version v0.17.0 -> v0.18.0 (its binaries' Go build information): review, then check --update-lock"}
	if diff := cmp.Diff(want, findings(bump, CheckModuleVersion, CheckVersion)); diff != "" || !bump.Failed() {
		t.Errorf("a bump (failed: %v; -want +got):\n%s", bump.Failed(), diff)
	}
	if got := run(bump.NewLock); got.Failed() {
		t.Errorf("after --update-lock: %v", got.Findings)
	}

	put(owners.ListsDir+"/crictl.version", "", []byte("v1.34.0\n"))
	want = []string{"error crictl-bin: usr/local/bin/crictl the owners list says version v1.34.0, the binary's Go build information sigs.k8s.io/cri-tools v1.35.0: fix the list's .version"}
	if diff := cmp.Diff(want, findings(run(bump.NewLock), CheckContradicted)); diff != "" {
		t.Errorf("a list's version the binary contradicts (-want +got):\n%s", diff)
	}
}
