package packages

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	toml "github.com/pelletier/go-toml/v2"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// TestKicbaseContainerdIOConfig: kicbase without its COPY of minikube's
// containerd.toml, so that /etc/containerd/config.toml is the one
// containerd.io installs (disabled_plugins = ["cri"]), owned by
// containerd.io in the dpkg database. audit finds it beside the tree's
// other offenders; `apply --strict` edits it; the tree then audits clean
// (exit 0, no finding), and Debian's containerd (1.6) reads the CRI as
// enabled, with its CNI configs in /etc/cni/net.d.
func TestKicbaseContainerdIOConfig(t *testing.T) {
	archivetest.RequireTool(t, "containerd")
	root := repoRoot(t)
	tree := kicbaseTree(t, root, "amd64")
	const config = "etc/containerd/config.toml"
	// The package's file, as pkg/configkey/testdata/README.md says.
	pkgConfig, err := os.ReadFile(filepath.Join(root, "pkg/configkey/testdata/containerd.io-config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, config), pkgConfig, 0o644); err != nil {
		t.Fatal(err)
	}
	owners, err := os.ReadFile(filepath.Join(tree, "var/lib/dpkg/info/containerd.io.list"))
	if err != nil || !slices.Contains(strings.Split(string(owners), "\n"), "/"+config) {
		t.Fatalf("containerd.io does not own /%s in the fixture's dpkg database: %v", config, err)
	}
	// containerd 1.6 dumps a version-1 file's list as written ("cri") and
	// its plugins by full ID.
	const cri = "io.containerd.grpc.v1.cri"
	off := func(d containerdConfig) bool {
		return slices.Contains(d.DisabledPlugins, "cri") || slices.Contains(d.DisabledPlugins, cri)
	}
	if d := containerdDump(t, filepath.Join(tree, config)); !off(d) {
		t.Fatalf("before apply, containerd reads disabled_plugins %q: the CRI is on", d.DisabledPlugins)
	}

	want := kicbaseWant("amd64")
	want[config] = finding{Package: "containerd.io", Rule: "containerd-cri-disabled", Action: "edit", Check: "offender"}
	if diff := cmp.Diff(want, audit(t, root, tree)); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	out, code := run(t, "apply", "--rules", filepath.Join(root, "rules"), "--strict", tree)
	edited := regexp.MustCompile(`(?m)^edited +` + config + ` +containerd.io +rule containerd-cri-disabled$`)
	if code != 0 || !edited.MatchString(out) {
		t.Fatalf("apply --strict: exit %d, %s not edited\n%s", code, config, out)
	}
	out, code = run(t, "audit", "--rules", filepath.Join(root, "rules"), tree)
	// Clean but for the notes that docker, the policy's runtime, starts.
	if code != 0 || !regexp.MustCompile(`(?m)^(clean: nothing offends|0 offending file\(s\), 0 error\(s\), 0 warning\(s\))`).MatchString(out) {
		t.Errorf("audit after apply: exit %d\n%s", code, out)
	}
	if after := audit(t, root, tree); len(after) != 0 {
		t.Errorf("audit after apply: %v", after)
	}

	d := containerdDump(t, filepath.Join(tree, config))
	if off(d) {
		t.Errorf("after apply, containerd reads disabled_plugins %q: the CRI is still off", d.DisabledPlugins)
	}
	if got := d.Plugins[cri].CNI.ConfDir; got != "/etc/cni/net.d" {
		t.Errorf("after apply, containerd's CRI reads CNI configs in %q (not loaded, or elsewhere)", got)
	}
}

// containerdConfig is what the test reads of `containerd config dump`.
type containerdConfig struct {
	DisabledPlugins []string `toml:"disabled_plugins"`
	Plugins         map[string]struct {
		CNI struct {
			ConfDir string `toml:"conf_dir"`
		} `toml:"cni"`
	} `toml:"plugins"`
}

// containerdDump is the config Debian's containerd reads in file.
func containerdDump(t *testing.T, file string) containerdConfig {
	t.Helper()
	cmd := exec.Command("containerd", "--config", file, "config", "dump")
	cmd.Env = []string{"LC_ALL=C", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("containerd config dump: %v", err)
	}
	var c containerdConfig
	if err := toml.Unmarshal(out, &c); err != nil {
		t.Fatalf("containerd's dump: %v", err)
	}
	return c
}
