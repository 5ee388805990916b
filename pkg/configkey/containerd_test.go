package configkey

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	toml "github.com/pelletier/go-toml/v2"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// TestContainerdReadsTheEdit proves the edit with the consumer itself:
// Debian's containerd (1.6) dumps the config it reads from each file
// before and after the rule's edit. After, the CRI is not among the
// disabled plugins, and containerd loads it (its settings appear in the
// dump, those the file gives included); everything else containerd reads
// is the same.
// (containerd 1.6 misreads a version-3 file as version 2: no oracle for
// those.)
func TestContainerdReadsTheEdit(t *testing.T) {
	archivetest.RequireTool(t, "containerd")
	fixture, err := os.ReadFile("testdata/containerd.io-config.toml")
	if err != nil {
		t.Fatal(err)
	}
	v2 := "version = 2\n# the CRI is off, and aufs\nroot = \"/var/lib/containerd2\"\ndisabled_plugins = [\n  \"io.containerd.grpc.v1.cri\", # off\n  \"io.containerd.snapshotter.v1.aufs\",\n]\n\n" +
		"[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  conf_dir = \"/etc/cni/net.d\"\n  bin_dir = '/opt/cni/bin'\n[grpc]\n  address = \"/run/containerd/containerd.sock\"\n"
	for _, tc := range []struct {
		name, in, cri string
		confDir       string // what the CRI's settings say once it is on
	}{
		{"version 1, containerd.io's", string(fixture), "cri", "/etc/cni/net.d"},
		{"version 2", v2, "io.containerd.grpc.v1.cri", "/etc/cni/net.d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Rule{Format: Containerd{}, Key: Path{"disabled_plugins"}, Change: Remove{Values: []string{"cri"}}}.Check([]byte(tc.in))
			if err != nil || res.Out == nil {
				t.Fatalf("nothing changed: %v", err)
			}
			before, after := containerdDump(t, []byte(tc.in)), containerdDump(t, res.Out)
			if !slices.Contains(disabled(before), tc.cri) {
				t.Fatalf("before the edit, containerd reads disabled_plugins %q: no %s", disabled(before), tc.cri)
			}
			if slices.Contains(disabled(after), tc.cri) {
				t.Errorf("after the edit, containerd reads disabled_plugins %q: %s is still there", disabled(after), tc.cri)
			}
			want := slices.DeleteFunc(disabled(before), func(s string) bool { return s == tc.cri })
			if diff := cmp.Diff(want, disabled(after)); diff != "" {
				t.Errorf("disabled_plugins: other plugins changed (-want +got):\n%s", diff)
			}
			const criID = "io.containerd.grpc.v1.cri"
			cri, _ := after["plugins"].(map[string]any)[criID].(map[string]any)
			cni, _ := cri["cni"].(map[string]any)
			if cni["conf_dir"] != tc.confDir || cni["bin_dir"] != "/opt/cni/bin" {
				t.Errorf("after the edit, containerd's CRI settings are %v: not loaded, or not the file's", cni)
			}
			for _, d := range []map[string]any{before, after} {
				delete(d, "disabled_plugins")
				delete(d, "imports") // the file's own name
				delete(d["plugins"].(map[string]any), criID)
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("containerd reads other settings otherwise (-before +after):\n%s", diff)
			}
		})
	}
}

// containerdDump is what `containerd config dump` reads in config.
func containerdDump(t *testing.T, config []byte) map[string]any {
	t.Helper()
	name := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(name, config, 0o644); err != nil {
		t.Fatal(err)
	}
	return containerdDumpFile(t, name)
}

// containerdDumpFile is what `containerd config dump` reads in the
// config file name, its imports merged.
func containerdDumpFile(t *testing.T, name string) map[string]any {
	t.Helper()
	cmd := exec.Command("containerd", "--config", name, "config", "dump")
	cmd.Env = []string{"LC_ALL=C", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("containerd config dump: %v", err)
	}
	var m map[string]any
	if err := toml.Unmarshal(out, &m); err != nil {
		t.Fatalf("containerd's dump: %v", err)
	}
	return m
}

func disabled(dump map[string]any) []string {
	out := []string{}
	list, _ := dump["disabled_plugins"].([]any)
	for _, v := range list {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// TestContainerdCNIDirs: the CNI directories CNIDirs reads from version-1
// and version-2 stacks are those Debian's containerd (1.6) dumps: the
// CRI's conf_dir and each runtime's cni_conf_dir, imports merged.
func TestContainerdCNIDirs(t *testing.T) {
	archivetest.RequireTool(t, "containerd")
	const v2cni = "[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  conf_dir = \"/etc/cni/net.mk\"\n"
	for _, tc := range []struct {
		name  string
		files map[string]string // config.toml and its imports
	}{
		{"v1 default", map[string]string{"config.toml": "root = \"/var/lib/c\"\n"}},
		{"v1 short ID", map[string]string{"config.toml": "[plugins.cri.cni]\n  conf_dir = \"/etc/cni/net.mk\"\n"}},
		{"v1 full ID ignored", map[string]string{"config.toml": v2cni}},
		{"v2", map[string]string{"config.toml": "version = 2\n" + v2cni}},
		{"v2 runtime's own", map[string]string{"config.toml": "version = 2\n" + v2cni +
			"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.kata]\n  runtime_type = \"io.containerd.kata.v2\"\n  cni_conf_dir = \"/etc/kata/net.d\"\n"}},
		{"v2 a relative glob matches from the working directory", map[string]string{
			"config.toml":        "version = 2\nimports = [\"conf.d/*.toml\"]\n" + v2cni,
			"conf.d/10-pkg.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n  snapshotter = \"native\"\n"}},
		{"v2 a relative path from the importer", map[string]string{
			"config.toml":        "version = 2\nimports = [\"conf.d/10-pkg.toml\"]\n" + v2cni,
			"conf.d/10-pkg.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n  snapshotter = \"native\"\n"}},
		{"v2 import replaces the CRI's table", map[string]string{
			"config.toml":        "version = 2\nimports = [\"@/conf.d/*.toml\"]\n" + v2cni,
			"conf.d/10-pkg.toml": "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n  snapshotter = \"native\"\n"}},
		{"v2 import sets it, a later one leaves the CRI alone", map[string]string{
			"config.toml":         "version = 2\nimports = [\"@/conf.d/*.toml\"]\n",
			"conf.d/01-site.toml": "version = 2\n" + v2cni,
			"conf.d/02-pkg.toml":  "version = 2\n[plugins.\"io.containerd.internal.v1.opt\"]\n  path = \"/opt/x\"\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			image := map[string][]byte{}
			for name, s := range tc.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				// @ is the config's directory: the temporary one for
				// containerd, /etc/containerd in the image.
				if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(s, "@", dir)), 0o644); err != nil {
					t.Fatal(err)
				}
				image["etc/containerd/"+name] = []byte(strings.ReplaceAll(s, "@", "/etc/containerd"))
			}
			order, err := ContainerdStack{}.Order("etc/containerd/config.toml", image)
			if err != nil {
				t.Fatal(err)
			}
			got, err := CNIDirs(ContainerdStack{}, order)
			if err != nil {
				t.Fatal(err)
			}
			var gotDirs []any
			for _, s := range got {
				gotDirs = append(gotDirs, s.Value)
			}
			dump := containerdDumpFile(t, filepath.Join(dir, "config.toml"))
			cri, _ := dump["plugins"].(map[string]any)["io.containerd.grpc.v1.cri"].(map[string]any)
			want := []any{cri["cni"].(map[string]any)["conf_dir"]}
			runtimes, _ := cri["containerd"].(map[string]any)["runtimes"].(map[string]any)
			for _, name := range slices.Sorted(maps.Keys(runtimes)) {
				if d := runtimes[name].(map[string]any)["cni_conf_dir"]; d != "" {
					want = append(want, d)
				}
			}
			if diff := cmp.Diff(want, gotDirs); diff != "" {
				t.Errorf("CNI directories (-containerd +CNIDirs):\n%s", diff)
			}
		})
	}
}
