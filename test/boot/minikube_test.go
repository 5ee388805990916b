package boot

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// The guest side of TestBootMinikube (see README.md).
var (
	//go:embed testdata/minikube-start.sh
	minikubeStart []byte
	//go:embed testdata/minikube-automount
	minikubeAutomount []byte
)

// runtimeUnits are the stand-in units, by the ISO package that installs
// the real ones.
var runtimeUnits = map[string][]string{
	"containerd-bin": {"containerd.service"},
	"crio-bin":       {"crio.service"},
	"docker-bin":     {"docker.service", "docker.socket"},
	"cri-dockerd":    {"cri-docker.service", "cri-docker.socket"},
	"automount":      {"minikube-automount.service"},
}

// criSocket is what minikube's populateCRIConfig names for each runtime.
var criSocket = map[string]string{
	"containerd": "/run/containerd/containerd.sock",
	"crio":       "/var/run/crio/crio.sock",
	"docker":     "/var/run/cri-dockerd.sock",
	"dockershim": "/var/run/dockershim.sock",
}

// liveSockets are the sockets that accept connections once minikube has
// enabled the runtime and disabled the others (docker is not bound to
// containerd on the ISO, so disableOthers stops containerd).
var liveSockets = map[string][]string{
	"containerd": {"/run/containerd/containerd.sock"},
	"crio":       {"/var/run/crio/crio.sock"},
	"docker":     {"/var/run/docker.sock", "/var/run/cri-dockerd.sock"},
	// kubelet serves dockershim.sock, and is not in the guest; cri-dockerd's
	// socket unit stays as the boot started it (minikube's Enable leaves it
	// alone without a CRI service). crictl.yaml is the one CRI endpoint.
	"dockershim": {"/var/run/docker.sock", "/var/run/cri-dockerd.sock"},
}

// defaultMinikubeTimeout bounds one VM's boots (two, three patched) and its seventeen steps:
// about 5 min on an idle 2-core machine, far more on a busy one; it only
// guards against a hung guest.
const defaultMinikubeTimeout = 25 * time.Minute

// minikubeBridge is what minikube's cni/bridge.go writes to
// /etc/cni/net.d/1-k8s.conflist for its default pod CIDR (the script
// writes the same bytes).
const minikubeBridge = `
{
  "cniVersion": "0.4.0",
  "name": "bridge",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "bridge",
      "addIf": "true",
      "isDefaultGateway": true,
      "forceAddress": false,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
          "type": "host-local",
          "subnet": "10.244.0.0/16"
      }
    },
    {
      "type": "portmap",
      "capabilities": {
          "portMappings": true
      }
    },
    {
       "type": "firewall"
    }
  ]
}
`

// TestBootMinikube boots an image made by `rootfs-trim apply` with
// systemd as PID 1 and replays minikube's start sequence in it
// (testdata/minikube-start.sh): once as minikube is (unchanged), once with
// the patch that hands /etc to `rootfs-trim render` (patched). Each VM runs
// every runtime with the CNIs bridge, kindnet, a manifest and false, then
// restarts. Each step is a subtest, TestBootMinikube/FLOW/RUNTIME-CNI,
// which docs/boot.md's outcome table names.
func TestBootMinikube(t *testing.T) {
	if testing.Short() {
		t.Skip("boots two Linux guests with systemd under QEMU (TCG): not with -short")
	}
	tools := findBootTools(t)
	for _, name := range []string{"systemctl", "apt-get", "apt-cache", "dpkg-deb", "tar"} {
		if _, err := exec.LookPath(name); err != nil {
			missing(t, "%s not found (the image is made from Debian's systemd packages)", name)
		}
	}
	kver := strings.TrimPrefix(filepath.Base(tools.kernel), "vmlinuz-")
	if kver == filepath.Base(tools.kernel) {
		missing(t, "kernel %s is not named vmlinuz-VERSION: the guest needs that version's modules from Debian", tools.kernel)
	}
	repo := repoRoot(t)
	work := t.TempDir()
	systemdRoot := fetchSystemd(t, repo, kver)

	tree := filepath.Join(work, "rootfs")
	packages := writeSystemdFixture(t, repo, work, tree, systemdRoot)
	input := filepath.Join(work, "rootfs.cpio.gz")
	makeCpioGz(t, tree, input)
	image := filepath.Join(work, "image.cpio.gz")
	rootfsTrim := filepath.Join(tree, "usr/bin/rootfs-trim")
	out, err := exec.Command(rootfsTrim, "apply", "--rules", filepath.Join(repo, "rules"),
		"--packages-file-list", packages, input, image).CombinedOutput()
	if err != nil {
		t.Fatalf("rootfs-trim apply: %v\n%s", err, out)
	}
	t.Logf("rootfs-trim apply:\n%s", out)

	for _, flow := range []string{"unchanged", "patched"} {
		t.Run(flow, func(t *testing.T) {
			t.Parallel()
			disk := filepath.Join(work, flow+".img")
			// A blank disk: the guest's minikube-automount formats it.
			if err := os.WriteFile(disk, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(disk, 64<<20); err != nil {
				t.Fatal(err)
			}
			console, elapsed, cpu := bootMinikube(t, tools, image, disk, flow)
			// The CPU time is what the guest costs on an idle machine; the
			// wall time grows with whatever else the machine runs.
			t.Logf("the boots and the replay took %s under TCG (QEMU used %s of CPU)", elapsed.Round(time.Second), cpu.Round(time.Second))
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("guest console:\n%s", console)
				}
			})
			checkMinikubeFlow(t, flow, parseReport(console))
		})
	}
}

// fetchSystemd returns the unpacked Debian systemd root, made or reused by
// fetch-systemd.sh in ROOTFS_TRIM_SYSTEMD_CACHE, /var/cache when writable,
// else the user's cache directory.
func fetchSystemd(t *testing.T, repo, kver string) string {
	t.Helper()
	cache := os.Getenv("ROOTFS_TRIM_SYSTEMD_CACHE")
	if cache == "" {
		cache = "/var/cache/rootfs-trim-systemd"
		if err := os.MkdirAll(cache, 0o755); err != nil {
			dir, uerr := os.UserCacheDir()
			if uerr != nil {
				t.Fatalf("no cache directory: %v; %v", err, uerr)
			}
			cache = filepath.Join(dir, "rootfs-trim-systemd")
		}
	}
	cmd := exec.Command(filepath.Join(repo, "test/boot/fetch-systemd.sh"), cache, kver)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fetch-systemd.sh: %v\n%s", err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// writeSystemdFixture lays out a minikube-ISO-like target in tree: Debian's
// systemd and busybox, the runtimes' stand-in units with their sockets,
// minikube-automount, rootfs-trim with the overlay, podman's conflist as the
// ISO's podman package installs it, the units enabled as Buildroot enables
// them at build time. It returns packages-file-list.txt.
func writeSystemdFixture(t *testing.T, repo, work, tree, systemdRoot string) string {
	t.Helper()
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	copyTree(t, systemdRoot, tree)
	os.Remove(filepath.Join(tree, ".rootfs-trim-complete"))
	// No generators: the guest needs none of them (no fstab, no getty, no
	// GPT auto-mounts), and systemd runs them all at every daemon reload,
	// which minikube's systemctl enable, disable, mask and unmask do: under
	// TCG that is most of a step's time.
	if err := os.RemoveAll(filepath.Join(tree, "lib/systemd/system-generators")); err != nil {
		t.Fatal(err)
	}
	tg := &target{t: t, root: tree}
	write := tg.write
	for _, d := range []string{"dev", "proc", "sys", "root", "run", "mnt", "home", "var/lib", "tmp"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(tree, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"var/run": "../run", "sbin/init": "../lib/systemd/systemd"} {
		os.Remove(filepath.Join(tree, link))
		if err := os.Symlink(target, filepath.Join(tree, link)); err != nil {
			t.Fatal(err)
		}
	}
	// busybox's applets wherever a Debian package put nothing.
	bb := filepath.Join(tree, "bin/busybox")
	list, err := exec.Command(bb, "--list-full").Output()
	if err != nil {
		t.Fatalf("busybox --list-full: %v", err)
	}
	for _, a := range strings.Fields(string(list)) {
		p := filepath.Join(tree, a)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/bin/busybox", p); err != nil {
			t.Fatal(err)
		}
	}
	// What Buildroot's skeleton and system settings would give.
	write("skeleton", "etc/passwd", []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"), 0o644)
	write("skeleton", "etc/group", []byte("root:x:0:\ndocker:x:1000:\nsystemd-journal:x:101:\nnogroup:x:65534:\n"), 0o644)
	write("skeleton", "etc/os-release", []byte("NAME=Buildroot\nID=buildroot\nPRETTY_NAME=\"minikube-like (rootfs-trim boot test)\"\n"), 0o644)
	write("skeleton", "etc/hostname", []byte("minikube\n"), 0o644)
	// A machine-id: without one systemd treats the boot as the first and
	// applies presets, which would disable the units below.
	write("skeleton", "etc/machine-id", []byte("6d696e696b756265726f6f7466737472\n"), 0o444)

	bin := filepath.Join(work, "bin")
	write("rootfs-trim", "usr/bin/rootfs-trim", readFileBytes(t, buildRootfsTrim(t, repo, bin)), 0o755)
	write("boot-test", "usr/bin/standin", readFileBytes(t, buildStandin(t, repo, bin)), 0o755)
	write("boot-test", "usr/bin/minikube-start", minikubeStart, 0o755)
	write("automount", "usr/sbin/minikube-automount", minikubeAutomount, 0o755)
	units := filepath.Join(repo, "test/boot/testdata/units")
	var enable []string
	for pkg, names := range runtimeUnits {
		for _, u := range names {
			write(pkg, "usr/lib/systemd/system/"+u, readFileBytes(t, filepath.Join(units, u)), 0o644)
			enable = append(enable, u)
		}
	}
	write("boot-test", "usr/lib/systemd/system/minikube-replay.service", readFileBytes(t, filepath.Join(units, "minikube-replay.service")), 0o644)
	enable = append(enable, "minikube-replay.service")

	copyTree(t, filepath.Join(repo, "buildroot-overlay"), tree)
	if _, err := os.Lstat(filepath.Join(tree, "etc/cni/net.d/.keep")); err != nil {
		write("", "etc/cni/net.d/.keep", nil, 0o644)
	}
	// podman's package, as in the ISO today: its bridge in /etc/cni/net.d.
	write("podman", "etc/cni/net.d/87-podman-bridge.conflist", podmanConflist(t, repo), 0o644)

	// Buildroot enables the packages' units in the target at build time.
	slices.Sort(enable)
	enable = append(enable, "rootfs-trim-render.service")
	for _, args := range [][]string{
		append([]string{"enable"}, enable...),
		{"set-default", "multi-user.target"},
	} {
		cmd := exec.Command("systemctl", append([]string{"--root=" + tree}, args...)...)
		cmd.Env = append(os.Environ(), "LC_ALL=C", "SYSTEMD_OFFLINE=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("systemctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	listPath := filepath.Join(work, "packages-file-list.txt")
	if err := os.WriteFile(listPath, []byte(strings.Join(tg.owners, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return listPath
}

// buildStandin builds the stand-in runtime (static: it runs in the guest).
func buildStandin(t *testing.T, repo, dir string) string {
	t.Helper()
	return buildForGuest(t, repo, dir, "./test/boot/standin")
}

// bootMinikube runs one VM through both its boots: QEMU resets on the
// guest's reboot (no -no-reboot here) and boots the same kernel and
// initramfs again, with the same disk; the guest powers off at the end.
func bootMinikube(t *testing.T, tools bootTools, image, disk, flow string) (string, time.Duration, time.Duration) {
	t.Helper()
	timeout := bootTimeout(t, defaultMinikubeTimeout)
	// systemd's own messages go to the journal, the kernel's are kept to
	// emergencies: the console carries the replay's report. No getty, no
	// firstboot prompts. replay.flow is for the test's script only.
	cmdline := "console=ttyS0 rdinit=/sbin/init panic=-1 quiet loglevel=1" +
		" systemd.log_target=journal systemd.show_status=0 systemd.getty_auto=0" +
		" systemd.firstboot=0 replay.flow=" + flow
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.qemu,
		"-M", "pc", "-accel", "tcg", "-m", "768", "-smp", "1",
		"-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio",
		"-drive", "file="+disk+",format=raw,if=virtio",
		"-kernel", tools.kernel, "-initrd", image, "-append", cmdline)
	var console, stderr bytes.Buffer
	cmd.Stdout = &console
	// ROOTFS_TRIM_BOOT_LOG gets the console as it comes (FILE.FLOW), to
	// follow a slow guest.
	if log := os.Getenv("ROOTFS_TRIM_BOOT_LOG"); log != "" {
		f, err := os.Create(log + "." + flow)
		if err != nil {
			t.Fatalf("ROOTFS_TRIM_BOOT_LOG: %v", err)
		}
		defer f.Close()
		cmd.Stdout = io.MultiWriter(&console, f)
	}
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	t.Logf("%s", strings.Join(cmd.Args, " "))
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	out := strings.ReplaceAll(console.String(), "\r", "")
	if ctx.Err() != nil {
		t.Fatalf("the guest did not power off within %s (ROOTFS_TRIM_BOOT_TIMEOUT raises it)\nconsole:\n%s\nqemu: %s", timeout, out, &stderr)
	}
	if err != nil {
		t.Fatalf("qemu: %v\n%s\nconsole:\n%s", err, &stderr, out)
	}
	return out, elapsed, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// The steps of minikube-start.sh, in its order.
var minikubeSteps = []struct{ runtime, cni string }{
	{"containerd", "bridge"}, {"crio", "bridge"}, {"docker", "bridge"}, {"dockershim", "bridge"},
	{"containerd", "kindnet"}, {"crio", "true"}, {"docker", "kindnet"},
	{"containerd", "calico"}, {"crio", "cilium"}, {"docker", "flannel"},
	{"containerd", "/home/user/my-cni.yaml"}, {"crio", "/home/user/my-cni.yaml"}, {"docker", "/home/user/my-cni.yaml"},
	{"containerd", "false"}, {"docker", "false"}, {"dockershim", "false"}, {"crio", "false"},
}

// cniPodConfig is the config a cluster CNI's pod writes (the script's
// cni_pod).
func cniPodConfig(cni string) string {
	switch {
	case cni == "kindnet" || cni == "true":
		return "10-kindnet.conflist"
	case cni == "cilium":
		return "05-cilium.conflist"
	case cni == "flannel":
		return "10-flannel.conflist"
	default: // calico, and the manifest, calico-like
		return "10-calico.conflist"
	}
}

// stepName is the subtest name for a row of the outcome table.
func stepName(runtime, cni string) string {
	if strings.HasPrefix(cni, "/") {
		cni = "manifest"
	}
	return runtime + "-" + cni
}

func checkMinikubeFlow(t *testing.T, flow string, r *report) {
	if !r.started {
		t.Fatal("the replay never started (no @@START on the console)")
	}
	if got := strings.TrimSpace(r.ok(t, "flow")); got != flow {
		t.Fatalf("the guest ran flow %q, want %q", got, flow)
	}
	if !r.done {
		t.Errorf("the replay did not get to the end of its last boot (no @@DONE)")
	}

	t.Run("first-boot", func(t *testing.T) {
		// No choice recorded yet: the render unit wrote nothing, and the
		// one runtime the image enables (docker with cri-dockerd) came up.
		checkBootOrder(t, r, "b1", "docker")
		r.wantLines(t, "b1/failed")
		r.wantLines(t, "b1/crictl", "absent")
		if got := netdConfigs(t, r, "b1"); len(got) != 0 {
			t.Errorf("/etc/cni/net.d at boot holds configs %q", got)
		}
		r.wantLines(t, "b1/sockets", "/var/run/docker.sock", "/var/run/cri-dockerd.sock")
		checkOneCRIEndpoint(t, r, "b1/sockets", "docker")
	})

	for i, s := range minikubeSteps {
		prefix := fmt.Sprintf("s%02d", i+1)
		t.Run(stepName(s.runtime, s.cni), func(t *testing.T) {
			if got := strings.TrimSpace(r.ok(t, prefix+"/choice")); got != s.runtime+" "+s.cni {
				t.Fatalf("step %s is %q", prefix, got)
			}
			if i > 0 {
				r.ok(t, prefix+"/fresh-vm")
			}
			r.ok(t, prefix+"/configure-runtimes")
			if flow == "patched" {
				// render alone, before minikube's Enable and disableOthers.
				checkOneCRIEndpoint(t, r, prefix+"/render-sockets", renderRuntime(s.runtime))
			}
			r.ok(t, prefix+"/apply-cni")
			checkStep(t, r, flow, prefix, s.runtime, s.cni)
		})
	}

	last := minikubeSteps[len(minikubeSteps)-1]
	t.Run("restart", func(t *testing.T) {
		lastPrefix := fmt.Sprintf("s%02d", len(minikubeSteps))
		if got := strings.TrimSpace(r.ok(t, "restart/choice")); got != last.runtime+" "+last.cni {
			t.Fatalf("restarted with %q", got)
		}
		// Before minikube reconnects: /etc is the image's again, and the
		// render unit rendered the recorded choice, if any, and runs its
		// runtime alone; with none, the image's runtime runs.
		atBoot := "docker"
		if flow == "patched" {
			atBoot = last.runtime
		}
		checkBootOrder(t, r, "b2", atBoot)
		r.wantLines(t, "b2/failed")
		r.wantLines(t, "b2/sockets", liveSockets[atBoot]...)
		checkOneCRIEndpoint(t, r, "b2/sockets", atBoot)
		if flow == "patched" {
			r.wantFile(t, "b2/crictl", "runtime-endpoint: unix://"+criSocket[last.runtime]+"\n")
			if got, want := r.lines(t, "b2/netd"), r.lines(t, lastPrefix+"/netd"); !slices.Equal(got, want) {
				t.Errorf("/etc/cni/net.d after the restart, before minikube: %q; before the restart it was %q", got, want)
			}
			checkRenderStarted(t, r, "b2/render-journal", atBoot)
		} else {
			r.wantLines(t, "b2/crictl", "absent")
			if got := netdConfigs(t, r, "b2"); len(got) != 0 {
				t.Errorf("/etc/cni/net.d after the restart holds configs %q with nothing recorded", got)
			}
		}
		r.ok(t, "restart/configure-runtimes")
		if flow == "patched" {
			checkOneCRIEndpoint(t, r, "restart/render-sockets", renderRuntime(last.runtime))
		}
		r.ok(t, "restart/apply-cni")
		checkStep(t, r, flow, "restart", last.runtime, last.cni)
		if got, want := r.lines(t, "restart/netd"), r.lines(t, lastPrefix+"/netd"); !slices.Equal(got, want) {
			t.Errorf("/etc/cni/net.d after minikube's restart: %q; after its first start: %q", got, want)
		}
	})

	if flow != "patched" {
		return
	}
	t.Run("next-boot", func(t *testing.T) {
		// render recorded containerd after the restart: the third boot runs
		// it alone, and nothing of cri-o, the second boot's runtime.
		r.ok(t, "next/render")
		checkBootOrder(t, r, "b3", "containerd")
		r.wantLines(t, "b3/failed")
		r.wantFile(t, "b3/crictl", "runtime-endpoint: unix://"+criSocket["containerd"]+"\n")
		r.wantLines(t, "b3/sockets", liveSockets["containerd"]...)
		checkOneCRIEndpoint(t, r, "b3/sockets", "containerd")
		checkRenderStarted(t, r, "b3/render-journal", "containerd")
	})
}

// checkRenderStarted checks from the render unit's journal that render
// itself started the runtime's units.
func checkRenderStarted(t *testing.T, r *report, name, runtime string) {
	t.Helper()
	j := r.ok(t, name)
	for _, u := range contract.RuntimeUnits[runtime] {
		if !strings.Contains(j, "started    "+u+"\n") {
			t.Errorf("guest: %s does not say render started %s:\n%s", name, u, j)
		}
	}
}

// renderRuntime is render's --runtime for a step's runtime.
func renderRuntime(runtime string) string {
	if runtime == "dockershim" {
		return "docker"
	}
	return runtime
}

// checkOneCRIEndpoint checks that of the CRI sockets kubeadm's detection
// dials (its known endpoints, contract.Sockets), exactly the runtime's
// accepts a connection, in the probe's list of served sockets.
func checkOneCRIEndpoint(t *testing.T, r *report, name, runtime string) {
	t.Helper()
	var got []string
	for _, s := range r.lines(t, name) {
		for _, cri := range contract.Sockets {
			if s == cri {
				got = append(got, s)
			}
		}
	}
	if want := []string{contract.Sockets[runtime]}; !slices.Equal(got, want) {
		t.Errorf("guest: %s: CRI sockets served %q, want only %s's %q", name, got, runtime, want)
	}
}

// checkStep checks the node after minikube's start sequence for one choice:
// one CRI endpoint, and the chosen CNI's config first in /etc/cni/net.d
// (kubelet takes the first in lexical order).
func checkStep(t *testing.T, r *report, flow, prefix, runtime, cni string) {
	t.Helper()
	r.wantFile(t, prefix+"/crictl", "runtime-endpoint: unix://"+criSocket[runtime]+"\n")
	r.wantLines(t, prefix+"/sockets", liveSockets[runtime]...)
	configs := netdConfigs(t, r, prefix)
	withPod := netdConfigs(t, r, prefix+"/with-cni-pod")
	switch {
	case cni == "bridge":
		// minikube wrote its 1-k8s.conflist; nothing else is a config.
		if !slices.Equal(configs, []string{"1-k8s.conflist"}) {
			t.Errorf("/etc/cni/net.d configs: %q, want only minikube's 1-k8s.conflist", configs)
		}
		if got := string(r.file(t, prefix+"/file/1-k8s.conflist")); got != minikubeBridge {
			t.Errorf("1-k8s.conflist is not minikube's bytes:\n%q", got)
		}
	case cni == "false":
		if flow == "unchanged" {
			// minikube relies on the packaged bridges, rewritten to the
			// pod CIDR; the trimmed image has none: no pod network. This
			// is the outcome table's "needs the patch" (for dockershim,
			// "right": kubelet uses no CNI there).
			if len(configs) != 0 {
				t.Errorf("/etc/cni/net.d configs: %q; the unchanged flow has none to rewrite", configs)
			}
			break
		}
		// Patched: the runtime's default network on the pod CIDR.
		if len(configs) != 1 {
			t.Fatalf("/etc/cni/net.d configs: %q, want exactly one default network", configs)
		}
		checkOnlySubnet(t, r.file(t, prefix+"/file/"+configs[0]), "10.244.0.0/16")
	default:
		// A CNI deployed to the cluster: nothing may be there before its
		// pod writes its config, and then it is the only one.
		if len(configs) != 0 {
			t.Errorf("/etc/cni/net.d configs before the cluster CNI runs: %q, want none (any would pre-empt it)", configs)
		}
		if want := cniPodConfig(cni); !slices.Equal(withPod, []string{want}) {
			t.Errorf("/etc/cni/net.d configs once the CNI's pod ran: %q, want only %s", withPod, want)
		}
	}
}

// netdConfigs lists what libcni would load from /etc/cni/net.d (.conf,
// .conflist, .json), in its order.
func netdConfigs(t *testing.T, r *report, prefix string) []string {
	t.Helper()
	var out []string
	for _, line := range r.lines(t, prefix+"/netd") {
		name, _, _ := strings.Cut(line, " ")
		switch filepath.Ext(name) {
		case ".conf", ".conflist", ".json":
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

var subnetRE = regexp.MustCompile(`"subnet"\s*:\s*"([^"]*)"`)

// checkOnlySubnet checks that conf is JSON whose only subnet is want.
func checkOnlySubnet(t *testing.T, conf []byte, want string) {
	t.Helper()
	var v any
	if err := json.Unmarshal(conf, &v); err != nil {
		t.Errorf("not JSON (%v):\n%s", err, conf)
	}
	var subnets []string
	for _, m := range subnetRE.FindAllSubmatch(conf, -1) {
		subnets = append(subnets, string(m[1]))
	}
	if !slices.Equal(subnets, []string{want}) {
		t.Errorf("subnets %q, want only %s:\n%s", subnets, want, conf)
	}
}

// checkBootOrder checks from systemd's own timestamps that the render unit
// ran, succeeded and had exited before any runtime service began to start,
// and that only the runtime expected at this boot started.
// (A oneshot unit without RemainAfterExit keeps ActiveEnterTimestamp at 0;
// ExecMainExitTimestamp and InactiveExitTimestamp are set either way.)
func checkBootOrder(t *testing.T, r *report, prefix, runtime string) {
	t.Helper()
	// systemctl show: one block of NAME=VALUE lines per unit.
	props := map[string]map[string]string{}
	block := map[string]string{}
	for _, line := range append(r.lines(t, prefix+"/units"), "") {
		if line == "" {
			if len(block) > 0 {
				props[block["Id"]] = block
			}
			block = map[string]string{}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("%s/units: %q", prefix, line)
		}
		block[k] = v
	}
	num := func(unit, prop string) uint64 {
		n, err := strconv.ParseUint(props[unit][prop], 10, 64)
		if err != nil {
			t.Errorf("%s %s: %q", unit, prop, props[unit][prop])
		}
		return n
	}
	render := "rootfs-trim-render.service"
	if res := props[render]["Result"]; res != "success" || props[render]["ExecMainStatus"] != "0" {
		t.Errorf("%s: Result=%s ExecMainStatus=%s", render, res, props[render]["ExecMainStatus"])
	}
	renderStart, renderExit := num(render, "InactiveExitTimestampMonotonic"), num(render, "ExecMainExitTimestampMonotonic")
	if renderStart == 0 || renderExit == 0 {
		t.Fatalf("%s did not run at boot: started %d, exited %d", render, renderStart, renderExit)
	}
	if automount := num("minikube-automount.service", "ExecMainExitTimestampMonotonic"); automount == 0 || automount > renderStart {
		t.Errorf("%s started at %d, before minikube-automount (the persistent disk) was done at %d", render, renderStart, automount)
	}
	// The socket units are not ordered after render: they belong to
	// sockets.target, before basic.target and so before
	// minikube-automount. Their services are, and a connection waits for
	// them.
	// One runtime starts: with no record the image's, its rules'
	// boot_runtime (docker, as minikube's default); with one, the recorded
	// runtime, which render starts and whose services the image's
	// enablement may not have: the others' start jobs are cancelled before
	// they run.
	services := map[string][]string{
		"containerd": {"containerd.service"}, "crio": {"crio.service"},
		"docker": {"docker.service", "cri-docker.service"},
	}
	for rt, units := range services {
		for _, u := range units {
			start := num(u, "InactiveExitTimestampMonotonic")
			switch {
			case rt != runtime && start != 0:
				t.Errorf("%s started at boot (at %d µs): %s alone should", u, start, runtime)
			case rt == runtime && start == 0:
				t.Errorf("%s did not start at boot", u)
			case rt == runtime && start < renderExit:
				t.Errorf("%s began to start at %d µs, before %s had exited at %d µs", u, start, render, renderExit)
			}
		}
	}
}
