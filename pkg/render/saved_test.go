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

// Whoever can write the record picks the socket crictl and kubeadm talk to
// as root (--cri-socket /home/docker/x.sock): a record, or a directory
// from the root down to it, owned by someone else or writable by group or
// others is refused, naming it; a sticky directory of root's is not a way
// in.
func TestChoiceRecordOwnerAndMode(t *testing.T) {
	const nobody = 65534
	record := `{"version": 1, "runtime": "crio", "cni": "kindnet", "cri_socket": "/home/docker/x.sock"}`
	tests := []struct {
		name string
		// at is the path below the root to change ("" the root, ChoicePath
		// the record); mode its mode (0: as made), uid its owner (-1: as made).
		at     string
		mode   os.FileMode
		uid    int
		asRoot bool // needs root: chown, or a directory only root may own
		err    string
	}{
		{"as render writes it", ChoicePath, 0o644, -1, false, ""},
		{"private", ChoicePath, 0o600, -1, false, ""},
		{"record group-writable", ChoicePath, 0o664, -1, false, "/var/lib/minikube/rootfs-trim/choice.json: not trusted: it is writable by its group (mode 0664)"},
		{"record world-writable", ChoicePath, 0o646, -1, false, "not trusted: it is writable by others (mode 0646)"},
		{"record of another user", ChoicePath, 0o644, nobody, true, "not trusted: it is owned by uid 65534, not by root (the user running render)"},
		{"directory group-writable", "var/lib/minikube", 0o775, -1, false, "not trusted: /var/lib/minikube is writable by its group (mode 0775)"},
		{"directory world-writable", "var/lib", 0o777, -1, false, "not trusted: /var/lib is writable by its group and others (mode 0777)"},
		{"directory of another user", "var/lib/minikube/rootfs-trim", 0o755, nobody, true, "not trusted: /var/lib/minikube/rootfs-trim is owned by uid 65534"},
		{"root group-writable", "", 0o775, -1, false, "not trusted: / is writable by its group (mode 0775)"},
		{"sticky, of root", "var", 0o1777, -1, true, ""},
		{"sticky, of another user", "var", 0o1777, nobody, true, "not trusted: /var is owned by uid 65534"},
		{"sticky, group-writable only", "var/lib", 0o1775, -1, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.asRoot && os.Geteuid() != 0 {
				t.Skip("needs root: chown to another user, or a directory that root owns")
			}
			root := t.TempDir()
			os.Chmod(root, 0o755)
			dir := filepath.Join(root, filepath.Dir(ChoicePath))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, ChoicePath), []byte(record), 0o644); err != nil {
				t.Fatal(err)
			}
			at := filepath.Join(root, tc.at)
			if tc.uid >= 0 {
				if err := os.Lchown(at, tc.uid, tc.uid); err != nil {
					t.Fatal(err)
				}
			}
			if tc.mode != 0 {
				m := tc.mode.Perm()
				if tc.mode&0o1000 != 0 {
					m |= os.ModeSticky
				}
				if err := os.Chmod(at, m); err != nil {
					t.Fatal(err)
				}
			}
			c, ok, err := LoadChoice(root)
			if tc.err == "" {
				if err != nil || !ok || c.CRISocket != "/home/docker/x.sock" {
					t.Fatalf("LoadChoice: %+v, ok=%v, err=%v; want the record", c, ok, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || ok {
				t.Fatalf("LoadChoice: ok=%v, err=%v; want %q", ok, err, tc.err)
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
