package packages

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
