package packages

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

const liveRootEnv = "ROOTFS_TRIM_TEST_LIVE_ROOT"

// TestLiveRootStaysOnItsFilesystem: `apply --rules DIR /` as the last RUN
// of a Dockerfile sees /proc, /sys and bind mounts inside the tree. Here a
// tmpfs holding podman's conflist is mounted on the tree's etc/cni/net.d:
// apply in place and audit must neither read nor change it, and a file on
// the tree's own filesystem is still handled. The mount is made in a
// private mount namespace (unshare(1), as root) by a second run of this
// test binary.
func TestLiveRootStaysOnItsFilesystem(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare(1) is not installed")
	}
	tree := filepath.Join(t.TempDir(), "root")
	for _, d := range []string{"etc/cni/net.d", "usr/local/lib/systemd/system", "proc"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tree, "usr/local/lib/systemd/system/crio.service"), []byte("[Unit]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0], "-test.run=^TestLiveRootHelper$", "-test.v")
	cmd.Env = append(os.Environ(), liveRootEnv+"="+tree)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLiveRootHelper") {
		t.Fatalf("%v\n%s", err, out)
	}
	// On the host the tmpfs was never there, and the tree's own unit went.
	if _, err := os.Lstat(filepath.Join(tree, "usr/local/lib/systemd/system/crio.service")); !os.IsNotExist(err) {
		t.Errorf("crio.service on the tree's filesystem: %v, want removed", err)
	}
}

// TestLiveRootHelper runs only under TestLiveRootStaysOnItsFilesystem.
func TestLiveRootHelper(t *testing.T) {
	tree := os.Getenv(liveRootEnv)
	if tree == "" {
		t.Skip("run by TestLiveRootStaysOnItsFilesystem")
	}
	root := repoRoot(t)
	netd := filepath.Join(tree, "etc/cni/net.d")
	if err := unix.Mount("tmpfs", netd, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	conflist := filepath.Join(netd, "87-podman-bridge.conflist")
	if err := os.WriteFile(conflist, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", filepath.Join(tree, "proc"), "proc", 0, ""); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(root, "rules")
	got := audit(t, root, "--package", "crio-bin", tree)
	if _, ok := got["etc/cni/net.d/87-podman-bridge.conflist"]; ok {
		t.Errorf("audit read the tmpfs mounted on etc/cni/net.d: %v", got)
	}
	if _, ok := got["usr/local/lib/systemd/system/crio.service"]; !ok {
		t.Errorf("audit missed the tree's own crio.service: %v", got)
	}
	out, code := run(t, "apply", "--rules", rules, "--package", "crio-bin", tree)
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "proc/") || strings.Contains(out, "87-podman-bridge") {
		t.Errorf("apply touched a mounted filesystem:\n%s", out)
	}
	if _, err := os.Stat(conflist); err != nil {
		t.Errorf("the conflist on the tmpfs: %v", err)
	}
}

const kicbaseRunEnv = "ROOTFS_TRIM_TEST_KICBASE_RUN"

// TestKicbaseRunStep: `rootfs-trim apply --rules DIR /` as a RUN step of
// kicbase's Dockerfile sees its root as a builder sets it up: /etc/hosts,
// /etc/resolv.conf and /etc/hostname bind-mounted from outside, /proc,
// /sys and /dev mounted, the rules bind-mounted in (RUN --mount). A second
// run of this test binary does that in a private mount namespace
// (unshare(1), as root), chroots into a copy of the amd64 kicbase tree and
// applies to /: apply must succeed with nothing unreviewed, leave every
// mount alone, add or change nothing under /var (a KIC node's volume),
// leave nothing behind in /run and /tmp, and audit clean; a second apply
// changes nothing.
func TestKicbaseRunStep(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("bind mounts and chroot need root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare(1) is not installed")
	}
	tree := kicbaseTree(t, repoRoot(t), "amd64")
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0], "-test.run=^TestKicbaseRunHelper$", "-test.v")
	cmd.Env = append(os.Environ(), kicbaseRunEnv+"="+tree)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestKicbaseRunHelper") {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
	// Outside the namespace: the tree was trimmed, the mount points are the
	// fixture's empty files again.
	if _, err := os.Lstat(filepath.Join(tree, "etc/crictl.yaml")); !os.IsNotExist(err) {
		t.Errorf("etc/crictl.yaml: %v, want removed", err)
	}
	if data, err := os.ReadFile(filepath.Join(tree, "etc/hosts")); err != nil || len(data) != 0 {
		t.Errorf("the tree's own etc/hosts under the mount: %q, %v; want it empty, untouched", data, err)
	}
}

// TestKicbaseRunHelper runs only under TestKicbaseRunStep.
func TestKicbaseRunHelper(t *testing.T) {
	tree := os.Getenv(kicbaseRunEnv)
	if tree == "" {
		t.Skip("run by TestKicbaseRunStep")
	}
	root := repoRoot(t)
	outside := t.TempDir()
	bound := map[string]string{
		"etc/hosts":       "127.0.0.1\tlocalhost\n172.17.0.2\tbuildkitsandbox\n",
		"etc/resolv.conf": "nameserver 10.0.2.3\n",
		"etc/hostname":    "buildkitsandbox\n",
	}
	for p, content := range bound {
		src := filepath.Join(outside, filepath.Base(p))
		if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		mount(t, src, filepath.Join(tree, p), "", unix.MS_BIND)
	}
	mount(t, "proc", filepath.Join(tree, "proc"), "proc", 0)
	mount(t, "sysfs", filepath.Join(tree, "sys"), "sysfs", 0)
	mount(t, "/dev", filepath.Join(tree, "dev"), "", unix.MS_BIND|unix.MS_REC)
	if err := os.MkdirAll(filepath.Join(tree, "tmp/rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	mount(t, filepath.Join(root, "rules"), filepath.Join(tree, "tmp/rules"), "", unix.MS_BIND|unix.MS_RDONLY)
	// The binary stays reachable after the chroot through /proc, which is
	// mounted in the tree, as the process's open file.
	self, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	if err := syscall.Chroot(tree); err != nil {
		t.Fatal(err)
	}
	bin = fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), self.Fd())
	if err := os.Chdir("/"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", "") // as in a RUN step: /tmp
	varBefore := treeState(t, "/var")
	runBefore, tmpBefore := dirList(t, "/run"), dirList(t, "/tmp")

	out, code := run(t, "apply", "--rules", "/tmp/rules", "--strict", "/")
	if code != 0 {
		t.Fatalf("apply /: exit %d\n%s", code, out)
	}
	t.Logf("apply /:\n%s", out)
	for _, bad := range []string{"unreviewed", "etc/hosts", "etc/resolv.conf", "etc/hostname", "proc/", "sys/", "dev/", "var/"} {
		if strings.Contains(out, bad) {
			t.Errorf("apply / printed %q", bad)
		}
	}
	for p, content := range bound {
		if got, err := os.ReadFile("/" + p); err != nil || string(got) != content {
			t.Errorf("/%s: %q, %v; want the builder's %q", p, got, err, content)
		}
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Errorf("/proc: %v", err)
	}
	if _, err := os.Stat("/dev/null"); err != nil {
		t.Errorf("/dev: %v", err)
	}
	if diff := cmp.Diff(varBefore, treeState(t, "/var")); diff != "" {
		t.Errorf("apply / changed /var (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(runBefore, dirList(t, "/run")); diff != "" {
		t.Errorf("apply / left something in /run (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(tmpBefore, dirList(t, "/tmp")); diff != "" {
		t.Errorf("apply / left something in /tmp (-before +after):\n%s", diff)
	}
	if got := audit(t, "/tmp", "/"); len(got) != 0 {
		t.Errorf("audit / after apply: %v", got)
	}
	again, code := run(t, "apply", "--rules", "/tmp/rules", "--strict", "/")
	if code != 0 {
		t.Fatalf("a second apply /: exit %d\n%s", code, again)
	}
	for _, line := range strings.Split(again, "\n") {
		for _, kind := range []string{"removed ", "relocated ", "deferred ", "added ", "created "} {
			if strings.HasPrefix(line, kind) {
				t.Errorf("a second apply / changed something: %s", line)
			}
		}
	}
}

func mount(t *testing.T, src, dst, fstype string, flags uintptr) {
	t.Helper()
	if err := unix.Mount(src, dst, fstype, flags, ""); err != nil {
		t.Fatalf("mount %s on %s: %v", src, dst, err)
	}
}

// dirList names what dir holds.
func dirList(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
