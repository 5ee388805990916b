package packages

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kicbaseArches are the platforms minikube builds kicbase for (its
// Makefile's KICBASE_ARCH); testdata/packages/kicbase has a tree for each.
var kicbaseArches = []string{"amd64", "arm64", "s390x", "ppc64le"}

// kicbaseWant is what the shipped rules make of a kicbase tree: podman's
// conflist (Debian's podman 4.3.1) everywhere, cri-o's deb's bridge and
// crictl.yaml where kicbase installs cri-o (not on ppc64le).
func kicbaseWant(arch string) map[string]finding {
	want := map[string]finding{
		"etc/cni/net.d/87-podman-bridge.conflist": {Package: "podman", Rule: "podman-bridge", Action: "relocate", Check: "offender"},
	}
	if arch != "ppc64le" {
		want["etc/cni/net.d/10-crio-bridge.conflist.disabled"] = finding{Package: "cri-o", Rule: "crio-bridge-disabled", Action: "defer", Check: "offender"}
		want["etc/crictl.yaml"] = finding{Package: "cri-o", Rule: "crio-crictl", Action: "strip", Check: "offender"}
	}
	return want
}

// kicbaseTree copies the fixture of arch to a scratch directory, with the
// directories git does not keep (the mount points of a RUN step's root).
func kicbaseTree(t *testing.T, root, arch string) string {
	t.Helper()
	tree := filepath.Join(t.TempDir(), "root")
	tool(t, root, "cp", "-a", filepath.Join(root, "testdata/packages/kicbase", arch, "root"), tree)
	for _, d := range []string{"proc", "sys", "dev", "run", "tmp"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

// TestKicbaseTrees: on each architecture's kicbase-like root, owned by its
// dpkg database and its owners lists alone, check passes against the
// arch's lock, audit finds exactly the packaged offenders, each
// attributed and handled by its package's rule; `apply --strict` (no
// fallback) finishes with nothing unreviewed; the result audits clean; and
// apply added, changed and removed nothing under /var, a KIC node's volume.
func TestKicbaseTrees(t *testing.T) {
	root := repoRoot(t)
	rulesDir := filepath.Join(root, "rules")
	for _, arch := range kicbaseArches {
		t.Run(arch, func(t *testing.T) {
			tree := kicbaseTree(t, root, arch)
			got := audit(t, root, tree)
			if diff := cmp.Diff(kicbaseWant(arch), got); diff != "" {
				t.Errorf("audit (-want +got):\n%s", diff)
			}
			// check gates kicbase's bumps per arch, against a lock of its
			// own (rules/kicbase/ARCH.lock): owners and versions from the
			// image itself, tarball installs from its owners lists.
			runCheck(t, root, filepath.Join(root, "rules/kicbase", arch+".lock"), nil, tree)
			before := treeState(t, filepath.Join(tree, "var"))
			out, code := run(t, "apply", "--rules", rulesDir, "--strict", tree)
			if code != 0 {
				t.Fatalf("apply --strict: exit %d\n%s", code, out)
			}
			if strings.Contains(out, "unreviewed") || strings.Contains(out, "dangling") {
				t.Errorf("apply:\n%s", out)
			}
			if diff := cmp.Diff(before, treeState(t, filepath.Join(tree, "var"))); diff != "" {
				t.Errorf("apply changed /var (-before +after):\n%s", diff)
			}
			if after := audit(t, root, tree); len(after) != 0 {
				t.Errorf("audit after apply: %v", after)
			}
		})
	}
}

// treeState records every entry beneath dir: type, mode, link target or
// content hash, and mtime.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	state := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s := fmt.Sprintf("%v %d", fi.Mode(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			s += " -> " + target
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		state[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}
