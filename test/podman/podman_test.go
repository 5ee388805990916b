// Package podman proves, with a real podman, that the relocation of
// podman's CNI networks in rules/podman.yaml works: podman reads and writes
// its networks in /etc/containers/net.d, named by the containers.conf that
// apply adds, and never touches /etc/cni/net.d, where kubelet looks.
//
// minikube merged this move once (PR #11704) and reverted it with the
// podman 3.1.2 upgrade it came with (#11711); docs/boot.md, "podman's
// network directory", says what broke and why this is different.
//
// The test runs podman as root in a private mount namespace: /etc is an
// overlay whose upper layer is a temp directory, and /etc/cni/net.d and
// /etc/containers/net.d are temp directories bound over the real ones, so
// the host's /etc is never written and every write podman makes is seen.
// podman's storage, run and tmp directories are temp directories too.
package podman

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// podmanBridgeFixture is podman v3.4.7's cni/87-podman-bridge.conflist,
// which the minikube ISO's podman.mk installs into /etc/cni/net.d.
const podmanBridgeFixture = "testdata/packages/upstream/podman-v3.4.7/root/etc/cni/net.d/87-podman-bridge.conflist"

// kubeletOnly stands for a cluster CNI's config in /etc/cni/net.d: podman
// must not see it.
const kubeletOnly = `{
  "cniVersion": "0.4.0",
  "name": "kubelet-only",
  "plugins": [{ "type": "loopback" }]
}
`

func TestPodmanRelocatedNetworks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs podman: not with -short")
	}
	for _, tool := range []string{"podman", "unshare", "mount", "sh"} {
		archivetest.RequireTool(t, tool)
	}
	archivetest.RequireRoot(t, "a mount namespace, and podman as root as on the ISO")
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	w := t.TempDir()
	conf, relocated := applyPodman(t, repo, w)

	p := newPrivatePodman(t, w, conf)
	if got := p.run(t, "info", "--format", "{{.Host.NetworkBackend}}"); got != "cni" {
		t.Fatalf("podman's network backend is %q; the test needs cni, as the ISO's podman 3.4.7 has", got)
	}
	p.install(t, relocated)
	if err := os.WriteFile(filepath.Join(p.cniDir, "10-kubelet-only.conflist"), []byte(kubeletOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	cniBefore := p.cniFiles(t)

	// minikube's configureRuntimes starts with `podman version`.
	p.run(t, "version")

	// The default network is the relocated file: found by its name in
	// network_config_dir, which is what the ISO's podman 3.4.7 checks
	// before writing a default network of its own.
	if got := p.networks(t); !slices.Equal(got, []string{"podman"}) {
		t.Errorf("podman network ls: %q, want only podman (the relocated conflist; never kubelet-only from /etc/cni/net.d)", got)
	}
	// podman's CNI backend dates a network loaded from a file at the
	// file's ctime, and one it makes up in memory at time.Now().
	ctime := p.ctime(t, "87-podman-bridge.conflist")
	if got := p.run(t, "network", "inspect", "podman", "--format", "{{.Created.UnixNano}}"); got != ctime {
		t.Errorf("network podman was created at %s, not at the relocated file's ctime %s: podman did not load /etc/containers/net.d/87-podman-bridge.conflist", got, ctime)
	}
	if got := p.run(t, "network", "inspect", "podman", "--format", "{{.NetworkInterface}} {{range .Subnets}}{{.Subnet}}{{end}}"); got != "cni-podman0 10.88.0.0/16" {
		t.Errorf("network podman: %q", got)
	}

	// A network podman creates goes to the relocated directory.
	p.run(t, "network", "create", "--subnet", "10.123.0.0/24", "rootfs-trim-test")
	if got := p.networks(t); !slices.Equal(got, []string{"podman", "rootfs-trim-test"}) {
		t.Errorf("podman network ls after create: %q", got)
	}
	if diff := cmp.Diff([]string{"87-podman-bridge.conflist", "rootfs-trim-test.conflist"}, p.netdFiles(t)); diff != "" {
		t.Errorf("/etc/containers/net.d after network create (-want +got):\n%s", diff)
	}
	created, err := os.ReadFile(filepath.Join(p.netdDir, "rootfs-trim-test.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(created, []byte(`"10.123.0.0/24"`)) {
		t.Errorf("rootfs-trim-test.conflist does not hold its subnet:\n%s", created)
	}
	p.run(t, "network", "rm", "rootfs-trim-test")
	if diff := cmp.Diff([]string{"87-podman-bridge.conflist"}, p.netdFiles(t)); diff != "" {
		t.Errorf("/etc/containers/net.d after network rm (-want +got):\n%s", diff)
	}

	// Without the relocated file podman 4.x makes the default network up in
	// memory: nothing is written, here or in /etc/cni/net.d.
	if err := os.Remove(filepath.Join(p.netdDir, "87-podman-bridge.conflist")); err != nil {
		t.Fatal(err)
	}
	if got := p.networks(t); !slices.Equal(got, []string{"podman"}) {
		t.Errorf("podman network ls without the relocated file: %q", got)
	}
	if got := p.run(t, "network", "inspect", "podman", "--format", "{{.Created.UnixNano}}"); got == ctime {
		t.Errorf("network podman still has the removed file's ctime")
	}
	if got := p.netdFiles(t); len(got) != 0 {
		t.Errorf("podman wrote %q into /etc/containers/net.d for its in-memory default network", got)
	}

	if diff := cmp.Diff(cniBefore, p.cniFiles(t)); diff != "" {
		t.Errorf("podman changed /etc/cni/net.d (-before +after):\n%s", diff)
	}
	p.checkEtcUntouched(t)
}

// applyPodman runs `rootfs-trim apply` with the shipped rules on a podman
// package tree as the ISO's podman.mk installs it, and returns the
// containers.conf it adds and the conflist it relocates.
func applyPodman(t *testing.T, repo, w string) (conf, relocated string) {
	t.Helper()
	tree := filepath.Join(w, "target")
	netd := filepath.Join(tree, "etc/cni/net.d")
	if err := os.MkdirAll(netd, 0o755); err != nil {
		t.Fatal(err)
	}
	podmanBridge, err := os.ReadFile(filepath.Join(repo, podmanBridgeFixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(netd, "87-podman-bridge.conflist"), podmanBridge, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/rootfs-trim", "apply", "--rules", "rules", "--package", "podman", tree)
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rootfs-trim apply: %v\n%s", err, out)
	}
	conf = filepath.Join(tree, "etc/containers/containers.conf")
	relocated = filepath.Join(tree, "etc/containers/net.d/87-podman-bridge.conflist")
	if _, err := os.Stat(filepath.Join(netd, "87-podman-bridge.conflist")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("apply left podman's conflist in /etc/cni/net.d (stat: %v)", err)
	}
	want, err := os.ReadFile(filepath.Join(repo, "rules/files/podman/containers.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(conf); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("apply's containers.conf is not rules/files/podman/containers.conf (%v):\n%s", err, got)
	}
	if got, err := os.ReadFile(relocated); err != nil || !bytes.Equal(got, podmanBridge) {
		t.Fatalf("the relocated conflist changed on the way (%v):\n%s", err, got)
	}
	return conf, relocated
}

// privatePodman runs podman as root with its state in temp directories,
// in a mount namespace where /etc is an overlay and the two network
// directories are temp directories.
type privatePodman struct {
	w, cniDir, netdDir, upper string
	conf                      string
	// runroot is short: podman refuses one longer than 50 characters,
	// which t.TempDir() can be.
	runroot string
}

func newPrivatePodman(t *testing.T, w, appliedConf string) *privatePodman {
	t.Helper()
	p := &privatePodman{
		w:       w,
		cniDir:  filepath.Join(w, "cni-net.d"),
		netdDir: filepath.Join(w, "containers-net.d"),
		upper:   filepath.Join(w, "etc-upper"),
		conf:    filepath.Join(w, "containers.conf"),
	}
	runroot, err := os.MkdirTemp("/tmp", "podman-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runroot) })
	p.runroot = runroot
	for _, d := range []string{p.cniDir, p.netdDir, p.upper, filepath.Join(w, "etc-work"), filepath.Join(w, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The ISO's podman 3.4.7 has only the CNI backend; podman 4 picks
	// netavark on a fresh system unless told. Everything else is the file
	// apply installs, network_config_dir included.
	applied, err := os.ReadFile(appliedConf)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(applied)
	if !strings.Contains(conf, "\n[network]\n") {
		t.Fatalf("containers.conf has no [network] table:\n%s", applied)
	}
	conf = strings.Replace(conf, "\n[network]\n", "\n[network]\nnetwork_backend = \"cni\"\n", 1)
	if err := os.WriteFile(p.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// install puts the relocated conflist where the image has it.
func (p *privatePodman) install(t *testing.T, relocated string) {
	t.Helper()
	data, err := os.ReadFile(relocated)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(p.netdDir, "87-podman-bridge.conflist")
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// setup runs in the new mount namespace before podman.
const setup = `set -eu
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$W/etc-upper,workdir=$W/etc-work" /etc
mkdir -p /etc/cni/net.d /etc/containers/net.d
mount --bind "$W/cni-net.d" /etc/cni/net.d
mount --bind "$W/containers-net.d" /etc/containers/net.d
exec "$@"
`

func (p *privatePodman) run(t *testing.T, args ...string) string {
	t.Helper()
	full := append([]string{"-m", "--propagation", "private", "sh", "-c", setup, "sh", "podman",
		"--root", filepath.Join(p.w, "root"),
		"--runroot", p.runroot,
		"--tmpdir", filepath.Join(p.w, "tmp"),
		"--storage-driver", "vfs",
		"--cgroup-manager", "cgroupfs",
		"--events-backend", "file",
	}, args...)
	cmd := exec.Command("unshare", full...)
	cmd.Env = []string{
		"W=" + p.w,
		"CONTAINERS_CONF=" + p.conf,
		"HOME=" + filepath.Join(p.w, "home"),
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LC_ALL=C",
		"TMPDIR=" + p.w,
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	if s := stderr.String(); strings.Contains(s, "level=error") || strings.Contains(s, "level=warn") {
		t.Errorf("podman %s complained:\n%s", strings.Join(args, " "), s)
	}
	return strings.TrimSpace(stdout.String())
}

// ctime is the change time of a file in /etc/containers/net.d, in
// nanoseconds, as podman reads it.
func (p *privatePodman) ctime(t *testing.T, name string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(p.netdDir, name), &st); err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(time.Unix(st.Ctim.Sec, st.Ctim.Nsec).UnixNano(), 10)
}

func (p *privatePodman) networks(t *testing.T) []string {
	t.Helper()
	names := strings.Fields(p.run(t, "network", "ls", "--format", "{{.Name}}"))
	slices.Sort(names)
	return names
}

// netdFiles lists /etc/containers/net.d but podman's cni.lock, the lock
// its CNI backend keeps beside the configs it manages.
func (p *privatePodman) netdFiles(t *testing.T) []string {
	t.Helper()
	return slices.DeleteFunc(listDir(t, p.netdDir), func(name string) bool { return name == "cni.lock" })
}

// cniFiles describes /etc/cni/net.d: names, sizes and mtimes.
func (p *privatePodman) cniFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, name := range listDir(t, p.cniDir) {
		fi, err := os.Lstat(filepath.Join(p.cniDir, name))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s", name, fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano)))
	}
	return out
}

// checkEtcUntouched fails if podman wrote anywhere under /etc besides the
// two directories bound over it (the overlay's upper layer has only the
// mount points the setup made).
func (p *privatePodman) checkEtcUntouched(t *testing.T) {
	t.Helper()
	var written []string
	err := filepath.WalkDir(p.upper, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p.upper, path)
		switch rel {
		case ".", "cni", "cni/net.d", "containers", "containers/net.d":
			return nil
		}
		written = append(written, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) > 0 {
		t.Errorf("podman wrote under /etc: %q", written)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
