// Package minikube checks the patches in integrations/minikube against the
// files they change, kept as they are at kubernetes/minikube eb25dbc7 in
// testdata/minikube-eb25dbc7 (CI has no network): both apply, with git
// and with GNU patch, alone and one after the other, and the kicbase
// patch says what its README says it does.
package minikube

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/schematest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

const (
	nodePatch    = "0001-node-let-rootfs-trim-configure-the-runtime-s-CNI-and-crictl.patch"
	kicbasePatch = "0002-kicbase-build-with-rootfs-trim.patch"
)

// pristine copies the eb25dbc7 files into a scratch directory.
func pristine(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "minikube")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "testdata/minikube-eb25dbc7"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPatchesApply(t *testing.T) {
	archivetest.RequireTool(t, "git")
	archivetest.RequireTool(t, "patch")
	root := schematest.Root(t)
	env := append(os.Environ(), "LC_ALL=C")
	patch := func(name string) string { return filepath.Join(root, "integrations/minikube", name) }
	for _, p := range []string{nodePatch, kicbasePatch} {
		t.Run(p, func(t *testing.T) {
			dir := pristine(t, root)
			archivetest.RunIn(t, dir, env, "git", "apply", "--check", patch(p))
			archivetest.RunIn(t, dir, env, "patch", "-p1", "--dry-run", "--forward", "-i", patch(p))
		})
	}
	t.Run("both", func(t *testing.T) {
		dir := pristine(t, root)
		archivetest.RunIn(t, dir, env, "git", "apply", patch(nodePatch))
		archivetest.RunIn(t, dir, env, "git", "apply", patch(kicbasePatch))
		checkKicbase(t, root, dir)
	})
}

// checkKicbase: the patched Dockerfile runs rootfs-trim last before the
// squash with the shipped rules and unit, for every TARGETARCH, and
// drops `systemctl disable containerd`/`crio` (the rules' boot_runtime
// strips their links) and `rm -f /etc/crictl.yaml`; every
// tarball install records its owner under a name the rules know; and
// the CRI no longer hangs on where `COPY containerd.toml` stands.
func checkKicbase(t *testing.T, root, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "deploy/kicbase/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	for _, want := range []string{
		"COPY rootfs-trim-${TARGETARCH} /usr/bin/rootfs-trim\n",
		"COPY rootfs-trim-render.service /usr/lib/systemd/system/rootfs-trim-render.service\n",
		"RUN systemctl enable rootfs-trim-render.service\n",
		"rootfs-trim apply --rules /tmp/rootfs-trim-rules --strict /\n",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("the patched Dockerfile lacks %q", want)
		}
	}
	if strings.Contains(df, "rm -f /etc/crictl.yaml") {
		t.Error("the patched Dockerfile still removes /etc/crictl.yaml by hand")
	}
	for _, unit := range []string{"systemctl disable containerd", "systemctl disable crio"} {
		if strings.Contains(df, unit) {
			t.Errorf("the patched Dockerfile still runs %q", unit)
		}
	}
	apply := strings.Index(df, "rootfs-trim apply --rules")
	if squash := strings.Index(df, "FROM scratch"); apply < 0 || squash < apply || strings.Contains(df[apply:squash], "\nRUN ") {
		t.Error("rootfs-trim apply is not the last RUN before the squash")
	}
	for _, owner := range []string{"cri-dockerd", "nerdctl", "nerdctld", "buildkit", "crictl", "cni-plugins"} {
		if !strings.Contains(df, `"${OWNERS}/`+owner+`.list"`) || !strings.Contains(df, `"${OWNERS}/`+owner+`.version"`) {
			t.Errorf("no owners list and version for %s", owner)
		}
	}
	checkCRIWithoutCopyOrder(t, root, df)
	script, err := os.ReadFile(filepath.Join(dir, "hack/build_rootfs_trim.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// What the build script copies exists in this tree.
	for _, p := range []string{"rules", "cmd/rootfs-trim", "buildroot-overlay/usr/lib/systemd/system/rootfs-trim-render.service"} {
		if !strings.Contains(string(script), p) {
			t.Errorf("hack/build_rootfs_trim.sh does not name %s", p)
		}
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("hack/build_rootfs_trim.sh copies %s: %v", p, err)
		}
	}
}

// checkCRIWithoutCopyOrder: kicbase kept containerd.io's disabled_plugins
// = ["cri"] out only by copying minikube's config before the install
// (clean-install's --force-confold keeps it). The patched Dockerfile says
// that order no longer matters; it holds if the rules the build step
// copies (rules/) edit containerd.io's own file into one with the CRI on.
func checkCRIWithoutCopyOrder(t *testing.T, root, df string) {
	t.Helper()
	if !strings.Contains(df, "Where it stands no longer matters for\n# the CRI") {
		t.Error("the patched Dockerfile does not say why the COPY of containerd.toml stays")
	}
	set, err := rules.Load(filepath.Join(root, "rules"))
	if err != nil {
		t.Fatal(err)
	}
	pkgConfig, err := os.ReadFile(filepath.Join(root, "pkg/configkey/testdata/containerd.io-config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	const config = "etc/containerd/config.toml"
	pkg := set.Lookup("containerd.io")
	if pkg == nil {
		t.Fatal("the rules name no package containerd.io")
	}
	for _, r := range pkg.Rules {
		if r.Edit == nil || !slices.ContainsFunc(r.Paths, func(p rules.Pattern) bool { return p.Match(config) }) {
			continue
		}
		res, err := r.Edit.Check(pkgConfig)
		if err != nil {
			t.Fatalf("rule %s on containerd.io's config: %v", r.Name, err)
		}
		if res.Out == nil {
			t.Fatalf("rule %s leaves containerd.io's config as it is (%s)", r.Name, res.Show())
		}
		after, err := r.Edit.Check(res.Out)
		if err != nil || after.Out != nil || strings.Contains(after.Show(), "cri") {
			t.Fatalf("rule %s's output still reads %s (%v)", r.Name, after.Show(), err)
		}
		return
	}
	t.Errorf("no rule of containerd.io edits /%s: the CRI would hang on the COPY order", config)
}
