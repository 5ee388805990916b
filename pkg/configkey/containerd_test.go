package configkey

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
