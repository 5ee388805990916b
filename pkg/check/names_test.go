package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// TestFoldLock: a lock written under an alias (the arm64 name, the Debian
// name) is read under the rule file's package name; one package under two
// names is refused, naming both.
func TestFoldLock(t *testing.T) {
	set, err := rules.Load("../../rules")
	if err != nil {
		t.Fatal(err)
	}
	lock := &Lock{Version: LockVersion, Packages: map[string]*LockPackage{
		"containerd-bin-aarch64": {Version: "2.3.4"},
		"crio-bin":               {Version: "v1.35.0"},
		"not-a-rule-package":     {Version: "1"},
	}}
	got, err := foldLock(set, lock)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for k, p := range got.Packages {
		keys[k] = p.Version
	}
	want := map[string]string{"containerd-bin": "2.3.4", "crio-bin": "v1.35.0", "not-a-rule-package": "1"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("folded keys (-want +got):\n%s", diff)
	}

	lock.Packages["containerd.io"] = &LockPackage{Version: "1.7.27"}
	_, err = foldLock(set, lock)
	if err == nil || !strings.Contains(err.Error(), "containerd-bin-aarch64 and containerd.io are one package (containerd-bin)") {
		t.Errorf("two names of one package: %v", err)
	}
}

// TestVariantsLockApart: the cri-o deb (a variant of crio-bin) and the
// static bundle (crio-bin) in one check get a lock entry each, with their
// own versions and files; before variants both folded into crio-bin, one
// version for two packagings.
func TestVariantsLockApart(t *testing.T) {
	set, err := rules.Load("../../rules")
	if err != nil {
		t.Fatal(err)
	}
	pk := "../../testdata/packages/upstream/"
	res, err := Run(Options{Set: set, Lock: NewLock(), AllowNew: true, Inputs: []Input{
		{Path: pk + "cri-o-bundle-v1.35.0/root", Source: container.SourceOf(pk+"cri-o-bundle-v1.35.0/root", container.OpenOptions{}), Package: "crio-bin", Version: "v1.35.0"},
		{Path: pk + "cri-o-deb-v1.35.0/root", Source: container.SourceOf(pk+"cri-o-deb-v1.35.0/root", container.OpenOptions{}), Package: "cri-o", Version: "1.35.0-150500.1.1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, p := range res.NewLock.Packages {
		got[k] = p.Version + " " + strings.Repeat("f", len(p.Files))
	}
	// The bundle: its unit in /usr/local, the bridge and crictl.yaml; the
	// deb: the bridge and crictl.yaml.
	want := map[string]string{"crio-bin": "v1.35.0 fff", "cri-o": "1.35.0-150500.1.1 ff"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lock entries (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ name, key string }{
		{"cri-o", "cri-o"}, {"crio-bin", "crio-bin"}, {"containerd.io", "containerd-bin"},
		{"containernetworking-plugins", "containernetworking-plugins"}, {"cni-plugins", "cni-plugins-latest"}, {"sudo", "sudo"},
	} {
		if got := set.LockName(tc.name); got != tc.key {
			t.Errorf("LockName(%s) = %s, want %s", tc.name, got, tc.key)
		}
	}
}

// Two names of one package that give it different versions (containerd.io
// from dpkg, containerd-bin from an owners list, say) lock the same version
// on every run: the rule file's own name's. They were applied in a map's
// order.
func TestAliasVersionsDeterministic(t *testing.T) {
	set, err := rules.Load("../../rules")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, f := range []string{"etc/crictl.yaml", "usr/bin/containerd"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(t.TempDir(), "packages-file-list.txt")
	if err := os.WriteFile(list, []byte("containerd.io,./etc/crictl.yaml\ncontainerd-bin,./usr/bin/containerd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		res, err := Run(Options{Set: set, Lock: NewLock(), AllowNew: true, AllowMissing: true,
			Inputs:   []Input{{Path: root, Source: container.SourceOf(root, container.OpenOptions{}), FileList: list}},
			Versions: map[string]string{"containerd.io": "1.7.0-1", "containerd-bin": "v1.6.0"}})
		if err != nil {
			t.Fatal(err)
		}
		p := res.NewLock.Packages["containerd-bin"]
		if p == nil || p.Version != "v1.6.0" {
			t.Fatalf("containerd-bin locked as %+v, want v1.6.0, its own name's", p)
		}
	}
}
