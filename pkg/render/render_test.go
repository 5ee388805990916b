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

	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// appliedImage builds a root as apply leaves it: the runtime packages'
// bridge configs deferred, crictl.yaml stripped, templates and index in
// place.
func appliedImage(t *testing.T) string {
	t.Helper()
	return appliedImageFrom(t, filepath.Join("..", "..", "rules"))
}

func appliedImageFrom(t *testing.T, rulesDir string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"etc/cni/net.d/.keep":                       "",
		"etc/cni/net.d/100-crio-bridge.conf":        `{"cniVersion": "0.3.1", "name": "crio", "type": "bridge", "bridge": "cni0", "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.85.0.0/16"}]]}}` + "\n",
		"etc/cni/net.d/200-loopback.conf":           `{"cniVersion": "0.3.1", "name": "loopback", "type": "loopback"}` + "\n",
		"etc/cni/net.d/10-containerd-net.conflist":  `{"cniVersion": "1.0.0", "name": "containerd-net", "plugins": [{"type": "bridge", "bridge": "cni0"}]}` + "\n",
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
	owners := trim.NewOwners()
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
	c := Choice{}
	c.Merge("test", runtime, cni, cidr, nil)
	return c
}

// Every runtime x CNI pair, against golden files.
func TestRenderMatrix(t *testing.T) {
	for _, rt := range rules.Runtimes {
		for _, cni := range rules.CNIs {
			t.Run(rt+"-"+cni, func(t *testing.T) {
				root := appliedImage(t)
				if _, err := Render(Options{Root: root, Choice: choice(rt, cni, "10.244.0.0/16")}); err != nil {
					t.Fatal(err)
				}
				golden(t, rt+"-"+cni, snapshot(t, root))
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
	}
	for rt, w := range want {
		root := appliedImage(t)
		if _, err := Render(Options{Root: root, Choice: choice(rt, "kindnet", "")}); err != nil {
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
		if _, err := Render(Options{Root: root, Choice: choice(rt, "none", "")}); err != nil {
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
		{"unknown cni", choice("crio", "weave", ""), nil, `unknown CNI "weave"`},
		{"nothing chosen", Choice{}, nil, "no container runtime chosen"},
		{"missing pod cidr", choice("crio", "bridge", ""), nil, "needs the pod CIDR"},
		{"deferred source missing", choice("crio", "none", ""), func(root string) {
			os.Remove(filepath.Join(root, "usr/share/minikube/deferred/crio+none/etc/cni/net.d/100-crio-bridge.conf"))
		}, "source /usr/share/minikube/deferred/crio+none/etc/cni/net.d/100-crio-bridge.conf is missing"},
		{"deferred source changed", choice("crio", "none", ""), func(root string) {
			os.WriteFile(filepath.Join(root, "usr/share/minikube/deferred/crio+none/etc/cni/net.d/200-loopback.conf"), []byte("{}"), 0o644)
		}, "does not match the index"},
		{"no index", choice("crio", "none", ""), func(root string) {
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

func TestChoicePrecedence(t *testing.T) {
	env, err := ParseEnv(strings.NewReader("# minikube\nMINIKUBE_CONTAINER_RUNTIME=containerd\nMINIKUBE_CNI=\"flannel\"\nMINIKUBE_RENDER_MTU=1450\nCRIO_MINIKUBE_OPTIONS=--insecure-registry 10.96.0.0/12\n"), "env")
	if err != nil {
		t.Fatal(err)
	}
	c := Choice{}
	c.Merge("flag", "crio", "", "", nil)
	c.Merge("env", env[EnvRuntime], env[EnvCNI], env[EnvPodCIDR], map[string]string{"MTU": env["MINIKUBE_RENDER_MTU"]})
	r, n, p, v := ParseCmdline("BOOT_IMAGE=/boot/bzImage minikube.runtime=docker minikube.cni=cilium minikube.pod_cidr=10.1.0.0/16 minikube.set.MTU=9000 quiet")
	c.Merge("cmdline", r, n, p, v)
	got := c.Describe()
	want := "runtime crio (flag), cni flannel (env), pod CIDR 10.1.0.0/16 (cmdline), MTU=1450 (env)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := ParseEnv(strings.NewReader("ok=1\nnot a pair\n"), "env"); err == nil || !strings.Contains(err.Error(), "env:2:") {
		t.Errorf("bad env file: err = %v", err)
	}
}

func FuzzParseCmdline(f *testing.F) {
	f.Add("console=ttyS0 minikube.runtime=crio minikube.set.X=1")
	f.Fuzz(func(t *testing.T, s string) {
		r, n, p, v := ParseCmdline(s)
		for _, x := range []string{r, n, p} {
			if strings.ContainsAny(x, " \t\n") {
				t.Fatalf("value with whitespace: %q", x)
			}
		}
		for k := range v {
			if k == "" {
				t.Fatal("empty value name")
			}
		}
	})
}

func FuzzParseEnv(f *testing.F) {
	f.Add("A=1\n# c\nB=\"two\"\n")
	f.Fuzz(func(t *testing.T, s string) {
		vars, err := ParseEnv(strings.NewReader(s), "f")
		if err != nil {
			return
		}
		for k := range vars {
			if k == "" || strings.ContainsAny(k, " \t") {
				t.Fatalf("bad key %q", k)
			}
		}
	})
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
		data := map[string]any{"Runtime": "crio", "CNI": "bridge", "Socket": Sockets["crio"], "PodCIDR": "10.244.0.0/16", "Values": map[string]string{"MTU": "1450"}}
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
