package render

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// containerdNet is the conflist containerd's script/setup/install-cni
// writes (release/1.7), dual-stack.
const containerdNet = `{
  "cniVersion": "1.0.0",
  "name": "containerd-net",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "promiscMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [
          [{
            "subnet": "10.88.0.0/16"
          }],
          [{
            "subnet": "2001:4860:4860::/64"
          }]
        ],
        "routes": [
          { "dst": "0.0.0.0/0" },
          { "dst": "::/0" }
        ]
      }
    },
    {
      "type": "portmap",
      "capabilities": {"portMappings": true}
    }
  ]
}
`

// appliedImage builds a root as apply leaves it: the runtime packages'
// bridge configs deferred, crictl.yaml stripped, templates and index in
// place.
func appliedImage(t *testing.T) string {
	t.Helper()
	return appliedImageFrom(t, filepath.Join("..", "..", "rules"))
}

func appliedImageFrom(t *testing.T, rulesDir string) string {
	t.Helper()
	return appliedImageWith(t, rulesDir, nil)
}

// appliedImageWith is appliedImage with other package files: name -> owner
// and content ("" owner: owned by nobody).
func appliedImageWith(t *testing.T, rulesDir string, extra map[string][2]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"etc/cni/net.d/.keep":                       "",
		"etc/cni/net.d/100-crio-bridge.conf":        `{"cniVersion": "0.3.1", "name": "crio", "type": "bridge", "bridge": "cni0", "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.85.0.0/16"}]]}}` + "\n",
		"etc/cni/net.d/200-loopback.conf":           `{"cniVersion": "0.3.1", "name": "loopback", "type": "loopback"}` + "\n",
		"etc/cni/net.d/10-containerd-net.conflist":  containerdNet,
		"etc/cni/net.d/87-podman-bridge.conflist":   `{"cniVersion": "0.4.0", "name": "podman"}` + "\n",
		"etc/crictl.yaml":                           "runtime-endpoint: unix:///var/run/crio/crio.sock\ntimeout: 0\ndebug: false\n",
		"etc/containerd/config.toml":                "version = 2\n",
		"usr/lib/systemd/system/containerd.service": "[Service]\n",
		"etc/systemd/system/containerd.service":     "[Service]\n",
		"usr/bin/podman":                            "podman\n",
	}
	owner := map[string]string{
		"etc/cni/net.d/100-crio-bridge.conf":        "crio-bin",
		"etc/cni/net.d/200-loopback.conf":           "crio-bin",
		"etc/crictl.yaml":                           "crio-bin",
		"etc/cni/net.d/10-containerd-net.conflist":  "cri-containerd-cni",
		"etc/containerd/config.toml":                "cri-containerd-cni",
		"usr/lib/systemd/system/containerd.service": "cri-containerd-cni",
		"etc/systemd/system/containerd.service":     "cri-containerd-cni",
		"etc/cni/net.d/87-podman-bridge.conflist":   "podman",
		"usr/bin/podman":                            "podman",
	}
	for name, od := range extra {
		if od[1] == "" {
			delete(files, name)
			delete(owner, name)
			continue
		}
		files[name] = od[1]
		owner[name] = od[0]
	}
	owners := owners.New()
	for name, data := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if o := owner[name]; o != "" {
			owners.Add(o, name)
		}
	}
	set, err := rules.Load(rulesDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trim.ApplyDir(context.Background(), root, trim.Options{Set: set, Owners: owners}, false); err != nil {
		t.Fatal(err)
	}
	return root
}

// snapshot is what /etc holds of the boot step's concern, as text.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	var names []string
	filepath.WalkDir(filepath.Join(root, "etc"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			if strings.HasPrefix(rel, "etc/cni/") || rel == "etc/crictl.yaml" || strings.HasPrefix(rel, "etc/buildkit/") {
				names = append(names, rel)
			}
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		data, _ := os.ReadFile(filepath.Join(root, n))
		fi, _ := os.Lstat(filepath.Join(root, n))
		fmt.Fprintf(&b, "== /%s (%04o)\n%s", n, fi.Mode().Perm(), data)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", path, d)
	}
}

func choice(runtime, cni, cidr string) Choice {
	return Choice{Runtime: runtime, CNI: cni, PodCIDR: cidr, Values: map[string]string{}}
}

// minikubeCNIs are minikube's --cni values (cni.New) and the names of
// their golden files.
var minikubeCNIs = []struct{ value, golden string }{
	{"bridge", "bridge"}, {"kindnet", "kindnet"}, {"true", "kindnet"},
	{"calico", "calico"}, {"cilium", "cilium"}, {"flannel", "flannel"},
	{"false", "false"}, {"/home/user/cni/my-cni.yaml", "manifest"},
}

// Every runtime x CNI pair, against golden files, with a pod CIDR other
// than minikube's default so that where it lands shows.
func TestRenderMatrix(t *testing.T) {
	for _, rt := range contract.Runtimes {
		for _, cni := range minikubeCNIs {
			t.Run(rt+"-"+cni.value, func(t *testing.T) {
				root := appliedImage(t)
				if _, err := Render(Options{Root: root, Choice: choice(rt, cni.value, "10.96.128.0/17")}); err != nil {
					t.Fatal(err)
				}
				golden(t, rt+"-"+cni.golden, snapshot(t, root))
			})
		}
	}
}

// crictl.yaml is byte for byte what minikube writes for each runtime.
func TestCrictlMatchesMinikube(t *testing.T) {
	want := map[string]string{
		"containerd": "runtime-endpoint: unix:///run/containerd/containerd.sock\n",
		"crio":       "runtime-endpoint: unix:///var/run/crio/crio.sock\n",
		"docker":     "runtime-endpoint: unix:///var/run/cri-dockerd.sock\n",
		// Kubernetes before 1.24: cruntime.InternalDockerCRISocket.
		"docker /var/run/dockershim.sock": "runtime-endpoint: unix:///var/run/dockershim.sock\n",
	}
	for rt, w := range want {
		root := appliedImage(t)
		c := choice(rt, "kindnet", "")
		c.Runtime, c.CRISocket, _ = strings.Cut(rt, " ")
		if _, err := Render(Options{Root: root, Choice: c}); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(root, "etc/crictl.yaml"))
		if string(got) != w {
			t.Errorf("%s: crictl.yaml = %q, want %q", rt, got, w)
		}
	}
}

// Switching runtime replaces exactly what the last render wrote.
func TestSwitchRuntime(t *testing.T) {
	root := appliedImage(t)
	for _, rt := range []string{"containerd", "crio", "docker"} {
		if _, err := Render(Options{Root: root, Choice: choice(rt, "false", "")}); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "switch-containerd-crio-docker", snapshot(t, root))
	// Nothing of containerd's or cri-o's bridge is left behind.
	for _, gone := range []string{"etc/cni/net.d/10-containerd-net.conflist", "etc/cni/net.d/100-crio-bridge.conf", "etc/cni/net.d/200-loopback.conf"} {
		if _, err := os.Lstat(filepath.Join(root, gone)); err == nil {
			t.Errorf("%s is still there after switching to docker", gone)
		}
	}
}

// A file that appears later (podman creating its default network at first
// use, say) is reported, not touched, unless the policy says remove.
func TestForeignFile(t *testing.T) {
	root := appliedImage(t)
	late := filepath.Join(root, "etc/cni/net.d/87-podman-default.conflist")
	os.WriteFile(late, []byte(`{"name":"podman"}`), 0o644)
	res, err := Render(Options{Root: root, Choice: choice("crio", "kindnet", "")})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]Foreign{{Path: "etc/cni/net.d/87-podman-default.conflist", Policy: "cni-configs"}}, res.Foreign); d != "" {
		t.Errorf("foreign (-want +got):\n%s", d)
	}
	if _, err := os.Stat(late); err != nil {
		t.Error("render removed a file it did not write although the policy says report")
	}
	// Switching again never removes it either: render did not write it.
	if _, err := Render(Options{Root: root, Choice: choice("containerd", "bridge", "10.244.0.0/16")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(late); err != nil {
		t.Error("a later render removed a file it did not write")
	}
}

func TestRenderRefuses(t *testing.T) {
	tests := []struct {
		name   string
		choice Choice
		break_ func(root string)
		want   string
	}{
		{"unknown runtime", choice("rkt", "bridge", "10.244.0.0/16"), nil, `unknown container runtime "rkt"`},
		{"auto", choice("crio", "auto", ""), nil, `minikube resolves auto`},
		{"empty cni", choice("crio", "", ""), nil, `minikube resolves auto`},
		{"nothing chosen", Choice{}, nil, "no container runtime chosen"},
		{"bad socket", Choice{Runtime: "docker", CNI: "bridge", CRISocket: "var/run/dockershim.sock"}, nil, "not a clean absolute path"},
		{"ipv6 cidr, bridge to rewrite", choice("crio", "false", "fd00::/56"), nil, "only be rewritten for an IPv4 CIDR"},
		{"deferred source missing", choice("crio", "false", ""), func(root string) {
			os.Remove(filepath.Join(root, "usr/share/minikube/deferred/crio+none/etc/cni/net.d/100-crio-bridge.conf"))
		}, "source /usr/share/minikube/deferred/crio+none/etc/cni/net.d/100-crio-bridge.conf is missing"},
		{"deferred source changed", choice("crio", "false", ""), func(root string) {
			os.WriteFile(filepath.Join(root, "usr/share/minikube/deferred/crio+none/etc/cni/net.d/200-loopback.conf"), []byte("{}"), 0o644)
		}, "does not match the index"},
		{"no index", choice("crio", "false", ""), func(root string) {
			os.Remove(filepath.Join(root, "usr/share/minikube/rootfs-trim/index.json"))
		}, "not made by rootfs-trim apply"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := appliedImage(t)
			if tc.break_ != nil {
				tc.break_(root)
			}
			before := snapshot(t, root)
			_, err := Render(Options{Root: root, Choice: tc.choice})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if after := snapshot(t, root); after != before {
				t.Errorf("a refused render changed /etc:\n%s", cmp.Diff(before, after))
			}
		})
	}
}

// A destination that is a symlink out of the root is replaced, never
// written through; a parent that leads out of the root is refused.
func TestSymlinkDestinations(t *testing.T) {
	root := appliedImage(t)
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("precious\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "etc/crictl.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(Options{Root: root, Choice: choice("crio", "kindnet", "")}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious\n" {
		t.Fatalf("render wrote through a symlink to %s: %q", outside, b)
	}
	if fi, _ := os.Lstat(filepath.Join(root, "etc/crictl.yaml")); fi.Mode()&fs.ModeSymlink != 0 {
		t.Error("the symlink was not replaced by the rendered file")
	}

	root = appliedImage(t)
	elsewhere := t.TempDir()
	os.RemoveAll(filepath.Join(root, "etc/cni/net.d"))
	if err := os.Symlink(elsewhere, filepath.Join(root, "etc/cni/net.d")); err != nil {
		t.Fatal(err)
	}
	_, err := Render(Options{Root: root, Choice: choice("crio", "bridge", "10.244.0.0/16")})
	if err == nil {
		t.Fatal("render followed etc/cni/net.d out of the root")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) > 0 {
		t.Errorf("render wrote outside the root: %v", entries)
	}

	// A parent that is a symlink inside the root is refused too: render
	// writes a file only where it really is, and writes nothing else first.
	root = appliedImage(t)
	inside := filepath.Join(root, "usr/lib/cni")
	os.MkdirAll(inside, 0o755)
	os.RemoveAll(filepath.Join(root, "etc/cni"))
	if err := os.Symlink("../usr/lib/cni", filepath.Join(root, "etc/cni")); err != nil {
		t.Fatal(err)
	}
	_, err = Render(Options{Root: root, Choice: choice("crio", "bridge", "")})
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("err = %v, want a refusal naming the symlink", err)
	}
	if entries, _ := os.ReadDir(inside); len(entries) > 0 {
		t.Errorf("render wrote through etc/cni -> ../usr/lib/cni: %v", entries)
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/crictl.yaml")); err == nil {
		t.Error("render wrote /etc/crictl.yaml before refusing")
	}
}

func TestReadOnlyRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root ignores permissions; a read-only bind mount needs
		// privileges tests should not take. Use a chattr-free check: a
		// file in place of the directory render must create.
		root := appliedImage(t)
		os.RemoveAll(filepath.Join(root, "etc/cni"))
		os.WriteFile(filepath.Join(root, "etc/cni"), nil, 0o444)
		_, err := Render(Options{Root: root, Choice: choice("crio", "bridge", "10.244.0.0/16")})
		if err == nil || !strings.Contains(err.Error(), "etc/cni") {
			t.Fatalf("err = %v, want one naming etc/cni", err)
		}
		return
	}
	root := appliedImage(t)
	etc := filepath.Join(root, "etc")
	syscall.Chmod(etc, 0o555)
	defer syscall.Chmod(etc, 0o755)
	_, err := Render(Options{Root: root, Choice: choice("crio", "kindnet", "")})
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("err = %v, want permission denied", err)
	}
}

// FuzzTemplate: any template that parses renders or fails with an error,
// never a panic, with the data render gives it.
func FuzzTemplate(f *testing.F) {
	f.Add("runtime-endpoint: unix://{{ .Socket }}\n")
	f.Add(`{"subnet": "{{ .PodCIDR }}", "mtu": {{ index .Values "MTU" }}}`)
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := template.New("t").Option("missingkey=error").Funcs(rules.TemplateFuncs).Parse(src)
		if err != nil {
			return
		}
		data := map[string]any{"Runtime": "crio", "CNI": "bridge", "Socket": contract.Sockets["crio"], "PodCIDR": DefaultPodCIDR, "Values": map[string]string{"MTU": "1450"}}
		var out strings.Builder
		tmpl.Execute(&limitedWriter{w: &out, n: 1 << 20}, data)
	})
}

type limitedWriter struct {
	w *strings.Builder
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.w.Len()+len(p) > l.n {
		return 0, fmt.Errorf("template output too large")
	}
	return l.w.Write(p)
}

// An image built by the previous release boots with this render: its
// index has no schema field (docs/reference.md), and render writes from it
// what it writes from this release's.
func TestRenderIndexOfThePreviousRelease(t *testing.T) {
	current, previous := appliedImage(t), appliedImage(t)
	ixPath := filepath.Join(previous, contract.IndexPath)
	data, err := os.ReadFile(ixPath)
	if err != nil {
		t.Fatal(err)
	}
	line := "  \"schema\": \"" + contract.IndexSchema + "\",\n"
	if !strings.Contains(string(data), line) {
		t.Fatalf("the index has no %q", line)
	}
	if err := os.WriteFile(ixPath, []byte(strings.Replace(string(data), line, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Choice{choice("containerd", "false", ""), choice("crio", "bridge", "10.244.0.0/16")} {
		for _, root := range []string{current, previous} {
			if _, err := Render(Options{Root: root, Choice: c}); err != nil {
				t.Fatalf("%s: %v", root, err)
			}
		}
		if diff := cmp.Diff(snapshot(t, current), snapshot(t, previous)); diff != "" {
			t.Errorf("%s/%s: rendered from the previous release's index (-this +previous):\n%s", c.Runtime, c.CNI, diff)
		}
	}
}
