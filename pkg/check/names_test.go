package check

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
