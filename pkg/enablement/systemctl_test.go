package enablement

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// The runtime units the tests follow, with every other unit of the trees.
var watched = []string{
	"containerd.service", "crio.service", "docker.service", "docker.socket",
	"cri-docker.service", "cri-docker.socket", "buildkit.service", "buildkit.socket",
	"nerdctl.socket", "podman.socket", "getty@tty2.service", "getty@tty3.service",
}

// predicted is what Enablers says: the units something starts at boot
// once preset-all has run.
func predicted(t *testing.T, root string) []string {
	t.Helper()
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ps, err := ReadPresets(r.FS())
	if err != nil {
		t.Fatal(err)
	}
	var on []string
	for _, name := range watched {
		u, err := FindUnit(r.FS(), name)
		if err != nil {
			t.Fatal(err)
		}
		if len(Enablers(u, ps)) > 0 {
			on = append(on, name)
		}
	}
	return on
}

// linked is what systemctl left: the units a .wants or .requires link
// names.
func linked(t *testing.T, root string) []string {
	t.Helper()
	var on []string
	for _, name := range watched {
		for _, dir := range UnitDirs {
			m, _ := filepath.Glob(filepath.Join(root, dir, "*.wants", name))
			n, _ := filepath.Glob(filepath.Join(root, dir, "*.requires", name))
			if len(m)+len(n) > 0 {
				on = append(on, name)
				break
			}
		}
	}
	return on
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
		var err error
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

const (
	wantedByMulti   = "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"
	wantedBySockets = "[Unit]\nDescription=x\n[Socket]\nListenStream=/run/x.sock\n[Install]\nWantedBy=sockets.target\n"
	static          = "[Unit]\nDescription=x\n[Service]\nExecStart=/bin/true\n"
)

// A bare "enable" line is left out: systemd 252's systemctl crashes on it
// (a NULL pattern), and ParsePreset skips it.

// TestPresetAllAgrees runs Debian's systemctl --root=DIR preset-all, the
// real consumer, on trees whose presets and links say different things,
// and compares what it enabled with what Enablers predicted.
func TestPresetAllAgrees(t *testing.T) {
	archivetest.RequireTool(t, "systemctl")
	units := map[string]string{
		"usr/lib/systemd/system/containerd.service":       wantedByMulti,
		"usr/lib/systemd/system/crio.service":             wantedByMulti,
		"usr/lib/systemd/system/docker.service":           wantedByMulti,
		"usr/lib/systemd/system/docker.socket":            wantedBySockets,
		"usr/lib/systemd/system/cri-docker.service":       static,
		"usr/lib/systemd/system/cri-docker.socket":        wantedBySockets,
		"usr/local/lib/systemd/system/buildkit.service":   wantedByMulti,
		"usr/local/lib/systemd/system/buildkit.socket":    wantedBySockets,
		"usr/lib/systemd/system/getty@.service":           wantedByMulti,
		"usr/lib/systemd/system/multi-user.target.wants/": "",
	}
	delete(units, "usr/lib/systemd/system/multi-user.target.wants/")
	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		{"no presets: everything with an [Install]", nil},
		{"first file by name wins across directories", map[string]string{
			"usr/lib/systemd/system-preset/50-a.preset": "disable crio.service\nenable *\n",
			"etc/systemd/system-preset/10-b.preset":     "enable crio.service\ndisable c*\n",
		}},
		{"etc hides usr/lib's file of the same name", map[string]string{
			"usr/lib/systemd/system-preset/00-x.preset": "disable *\n",
			"etc/systemd/system-preset/00-x.preset":     "; nothing\n# but comments\n",
		}},
		{"masked preset file", map[string]string{
			"usr/lib/systemd/system-preset/00-x.preset":    "disable *\n",
			"etc/systemd/system-preset/00-x.preset":        "-> /dev/null",
			"usr/local/lib/systemd/system-preset/9.preset": "disable docker.*\n",
		}},
		{"disable takes away links in etc, not vendor links", map[string]string{
			"usr/lib/systemd/system-preset/00-x.preset":                 "disable *\n",
			"etc/systemd/system/multi-user.target.wants/crio.service":   "-> /usr/lib/systemd/system/crio.service",
			"usr/lib/systemd/system/sockets.target.wants/docker.socket": "-> ../docker.socket",
		}},
		{"template instances and patterns", map[string]string{
			"usr/lib/systemd/system-preset/00-x.preset": "enable getty@.service tty3\n" +
				"disable [b-c]*.s?ck?t\ndisable cont[!x]inerd.service\ndisable docker.service extra words\n" +
				"bogus line\nenable crio.service tty2\ndisable *\n",
		}},
		{"a mask wins over an enable", map[string]string{
			"etc/systemd/system/crio.service": "-> /dev/null",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, units)
			write(t, root, tc.files)
			want := predicted(t, root)
			runPresetAll(t, root)
			if diff := cmp.Diff(want, linked(t, root)); diff != "" {
				t.Errorf("predicted (-) and systemctl preset-all (+) differ:\n%s", diff)
			}
		})
	}
}

func runPresetAll(t *testing.T, root string) {
	t.Helper()
	cmd := exec.Command("systemctl", "--root="+root, "preset-all")
	cmd.Env = append(os.Environ(), "LC_ALL=C", "SYSTEMD_LOG_LEVEL=err")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("systemctl preset-all: %v\n%s", err, out)
	}
}

// upstreamInstall is the [Install] section each runtime's own unit has
// (containerd, cri-o, moby, cri-dockerd, buildkit contrib units): the
// fixtures' units are one-line placeholders where no rule read them.
var upstreamInstall = map[string]string{
	"containerd.service": "WantedBy=multi-user.target", "crio.service": "WantedBy=multi-user.target",
	"docker.service": "WantedBy=multi-user.target", "docker.socket": "WantedBy=sockets.target",
	"cri-docker.service": "WantedBy=multi-user.target", "cri-docker.socket": "WantedBy=sockets.target",
	"buildkit.service": "WantedBy=multi-user.target", "buildkit.socket": "WantedBy=sockets.target",
}

// TestPresetAllAgreesOnImages is TestPresetAllAgrees on the minikube ISO's
// target directory (with its two preset files as minikube writes them)
// and on kicbase's tree, where links, not presets, enable units.
func TestPresetAllAgreesOnImages(t *testing.T) {
	archivetest.RequireTool(t, "systemctl")
	for name, src := range map[string]string{
		"iso x86_64":    "../../testdata/packages/iso/x86_64/target",
		"iso aarch64":   "../../testdata/packages/iso/aarch64/target",
		"kicbase amd64": "../../testdata/packages/kicbase/amd64/root",
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if err := archivetest.CopyTree(src, root); err != nil {
				t.Fatal(err)
			}
			withInstallSections(t, root)
			if strings.HasPrefix(name, "iso") {
				// minikube deploy/iso/minikube-iso: containerd-bin's and
				// buildkit-bin's preset files.
				write(t, root, map[string]string{
					"usr/lib/systemd/system-preset/50-minikube.preset": "disable containerd.service\n",
					"usr/lib/systemd/system-preset/51-buildkit.preset": "disable buildkit.service\n",
				})
			}
			want := predicted(t, root)
			runPresetAll(t, root)
			if diff := cmp.Diff(want, linked(t, root)); diff != "" {
				t.Errorf("predicted (-) and systemctl preset-all (+) differ:\n%s", diff)
			}
		})
	}
}

func withInstallSections(t *testing.T, root string) {
	t.Helper()
	for _, dir := range UnitDirs {
		for unit, install := range upstreamInstall {
			p := filepath.Join(root, dir, unit)
			data, err := os.ReadFile(p)
			if err != nil || strings.Contains(string(data), "[Install]") {
				continue
			}
			if err := os.WriteFile(p, append(data, "\n[Install]\n"+install+"\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
