package packages

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// dpkgFixtures are the trees that carry a dpkg database
// (var/lib/dpkg/info/<package>.list): Debian's packages and the mirrors of
// cri-o's debs.
func dpkgFixtures(t *testing.T, root string) []fixture {
	t.Helper()
	var out []fixture
	for _, fx := range fixtures {
		info := filepath.Join(root, "testdata/packages", fx.dir, "root/var/lib/dpkg/info")
		if _, err := os.Stat(info); err == nil {
			out = append(out, fx)
		}
	}
	if len(out) < 8 {
		t.Fatalf("%d trees with a dpkg database, want the 5 Debian ones and 3 cri-o debs", len(out))
	}
	return out
}

// TestDpkgAttribution: with neither --packages-file-list nor --package,
// audit and apply attribute every offending file from the tree's own dpkg
// database, to the package whose .list names it, and say so; an archive
// of the tree (GNU cpio newc, bsdtar tar and gzip) gives the same.
func TestDpkgAttribution(t *testing.T) {
	root := repoRoot(t)
	archivetest.RequireTool(t, "cpio")
	archivetest.RequireTool(t, "bsdtar")
	for _, fx := range dpkgFixtures(t, root) {
		tree := filepath.Join(root, "testdata/packages", fx.dir, "root")
		name := fx.names[0] // the Debian name: what the .list is called
		if _, err := os.Stat(filepath.Join(tree, "var/lib/dpkg/info", name+".list")); err != nil {
			t.Fatalf("%s: %v", fx.dir, err)
		}
		want := map[string]finding{}
		for p, h := range fx.want {
			want[p] = finding{Package: name, Rule: h.Rule, Action: h.Action, Check: "offender"}
		}
		tmp := t.TempDir()
		cpioPath := filepath.Join(tmp, "rootfs.cpio")
		tarPath := filepath.Join(tmp, "rootfs.tar.gz")
		tool(t, tree, "sh", "-c", "find . | sort | cpio -o -H newc --quiet > "+cpioPath)
		tool(t, tree, "bsdtar", "-czf", tarPath, ".")
		for _, in := range []string{tree, cpioPath, tarPath} {
			t.Run(fx.dir+"/"+filepath.Base(in), func(t *testing.T) {
				got, owners := auditOwners(t, root, in)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("audit without ownership flags: findings (-want +got):\n%s", diff)
				}
				checkOwnRules(t, loadRules(t, root), name, got)
				checkCovered(t, policyFiles(t, tree), got)
				note := "owners: from the dpkg database in " + in + " (1 package)"
				if diff := cmp.Diff([]string{note}, owners); diff != "" {
					t.Errorf("owners (-want +got):\n%s", diff)
				}
				args := []string{in}
				if in != tree {
					args = append(args, filepath.Join(t.TempDir(), "out"))
				}
				out := dryRun(t, root, fx.want, args...)
				if !strings.Contains(out, note+"\n") {
					t.Errorf("apply does not say %q:\n%s", note, out)
				}
			})
		}
	}
}

// TestDpkgCorruptList: a .list that is garbage, has paths without the
// leading /, or a line longer than any path, leaves the files it should
// have named owned by "unknown": audit still runs and reports them.
func TestDpkgCorruptList(t *testing.T) {
	root := repoRoot(t)
	src := filepath.Join(root, "testdata/packages/upstream/cri-o-deb-v1.35.0/root")
	lists := map[string]string{
		"binary garbage":  "\x7fELF\x02\x01\x01\x00\x00\xff\xfe\n\x00\x00\x00",
		"no leading /":    "etc/crictl.yaml\netc/cni/net.d/10-crio-bridge.conflist.disabled\n",
		"a huge line":     "/" + strings.Repeat("etc/", 1<<20) + "crictl.yaml\n",
		"an empty file":   "",
		"a directory too": "/.\n/etc\n",
	}
	for name, content := range lists {
		t.Run(name, func(t *testing.T) {
			tree := filepath.Join(t.TempDir(), "root")
			tool(t, root, "cp", "-a", src, tree)
			if err := os.WriteFile(filepath.Join(tree, "var/lib/dpkg/info/cri-o.list"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, owners := auditOwners(t, root, tree)
			if len(owners) != 1 || !strings.HasPrefix(owners[0], "owners: from the dpkg database in ") {
				t.Errorf("owners: %q", owners)
			}
			for _, p := range policyFiles(t, tree) {
				if f, ok := got[p]; !ok || f.Package != "unknown" {
					t.Errorf("%s: %+v, want reported with package unknown", p, f)
				}
			}
		})
	}
}

// auditOwners is audit without ownership flags: the findings and the
// "owners" lines.
func auditOwners(t *testing.T, root, input string) (map[string]finding, []string) {
	t.Helper()
	got := audit(t, root, input)
	out, _ := run(t, "audit", "--rules", filepath.Join(root, "rules"), "--format", "json", input)
	var r struct {
		Owners []string `json:"owners"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return got, r.Owners
}

// tool runs an external command in dir with a fixed locale.
func tool(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
