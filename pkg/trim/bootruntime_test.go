package trim

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// rulesEnabling loads the shipped rules with boot_runtime's enabled: set
// to runtime.
func rulesEnabling(t *testing.T, runtime string) *rules.Set {
	t.Helper()
	dir := t.TempDir()
	if err := archivetest.CopyTree(filepath.Join("..", "..", "rules"), dir); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "policy.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "  enabled: docker ", "  enabled: "+runtime+" ", 1))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := rules.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// imageTree copies a fixture tree and gives its runtime units the
// [Install] section upstream's have (the fixtures' are placeholders); on
// the ISO, minikube's two preset files as minikube writes them.
func imageTree(t *testing.T, src string, iso bool) string {
	t.Helper()
	root := t.TempDir()
	if err := archivetest.CopyTree(src, root); err != nil {
		t.Fatal(err)
	}
	install := map[string]string{".service": "WantedBy=multi-user.target", ".socket": "WantedBy=sockets.target"}
	for _, dir := range enablement.UnitDirs {
		for _, units := range contract.RuntimeUnits {
			for _, u := range units {
				p := filepath.Join(root, dir, u)
				data, err := os.ReadFile(p)
				if err != nil || strings.Contains(string(data), "[Install]") {
					continue
				}
				data = append(data, "\n[Install]\n"+install[filepath.Ext(u)]+"\n"...)
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if iso { // minikube deploy/iso/minikube-iso: containerd-bin's and buildkit-bin's
		for name, line := range map[string]string{"50-minikube.preset": "disable containerd.service\n", "51-buildkit.preset": "disable buildkit.service\n"} {
			if err := os.WriteFile(filepath.Join(root, "usr/lib/systemd/system-preset", name), []byte(line), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// TestApplyThenPresetAll: after apply, Debian's systemctl --root=DIR
// preset-all (what Buildroot runs when it makes each filesystem image)
// enables no runtime unit the policy forbids, and exactly the runtime
// units audit predicted on apply's output.
func TestApplyThenPresetAll(t *testing.T) {
	archivetest.RequireTool(t, "systemctl")
	trees := []struct {
		name, src string
		iso       bool
	}{
		{"iso x86_64", "../../testdata/packages/iso/x86_64/target", true},
		{"iso aarch64", "../../testdata/packages/iso/aarch64/target", true},
		{"kicbase amd64", "../../testdata/packages/kicbase/amd64/root", false},
	}
	for _, runtime := range []string{"docker", "none", "crio", "containerd"} {
		set := rulesEnabling(t, runtime)
		for _, tree := range trees {
			t.Run(runtime+"/"+tree.name, func(t *testing.T) {
				root := imageTree(t, tree.src, tree.iso)
				if _, err := ApplyDir(context.Background(), root, Options{Set: set, Owners: owners.New()}, false); err != nil {
					t.Fatal(err)
				}
				predicted := predictedUnits(t, root)
				cmd := exec.Command("systemctl", "--root="+root, "preset-all")
				cmd.Env = append(os.Environ(), "LC_ALL=C", "SYSTEMD_LOG_LEVEL=err")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("systemctl preset-all: %v\n%s", err, out)
				}
				linked := linkedUnits(t, root)
				if diff := cmp.Diff(predicted, linked); diff != "" {
					t.Errorf("audit's prediction (-) and systemctl preset-all (+) differ:\n%s", diff)
				}
				for _, rt := range contract.Runtimes {
					for _, u := range contract.RuntimeUnits[rt] {
						if slices.Contains(linked, u) && set.BootRuntime.Forbids(rt) {
							t.Errorf("preset-all enabled %s, which the policy (%s) forbids", u, runtime)
						}
					}
				}
			})
		}
	}
}

func predictedUnits(t *testing.T, root string) []string {
	t.Helper()
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	byRuntime, err := RuntimeEnablers(r.FS())
	if err != nil {
		t.Fatal(err)
	}
	var units []string
	for _, es := range byRuntime {
		for _, e := range es {
			units = append(units, e.Unit)
		}
	}
	slices.Sort(units)
	return slices.Compact(units)
}

func linkedUnits(t *testing.T, root string) []string {
	t.Helper()
	var units []string
	for _, dir := range enablement.UnitDirs {
		for _, kind := range []string{"*.wants", "*.requires"} {
			m, _ := filepath.Glob(filepath.Join(root, dir, kind, "*"))
			for _, l := range m {
				for _, rt := range contract.RuntimeUnits {
					if slices.Contains(rt, filepath.Base(l)) {
						units = append(units, filepath.Base(l))
					}
				}
			}
		}
	}
	slices.Sort(units)
	return slices.Compact(units)
}

// TestStreamedEnablersMatchTree: what a Collector gathers as a tree
// streams past (as an archive's or an image's entries do) says the same
// of every runtime unit as the tree read beneath its root: on the ISO's
// targets with minikube's preset files, kicbase's tree with its links,
// and both with a site's preset file and a masked unit.
func TestStreamedEnablersMatchTree(t *testing.T) {
	for _, tree := range []struct {
		name, src string
		iso       bool
	}{
		{"iso x86_64", "../../testdata/packages/iso/x86_64/target", true},
		{"kicbase amd64", "../../testdata/packages/kicbase/amd64/root", false},
	} {
		for _, site := range []bool{false, true} {
			root := imageTree(t, tree.src, tree.iso)
			if site {
				for name, data := range map[string]string{
					"etc/systemd/system-preset/0-site.preset": "enable crio.service\ndisable docker.socket\n",
				} {
					if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.MkdirAll(filepath.Join(root, "etc/systemd/system"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/dev/null", filepath.Join(root, "etc/systemd/system/containerd.service")); err != nil {
					t.Fatal(err)
				}
			}
			want, err := ImageEnablers(root, nil)
			if err != nil {
				t.Fatal(err)
			}
			boot := NewBootCollector()
			dr, err := archive.NewDirReader(root, archive.DirReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := boot.Wrap(dr)
			for {
				_, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			got, err := RuntimeEnablers(boot.FS())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (site %v): streamed (+) and tree (-) differ:\n%s", tree.name, site, diff)
			}
			if n := len(want["crio"]) + len(want["containerd"]) + len(want["docker"]); n == 0 {
				t.Errorf("%s: no runtime enabled: the test proves nothing", tree.name)
			}
		}
	}
}

// TestAuditRuntimesWithoutPolicy: with no boot_runtime policy, audit
// still names every runtime unit the image starts, each as a
// [runtime-allowed] note (as check does), and warns of none.
func TestAuditRuntimesWithoutPolicy(t *testing.T) {
	dir := t.TempDir()
	if err := archivetest.CopyTree(filepath.Join("..", "..", "rules"), dir); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "policy.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	policy, _, ok := strings.Cut(string(data), "\nboot_runtime:\n")
	if !ok {
		t.Fatal("policy.yaml has no boot_runtime block")
	}
	if err := os.WriteFile(p, []byte(policy+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := rules.Load(dir)
	if err != nil || set.BootRuntime != nil {
		t.Fatalf("rules without boot_runtime: %v (policy %v)", err, set.BootRuntime)
	}
	root := imageTree(t, "../../testdata/packages/kicbase/amd64/root", false)
	res, err := Audit(set, []AuditInput{{Path: root, Source: container.SourceOf(root, container.OpenOptions{})}}, nil, container.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		if f.Check == CheckRuntimeAllowed || f.Check == CheckRuntimeEnabled {
			got = append(got, string(f.Check)+" "+f.Target+" "+f.Severity.String())
		}
	}
	var want []string
	for _, u := range predictedUnits(t, root) {
		want = append(want, string(CheckRuntimeAllowed)+" "+u+" note")
	}
	slices.Sort(got)
	got = slices.Compact(got)
	if len(want) == 0 {
		t.Fatal("the kicbase tree starts no runtime unit: nothing to test")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runtime findings without a policy (-want +got):\n%s", diff)
	}
}
