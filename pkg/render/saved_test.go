package render

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// The choice survives a VM restart: recorded on the persistent disk by a
// render minikube runs, rendered again by the boot unit from the record
// into an /etc that is the image's again.
func TestSavedChoiceAfterRestart(t *testing.T) {
	root := appliedImage(t)
	c := Choice{Runtime: "docker", CNI: "false", PodCIDR: "192.168.32.0/20", CRISocket: "/var/run/dockershim.sock", Values: map[string]string{"MTU": "1450"}}
	if _, err := Render(Options{Root: root, Choice: c, Save: true}); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, root)

	// The restart: a fresh image, with the old persistent disk.
	restarted := appliedImage(t)
	os.MkdirAll(filepath.Join(restarted, filepath.Dir(ChoicePath)), 0o755)
	data, err := os.ReadFile(filepath.Join(root, ChoicePath))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(restarted, ChoicePath), data, 0o644)
	got, ok, err := LoadChoice(restarted)
	if err != nil || !ok {
		t.Fatalf("LoadChoice: ok=%v err=%v", ok, err)
	}
	if d := cmp.Diff(c, got); d != "" {
		t.Errorf("recorded choice (-rendered +loaded):\n%s", d)
	}
	if _, err := Render(Options{Root: restarted, Choice: got}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, snapshot(t, restarted)); d != "" {
		t.Errorf("/etc after the restart (-before +after):\n%s", d)
	}
}

func TestLoadChoice(t *testing.T) {
	tests := []struct {
		name   string
		record string // "" : none
		link   bool   // the record's directory is a symlink
		ok     bool
		err    string
	}{
		{"none recorded", "", false, false, ""},
		{"good", `{"version": 1, "runtime": "crio", "cni": "kindnet"}`, false, true, ""},
		{"not JSON", `{"version": 1,`, false, false, "choice.json"},
		{"unknown field", `{"version": 1, "runtime": "crio", "cni": "kindnet", "extra": 1}`, false, false, "unknown field"},
		{"version", `{"version": 2, "runtime": "crio", "cni": "kindnet"}`, false, false, "version 2"},
		{"injected cidr", `{"version": 1, "runtime": "crio", "cni": "bridge", "pod_cidr": "10.0.0.0/8\",\"x\":\"y"}`, false, false, "is not a CIDR"},
		{"auto", `{"version": 1, "runtime": "crio", "cni": "auto"}`, false, false, "minikube resolves auto"},
		{"through a symlink", `{"version": 1, "runtime": "crio", "cni": "kindnet"}`, true, false, "symlink"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, filepath.Dir(ChoicePath))
			if tc.record != "" {
				target := dir
				if tc.link {
					target = filepath.Join(root, "elsewhere")
					os.MkdirAll(filepath.Dir(dir), 0o755)
					os.Symlink("../../../elsewhere", dir)
				}
				os.MkdirAll(target, 0o755)
				os.WriteFile(filepath.Join(target, filepath.Base(ChoicePath)), []byte(tc.record), 0o644)
			}
			_, ok, err := LoadChoice(root)
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

// minikube's vocabulary: accepted as minikube accepts it, classed for the
// rules.
func TestChoiceVocabulary(t *testing.T) {
	tests := []struct{ cni, class string }{
		{"bridge", "bridge"}, {"true", "kindnet"}, {"kindnet", "kindnet"}, {"calico", "calico"},
		{"cilium", "cilium"}, {"flannel", "flannel"}, {"false", "none"},
		{"/home/u/cni.yaml", "custom"}, {"./my-cni.yaml", "custom"}, {"weave.yaml", "custom"},
	}
	for _, tc := range tests {
		c := Choice{Runtime: "containerd", CNI: tc.cni}
		if err := c.Validate(); err != nil {
			t.Errorf("--cni %s: %v", tc.cni, err)
		}
		if got := c.Class(); got != tc.class {
			t.Errorf("--cni %s: class %s, want %s", tc.cni, got, tc.class)
		}
	}
	for rt, sock := range map[string]string{"containerd": "/run/containerd/containerd.sock", "crio": "/var/run/crio/crio.sock", "docker": "/var/run/cri-dockerd.sock"} {
		c := Choice{Runtime: rt, CNI: "bridge"}
		if c.Socket() != sock {
			t.Errorf("%s: socket %s, want %s", rt, c.Socket(), sock)
		}
		c.CRISocket = "/var/run/dockershim.sock"
		if c.Socket() != "/var/run/dockershim.sock" {
			t.Errorf("%s: --cri-socket not used", rt)
		}
	}
}

// The rules' class words that minikube does not use (none, custom) are
// refused, saying minikube's word, not taken as a manifest path: --cni none
// once rendered a custom CNI and left the runtime's bridge deferred. Every
// other class word is a minikube value of that class; a manifest whose
// name only looks like one stays a manifest.
func TestClassWordsRefused(t *testing.T) {
	for _, cls := range contract.CNIs {
		c := Choice{Runtime: "crio", CNI: cls}
		err := c.Validate()
		if slices.Contains(minikubeWords, cls) {
			if err != nil || c.Class() != cls {
				t.Errorf("--cni %s: class %q, error %v; want class %s", cls, c.Class(), err, cls)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "minikube's word for no CNI is false") {
			t.Errorf("--cni %s: error %v, want a refusal naming false", cls, err)
		}
	}
	for _, manifest := range []string{"./none", "none.yaml", "custom.yaml", "/etc/none"} {
		c := Choice{Runtime: "crio", CNI: manifest}
		if err := c.Validate(); err != nil || c.Class() != ClassCustom {
			t.Errorf("--cni %s: class %q, error %v; want a custom manifest", manifest, c.Class(), err)
		}
	}
}
