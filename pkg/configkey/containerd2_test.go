package configkey

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// guardedCNIDir is the CNI directory the shipped rules guard.
const guardedCNIDir = "/etc/cni/net.d"

// criIDs are the plugins the CRI needs in containerd 2.x, by full ID.
var criIDs = []string{"io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"}

// Version 3 and 4 configs with the CRI off and settings of their own: a
// per-runtime cni_conf_dir, the CNI binaries, and a root, so that the
// dump shows the file was read.
const (
	containerdV3 = "version = 3\nroot = \"/var/lib/containerd3\"\n# the CRI is off, and aufs\ndisabled_plugins = [\n  \"io.containerd.cri.v1.images\",\n  \"io.containerd.grpc.v1.cri\", # off\n  \"io.containerd.snapshotter.v1.aufs\",\n  \"io.containerd.cri.v1.runtime\",\n]\n\n" +
		"[plugins.\"io.containerd.cri.v1.runtime\".cni]\n  conf_dir = \"/etc/cni/net.d\"\n  bin_dirs = ['/usr/lib/cni']\n" +
		"[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc]\n  runtime_type = \"io.containerd.runc.v2\"\n  cni_conf_dir = \"/etc/cni/net.d\"\n" +
		"[plugins.\"io.containerd.cri.v1.images\"]\n  snapshotter = \"native\"\n[grpc]\n  address = \"/run/containerd/containerd.sock\"\n"
	// containerdV4 is as containerd 2.3's `config default` writes it: the
	// servers are plugins.
	containerdV4 = "version = 4\nroot = \"/var/lib/containerd4\"\ndisabled_plugins = [\"io.containerd.cri.v1.runtime\"]\n\n" +
		"[plugins]\n  [plugins.\"io.containerd.cri.v1.runtime\".cni]\n    bin_dirs = [\"/usr/lib/cni\"]\n    conf_dir = \"/etc/cni/net.d\"\n" +
		"  [plugins.\"io.containerd.server.v1.grpc\"]\n    address = \"/run/containerd/containerd.sock\"\n"
)

// TestContainerd2ReadsTheEdit proves the edit with containerd 2.3, which
// the ISO ships and which reads (and migrates) every config version:
// testdata/containerd2 is its own config loading, built from its module.
// Before the edit the CRI is disabled; after, none of its plugins is, the
// runtime plugin reads its CNI directories where the rules guard them, and
// everything else containerd reads is the same.
func TestContainerd2ReadsTheEdit(t *testing.T) {
	bin := containerd2(t)
	fixture, err := os.ReadFile("testdata/containerd.io-config.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, in string
		binDirs  []any             // the file's (containerd's default in 1), as the runtime plugin reads them
		perRun   map[string]string // the file's per-runtime cni_conf_dir
	}{
		{"version 1, containerd.io's", string(fixture), []any{"/opt/cni/bin"}, map[string]string{}},
		{"version 2", containerdV2, []any{"/usr/lib/cni"}, map[string]string{}},
		{"version 3", containerdV3, []any{"/usr/lib/cni"}, map[string]string{"runc": guardedCNIDir}},
		{"version 4", containerdV4, []any{"/usr/lib/cni"}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Rule{Format: Containerd{}, Key: Path{"disabled_plugins"}, Change: Remove{Values: []string{"cri"}}}.Check([]byte(tc.in))
			if err != nil || res.Out == nil {
				t.Fatalf("nothing changed: %v", err)
			}
			before, after := readContainerd2(t, bin, []byte(tc.in)), readContainerd2(t, bin, res.Out)
			if !slices.Contains(slices.Collect(maps.Values(before.Disabled)), true) {
				t.Fatalf("before the edit, containerd 2 reads the CRI as enabled: %v", before.Disabled)
			}
			if diff := cmp.Diff(map[string]bool{criIDs[0]: false, criIDs[1]: false, criIDs[2]: false}, after.Disabled); diff != "" {
				t.Errorf("after the edit, disabled CRI plugins (-want +got):\n%s", diff)
			}
			if after.ConfDir != guardedCNIDir {
				t.Errorf("after the edit, the CRI reads CNI configs in %q, not %q", after.ConfDir, guardedCNIDir)
			}
			if diff := cmp.Diff(tc.perRun, after.CNIConfDirs); diff != "" {
				t.Errorf("after the edit, per-runtime cni_conf_dir (-want +got):\n%s", diff)
			}
			cni := after.plugin(criIDs[1])["cni"].(map[string]any)
			if diff := cmp.Diff(tc.binDirs, cni["bin_dirs"]); diff != "" {
				t.Errorf("after the edit, the CRI's CNI binaries are not the file's (-want +got):\n%s", diff)
			}
			want := slices.DeleteFunc(before.disabledPlugins(), func(id string) bool { return slices.Contains(criIDs, id) })
			if diff := cmp.Diff(want, after.disabledPlugins()); diff != "" {
				t.Errorf("disabled_plugins: other plugins changed (-want +got):\n%s", diff)
			}
			// A disabled plugin's settings are not in the dump: compare
			// the rest.
			for _, r := range []*containerd2Report{&before, &after} {
				delete(r.Dump, "disabled_plugins")
				for _, id := range criIDs {
					delete(r.Dump["plugins"].(map[string]any), id)
				}
			}
			if diff := cmp.Diff(before.Dump, after.Dump); diff != "" {
				t.Errorf("containerd 2 reads other settings otherwise (-before +after):\n%s", diff)
			}
		})
	}
}

// containerdV2 is a version-2 config with the CRI off (containerd 1.x's
// spelling, which containerd 2 migrates).
const containerdV2 = "version = 2\n# the CRI is off, and aufs\nroot = \"/var/lib/containerd2\"\ndisabled_plugins = [\n  \"io.containerd.grpc.v1.cri\", # off\n  \"io.containerd.snapshotter.v1.aufs\",\n]\n\n" +
	"[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  conf_dir = \"/etc/cni/net.d\"\n  bin_dir = '/usr/lib/cni'\n[grpc]\n  address = \"/run/containerd/containerd.sock\"\n"

// containerd2Report is what testdata/containerd2 prints.
type containerd2Report struct {
	Version     int               `json:"version"`
	Disabled    map[string]bool   `json:"disabled"`
	ConfDir     string            `json:"conf_dir"`
	CNIConfDirs map[string]string `json:"cni_conf_dirs"`
	Dump        map[string]any    `json:"dump"`
}

func (r containerd2Report) plugin(id string) map[string]any {
	p, _ := r.Dump["plugins"].(map[string]any)[id].(map[string]any)
	return p
}

func (r containerd2Report) disabledPlugins() []string {
	out := []string{}
	list, _ := r.Dump["disabled_plugins"].([]any)
	for _, v := range list {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// readContainerd2 is what containerd 2 reads in config.
func readContainerd2(t *testing.T, bin string, config []byte) containerd2Report {
	t.Helper()
	name := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(name, config, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, name)
	cmd.Env = []string{"LC_ALL=C", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("containerd 2 reading the config: %v\n%s", err, stderr.Bytes())
	}
	var r containerd2Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("containerd 2's report: %v", err)
	}
	return r
}

// containerd2 builds testdata/containerd2 with the containerd its go.mod
// names, outside rootfs-trim's vendored build (a module of its own, from
// the Go module proxy), once per user: the binary is kept in the user's
// cache directory under the containerd version and a hash of the sources
// and Go version. No Go toolchain, or no modules to be had: the test is
// skipped (failed under ROOTFS_TRIM_REQUIRE_TOOLS=1).
func containerd2(t *testing.T) string {
	t.Helper()
	archivetest.RequireTool(t, "go")
	src := map[string][]byte{}
	sum := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join("testdata/containerd2", f))
		if err != nil {
			t.Fatal(err)
		}
		src[f] = b
		fmt.Fprintf(sum, "%s %d\n%s", f, len(b), b)
	}
	fmt.Fprintln(sum, runtime.Version())
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github.com/containerd/containerd/v2 (v\S+)$`).FindSubmatch(src["go.mod"])
	if m == nil {
		t.Fatal("testdata/containerd2/go.mod requires no containerd")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = t.TempDir()
	}
	bin := filepath.Join(cache, "rootfs-trim", fmt.Sprintf("containerd-config-%s-%x", m[1], sum.Sum(nil)[:6]), "containerd-config")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	dir := t.TempDir()
	for f, b := range src {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := goCommand(dir, "mod", "download").CombinedOutput(); err != nil {
		if os.Getenv(archivetest.RequireToolsEnv) == "1" {
			t.Fatalf("containerd %s's module cannot be had, and %s=1 forbids skipping: %v\n%s", m[1], archivetest.RequireToolsEnv, err, out)
		}
		t.Skipf("containerd %s's module cannot be had: %v\n%s", m[1], err, out)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// Built beside its place and renamed, so a test running beside this
	// one never runs half a binary.
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	if out, err := goCommand(dir, "build", "-trimpath", "-o", tmp, ".").CombinedOutput(); err != nil {
		t.Fatalf("building containerd %s's config loader: %v\n%s", m[1], err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// goCommand runs go in dir with the caller's Go settings (GOPROXY, module
// cache), the dependencies as go.mod and go.sum pin them, and no cgo
// (containerd's btrfs snapshotter, the one builtin that needs it, has no
// config the CRI reads).
func goCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off", "CGO_ENABLED=0", "LC_ALL=C")
	return cmd
}
