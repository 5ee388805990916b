// Package boot holds the tests that need a real Linux boot: `rootfs-trim
// apply` on a small Buildroot-like rootfs archive, the result booted as an
// initramfs by a distribution kernel under QEMU, and `rootfs-trim render`
// run inside the guest as the boot unit runs it. The unit tests and the
// testscript scenarios render into a directory on the host; only a boot
// shows that the kernel accepts the archive apply writes and that /etc ends
// up right on the real boot path (/proc/cmdline, a static binary, no libc).
//
// See README.md for what the tests need and how CI runs them.
package boot

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// requireToolsEnv set to 1 (CI sets it) turns a missing tool into a failure:
// a CI machine that lost QEMU must not pass by skipping the boot.
const requireToolsEnv = "ROOTFS_TRIM_REQUIRE_TOOLS"

// initScript is the guest's PID 1.
//
//go:embed init.sh
var initScript []byte

// The kernel command line. rdinit=/init because an initramfs has no root= to
// mount; panic=-1 reboots at once on a panic, and -no-reboot makes a reboot
// end QEMU, so a broken guest ends the test instead of hanging it. quiet
// keeps the kernel's boot messages off the console the test parses.
const kernelCmdline = "console=ttyS0 panic=-1 rdinit=/init quiet"

// defaultBootTimeout bounds the boot, render and poweroff: about 20 s under
// TCG on an idle 2-CPU machine, so it only fires on a hung guest.
// ROOTFS_TRIM_BOOT_TIMEOUT (a Go duration) overrides it for slow machines.
const defaultBootTimeout = 180 * time.Second

// deepFile is nested deeper than anything else in the fixture: the kernel
// must create every directory on the way (the archive lists them first).
const deepFile = "usr/lib/boot-test/a/b/c/d/e/f/g/h/i/j/k/l/deep.txt"

func TestBootRender(t *testing.T) {
	fx := newBootFixture(t)
	repo, work := fx.repo, fx.work

	// The archive as Buildroot's fs/cpio makes it (under fakeroot, hence
	// -R 0:0), then apply as a post-image step would run it.
	input := filepath.Join(work, "rootfs.cpio.gz")
	makeCpioGz(t, fx.tree, input)
	image := filepath.Join(work, "image.cpio.gz")
	out := fx.apply(t, input, image)
	t.Logf("rootfs-trim apply:\n%s", out)

	want := archiveManifest(t, image, filepath.Join(work, "extracted"))

	r := fx.boot(t, image, "boot, render and poweroff")
	if !r.done {
		t.Errorf("/init did not get to the end (no @@DONE on the console)")
	}

	checkUnpacked(t, want, r.lines(t, "manifest"))

	// What apply left in the image, seen from inside the booted guest.
	got := manifestPaths(r.lines(t, "manifest"))
	for _, p := range []string{
		"/etc/containers/net.d/87-podman-bridge.conflist",
		"/etc/containers/containers.conf",
		"/usr/share/minikube/rootfs-trim/index.json",
		"/etc/cni/net.d/.keep",
		"/" + deepFile,
	} {
		if !got[p] {
			t.Errorf("%s is not in the booted guest", p)
		}
	}
	for _, p := range []string{"/etc/crictl.yaml", "/etc/cni/net.d/87-podman-bridge.conflist", "/etc/cni/net.d/100-crio-bridge.conf"} {
		if got[p] {
			t.Errorf("%s is in the booted guest; apply should have taken it out of /etc", p)
		}
	}
	r.wantLines(t, "netd-initial", ".", "..", ".keep")

	// The boot unit, run from its own ExecStart: nothing recorded yet,
	// nothing written.
	r.ok(t, "unit-enabled")
	r.ok(t, "unit-condition")
	r.ok(t, "render-boot")
	// base64 fails on the missing file.
	if s, ok := r.sections["crictl-boot"]; !ok || s.status == 0 {
		t.Errorf("/etc/crictl.yaml after the boot unit with nothing recorded: %+v", s)
	}
	r.wantLines(t, "netd-boot", ".", "..", ".keep")

	// minikube's choice, as the patched minikube passes it.
	r.ok(t, "render-crio")
	r.wantFile(t, "crictl-crio", "runtime-endpoint: unix:///var/run/crio/crio.sock\n")
	r.wantLines(t, "netd-crio", ".", "..", ".keep", "1-k8s.conflist")
	checkBridgeSubnet(t, r.file(t, "conflist-crio"), "10.244.0.0/16")
	r.wantFile(t, "podman-conflist", string(podmanConflist(t, repo)))
	r.wantFile(t, "containers-conf", readFile(t, filepath.Join(repo, "rules/files/podman/containers.conf")))
	if again := r.ok(t, "render-again"); strings.Contains(again, "wrote") || strings.Contains(again, "removed") {
		t.Errorf("the boot unit with the recorded choice changed /etc:\n%s", again)
	}

	// minikube's second choice: containerd and kindnet.
	r.ok(t, "render-containerd")
	r.wantFile(t, "crictl-containerd", "runtime-endpoint: unix:///run/containerd/containerd.sock\n")
	r.wantLines(t, "netd-containerd", ".", "..", ".keep")

	// cri-o with no cluster CNI: the bridge apply deferred, on the pod CIDR.
	r.ok(t, "render-crio-false")
	r.wantFile(t, "crictl-crio-false", "runtime-endpoint: unix:///var/run/crio/crio.sock\n")
	r.wantLines(t, "netd-crio-false", ".", "..", ".keep", "100-crio-bridge.conf")
	checkOnlySubnet(t, r.file(t, "crio-bridge"), "10.244.0.0/16")

	for _, name := range r.order {
		if strings.HasPrefix(name, "render-") && strings.Contains(r.sections[name].out, "warning:") {
			t.Errorf("%s warned:\n%s", name, r.sections[name].out)
		}
	}
}

// bootTools are the host programs the boot test runs or copies into the guest.
// bootFixture is what a boot test starts from: the tools, the repository,
// a work directory, rootfs-trim built for the guest, and a Buildroot
// target tree with its packages-file-list.
type bootFixture struct {
	tools                                  bootTools
	repo, work, rootfsTrim, tree, packages string
}

func newBootFixture(t *testing.T) bootFixture {
	t.Helper()
	if testing.Short() {
		t.Skip("boots a Linux guest under QEMU (TCG): not with -short")
	}
	fx := bootFixture{tools: findBootTools(t), repo: repoRoot(t), work: t.TempDir()}
	fx.rootfsTrim = buildRootfsTrim(t, fx.repo, fx.work)
	fx.tree = filepath.Join(fx.work, "rootfs")
	fx.packages = writeFixture(t, fx.repo, fx.tree, fx.tools.busybox, fx.rootfsTrim)
	return fx
}

// apply runs rootfs-trim apply with the shipped rules and the fixture's
// packages-file-list, then args, and returns what it printed.
func (fx bootFixture) apply(t *testing.T, args ...string) []byte {
	t.Helper()
	args = append([]string{"apply", "--rules", filepath.Join(fx.repo, "rules"), "--packages-file-list", fx.packages}, args...)
	out, err := exec.Command(fx.rootfsTrim, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("rootfs-trim %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// boot boots image and returns /init's report. The kernel must unpack it
// without a complaint; the console is logged if the test fails.
func (fx bootFixture) boot(t *testing.T, image, what string) *report {
	t.Helper()
	return fx.bootWith(t, what, "-kernel", fx.tools.kernel, "-initrd", image, "-append", kernelCmdline)
}

// bootWith is boot with QEMU's arguments saying what to boot.
func (fx bootFixture) bootWith(t *testing.T, what string, args ...string) *report {
	t.Helper()
	console, elapsed := bootWith(t, fx.tools, args...)
	t.Logf("%s took %s under TCG", what, elapsed.Round(100*time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("guest console:\n%s", console)
		}
	})
	for _, bad := range []string{"Initramfs unpacking failed", "Kernel panic", "unable to open an initial console", "junk at the end", "broken padding"} {
		if strings.Contains(console, bad) {
			t.Errorf("kernel: %q on the console", bad)
		}
	}
	r := parseReport(console)
	if !r.started {
		t.Fatalf("the guest never ran /init (no @@START on the console)")
	}
	return r
}

type bootTools struct {
	qemu, kernel, busybox string
}

// findBootTools finds QEMU, a kernel and a static busybox, or skips (fails
// under ROOTFS_TRIM_REQUIRE_TOOLS=1). cpio, gzip, find and sort are checked
// too: the fixture is archived with them.
func findBootTools(t *testing.T) bootTools {
	t.Helper()
	const install = "apt-get install qemu-system-x86 linux-image-amd64 busybox-static cpio"
	for _, name := range []string{"cpio", "gzip", "find", "sort", "sh"} {
		if _, err := exec.LookPath(name); err != nil {
			missing(t, "%s not found (%s)", name, install)
		}
	}
	var tools bootTools
	var err error
	if tools.qemu, err = exec.LookPath("qemu-system-x86_64"); err != nil {
		missing(t, "qemu-system-x86_64 not found (%s)", install)
	}
	tools.kernel = findKernel(t)
	tools.busybox = os.Getenv("ROOTFS_TRIM_BUSYBOX")
	if tools.busybox == "" {
		if tools.busybox, err = exec.LookPath("busybox"); err != nil {
			missing(t, "busybox not found (%s, or set ROOTFS_TRIM_BUSYBOX)", install)
		}
	}
	// The guest has no libc: Debian's busybox package links glibc, and
	// busybox-static replaces it.
	if err := checkStaticX8664(tools.busybox); err != nil {
		missing(t, "busybox: %v (%s, or set ROOTFS_TRIM_BUSYBOX)", err, install)
	}
	return tools
}

// findKernel returns ROOTFS_TRIM_KERNEL, or else the newest readable
// /boot/vmlinuz-*. Debian's linux-image-amd64 builds in everything the test
// needs (initramfs unpacking with gzip, devtmpfs, the 8250 serial console,
// ACPI poweroff), so no modules go into the guest.
func findKernel(t *testing.T) string {
	t.Helper()
	if k := os.Getenv("ROOTFS_TRIM_KERNEL"); k != "" {
		if err := readable(k); err != nil {
			t.Fatalf("ROOTFS_TRIM_KERNEL: %v", err)
		}
		return k
	}
	kernels, _ := filepath.Glob("/boot/vmlinuz-*")
	sort.Sort(sort.Reverse(sort.StringSlice(kernels)))
	var problems []string
	for _, k := range kernels {
		// Ubuntu installs kernels mode 0600: unreadable unless root.
		if err := readable(k); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		return k
	}
	missing(t, "no readable kernel in /boot %v (apt-get install linux-image-amd64, or set ROOTFS_TRIM_KERNEL to a bzImage)", problems)
	return ""
}

func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// missing skips the test, or fails it where the tools are required.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireToolsEnv) == "1" {
		t.Fatalf("%s; %s=1 requires it", msg, requireToolsEnv)
	}
	t.Skip(msg)
}

// checkStaticX8664 reports why path cannot run in the x86-64 guest, which
// has no dynamic loader.
func checkStaticX8664(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%s is for %s, the guest is x86-64", path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", path)
		}
	}
	return nil
}

// repoRoot is the module root: go test runs in test/boot.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("not the module root: %v", err)
	}
	return root
}

// buildRootfsTrim builds the binary that goes into images the way `make
// build` does: static (the guest has no libc), trimmed, for x86-64 whatever
// the host.
func buildRootfsTrim(t *testing.T, repo, dir string) string {
	t.Helper()
	return buildForGuest(t, repo, dir, "./cmd/rootfs-trim")
}

// buildForGuest builds package pkg of repo into dir as a static, trimmed
// x86-64 binary named after it, for the guest.
func buildForGuest(t *testing.T, repo, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	if err := checkStaticX8664(bin); err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	return bin
}

// The runtime packages' offending files, as the packages ship them.
const (
	crioBridgeConf = `{
    "cniVersion": "0.3.1",
    "name": "crio",
    "type": "bridge",
    "bridge": "cni0",
    "isGateway": true,
    "ipMasq": true,
    "hairpinMode": true,
    "ipam": {
        "type": "host-local",
        "routes": [{ "dst": "0.0.0.0/0" }],
        "ranges": [[{ "subnet": "10.85.0.0/16" }]]
    }
}
`
	// Differs from what render writes, so the test sees which one it got.
	crioCrictl = "runtime-endpoint: unix:///var/run/crio/crio.sock\nimage-endpoint: unix:///var/run/crio/crio.sock\ntimeout: 10\n"
)

// writeFixture lays out a Buildroot target directory in tree: busybox and
// its applet links, the boot test's /init, rootfs-trim with the overlay,
// the runtime packages' offending files, and something of every kind of
// entry the kernel unpacks (hard links, a fifo, a sticky directory,
// relative symlinks, a deep path). It returns Buildroot's
// packages-file-list.txt for it.
func writeFixture(t *testing.T, repo, tree, busybox, rootfsTrim string) string {
	t.Helper()
	tg := &target{t: t, root: tree}
	own, write := tg.own, tg.write
	mkdir := func(path string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(tree, path)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		// Chmod: MkdirAll's mode is filtered by the umask, 1777 above all.
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(pkg, path, target string) {
		t.Helper()
		p := filepath.Join(tree, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		own(pkg, path)
	}

	for _, d := range []string{"dev", "proc", "sys", "root", "run", "etc", "var/run"} {
		mkdir(d, 0o755)
	}
	mkdir("tmp", 0o1777)

	write("busybox", "bin/busybox", readFileBytes(t, busybox), 0o755)
	// The applets init.sh runs, where Buildroot's busybox puts them.
	for _, a := range []string{"sh", "cat", "dmesg", "echo", "find", "sort", "readlink", "stat", "mkdir", "mount", "ls", "sed", "base64", "sync", "test"} {
		symlink("busybox", "bin/"+a, "busybox")
	}
	symlink("busybox", "sbin/poweroff", "../bin/busybox")
	symlink("busybox", "usr/bin/sha256sum", "../../bin/busybox")
	write("", "init", initScript, 0o755)
	write("rootfs-trim", "usr/bin/rootfs-trim", readFileBytes(t, rootfsTrim), 0o755)

	copyTree(t, filepath.Join(repo, "buildroot-overlay"), tree)
	// The package installs its preset, and Buildroot enables units with
	// systemctl preset-all on each image: /init checks the link it makes.
	write("rootfs-trim", presetPath, readFileBytes(t, filepath.Join(repo, "buildroot", "package", "rootfs-trim", "50-rootfs-trim.preset")), 0o644)
	presetAll(t, tree)
	// The image keeps /etc/cni/net.d through an empty .keep (policy.yaml
	// allows it and keeps the directory). Added here when the overlay does
	// not carry one.
	if _, err := os.Lstat(filepath.Join(tree, "etc/cni/net.d/.keep")); errors.Is(err, fs.ErrNotExist) {
		write("", "etc/cni/net.d/.keep", nil, 0o644)
	}

	stub := []byte("#!/bin/sh\nexit 0\n")
	write("podman", "usr/bin/podman", stub, 0o755)
	write("podman", "etc/cni/net.d/87-podman-bridge.conflist", podmanConflist(t, repo), 0o644)
	write("crio-bin", "usr/bin/crio", stub, 0o755)
	write("crio-bin", "etc/cni/net.d/100-crio-bridge.conf", []byte(crioBridgeConf), 0o644)
	write("crio-bin", "etc/crictl.yaml", []byte(crioCrictl), 0o644)

	// A hard-link group: GNU cpio puts the data on the last member only.
	write("e2fsprogs", "usr/sbin/mke2fs", []byte("mke2fs stand-in\n"), 0o755)
	for _, name := range []string{"usr/sbin/mkfs.ext2", "usr/sbin/mkfs.ext4"} {
		if err := os.Link(filepath.Join(tree, "usr/sbin/mke2fs"), filepath.Join(tree, name)); err != nil {
			t.Fatal(err)
		}
		own("e2fsprogs", name)
	}
	write("boot-test", deepFile, []byte("deep\n"), 0o600)
	write("boot-test", "usr/lib/boot-test/empty", nil, 0o644)
	if err := syscall.Mkfifo(filepath.Join(tree, "usr/lib/boot-test/fifo"), 0o620); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(tree, "usr/lib/boot-test/fifo"), 0o620); err != nil {
		t.Fatal(err)
	}

	list := filepath.Join(filepath.Dir(tree), "packages-file-list.txt")
	if err := os.WriteFile(list, []byte(strings.Join(tg.owners, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return list
}

// copyTree copies the overlay into the target as Buildroot does (rsync -a).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := archivetest.CopyTree(src, dst); err != nil {
		t.Fatalf("copying the overlay: %v", err)
	}
}

// makeCpioGz archives tree as Buildroot's fs/cpio does.
func makeCpioGz(t *testing.T, tree, out string) {
	t.Helper()
	raw := strings.TrimSuffix(out, ".gz")
	// set -e checks each command; dash has no pipefail, hence the files.
	script := `set -e
find . > "$1.list"
LC_ALL=C sort "$1.list" > "$1.sorted"
cpio --quiet -o -H newc --reproducible -R 0:0 < "$1.sorted" > "$1"
gzip -9 -n "$1"`
	cmd := exec.Command("sh", "-c", script, "sh", raw)
	cmd.Dir = tree
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making the archive: %v\n%s", err, out)
	}
}

// archiveManifest extracts image with GNU cpio, the reference for what an
// unpacker makes of the archive, and describes each entry as init.sh does.
// It checks the extraction against `cpio -it`, so that no entry is missed.
func archiveManifest(t *testing.T, image, dir string) map[string]string {
	t.Helper()
	raw := gunzip(t, image)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	extract := exec.Command("cpio", "--quiet", "-idm", "--no-absolute-filenames")
	extract.Dir = dir
	extract.Stdin = bytes.NewReader(raw)
	if out, err := extract.CombinedOutput(); err != nil {
		t.Fatalf("cpio -idm: %v\n%s", err, out)
	}
	list := exec.Command("cpio", "--quiet", "-it")
	list.Stdin = bytes.NewReader(raw)
	names, err := list.Output()
	if err != nil {
		t.Fatalf("cpio -it: %v", err)
	}
	listed := map[string]bool{}
	for _, n := range strings.Split(strings.TrimSpace(string(names)), "\n") {
		if n = strings.TrimPrefix(n, "./"); n != "." && n != "" {
			listed["/"+n] = true
		}
	}

	want := map[string]string{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		name := "/" + filepath.ToSlash(rel)
		line, err := describe(path, name)
		if err != nil {
			return err
		}
		want[name] = line
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(listed) {
		t.Fatalf("cpio -it lists %d entries, extraction made %d", len(listed), len(want))
	}
	for name := range want {
		if !listed[name] {
			t.Fatalf("extraction made %s, which cpio -it does not list", name)
		}
	}
	return want
}

// describe is init.sh's manifest line for one file: type, mode as stat's
// %a (octal, with setuid, setgid and sticky), then link count and SHA-256
// for a file, the target for a symlink.
func describe(path, name string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("%s: no stat_t", path)
	}
	perm := strconv.FormatUint(uint64(st.Mode&0o7777), 8)
	switch fi.Mode().Type() {
	case fs.ModeSymlink:
		target, err := os.Readlink(path)
		return "l|" + target + "|" + name, err
	case 0:
		data, err := os.ReadFile(path)
		sum := sha256.Sum256(data)
		return fmt.Sprintf("f|%s|%d|%s|%s", perm, st.Nlink, hex.EncodeToString(sum[:]), name), err
	case fs.ModeDir:
		return "d|" + perm + "|" + name, nil
	case fs.ModeNamedPipe:
		return "p|" + perm + "|" + name, nil
	default:
		return fmt.Sprintf("o|%x|%s", st.Mode, name), nil
	}
}

// checkUnpacked compares every entry of the archive with what the guest's
// kernel unpacked. The guest has a few more (the kernel's built-in
// initramfs: /dev/console, /root), which are logged.
func checkUnpacked(t *testing.T, want map[string]string, guest []string) {
	t.Helper()
	if len(guest) == 0 {
		t.Errorf("the guest listed no files")
		return
	}
	got := map[string]string{}
	for _, line := range guest {
		got[line[strings.LastIndexByte(line, '|')+1:]] = line
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	bad := 0
	for _, name := range names {
		if got[name] != want[name] {
			bad++
			t.Errorf("unpacked by the kernel:\n  archive: %s\n  guest:   %s", want[name], got[name])
		}
	}
	var extra []string
	for name := range got {
		if _, ok := want[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	t.Logf("the archive has %d entries, %d of them unpacked identically in the guest; the guest also has %v",
		len(want), len(want)-bad, extra)
}

func manifestPaths(lines []string) map[string]bool {
	paths := map[string]bool{}
	for _, line := range lines {
		paths[line[strings.LastIndexByte(line, '|')+1:]] = true
	}
	return paths
}

// bootTimeout is def, or ROOTFS_TRIM_BOOT_TIMEOUT (a Go duration), cut
// to leave time to report before go test's own -timeout panics.
func bootTimeout(t *testing.T, def time.Duration) time.Duration {
	t.Helper()
	timeout := def
	if s := os.Getenv("ROOTFS_TRIM_BOOT_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("ROOTFS_TRIM_BOOT_TIMEOUT: %v", err)
		}
		timeout = d
	}
	if deadline, ok := t.Deadline(); ok {
		if left := time.Until(deadline) - 10*time.Second; left < timeout {
			timeout = left
		}
	}
	return timeout
}

// bootWith runs QEMU on what its arguments say to boot (a kernel and an
// initrd, or a CD and its firmware) and returns the serial console's
// output. -nodefaults (no NIC, so no iPXE ROM to wait for, no VGA) with the
// serial port on stdio is -nographic without its extras; -accel tcg since
// these machines have no KVM.
func bootWith(t *testing.T, tools bootTools, what ...string) (string, time.Duration) {
	t.Helper()
	timeout := bootTimeout(t, defaultBootTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.qemu,
		"-M", "pc", "-accel", "tcg", "-m", "512", "-smp", "1",
		"-nodefaults", "-no-user-config", "-display", "none", "-serial", "stdio",
		"-no-reboot")
	cmd.Args = append(cmd.Args, what...)
	var console, stderr bytes.Buffer
	cmd.Stdout = &console
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	t.Logf("%s", strings.Join(cmd.Args, " "))
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	out := strings.ReplaceAll(console.String(), "\r", "")
	// For CI to keep as an artifact, pass or fail.
	if log := os.Getenv("ROOTFS_TRIM_BOOT_LOG"); log != "" {
		if err := os.WriteFile(log, []byte(out), 0o644); err != nil {
			t.Errorf("ROOTFS_TRIM_BOOT_LOG: %v", err)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("the guest did not power off within %s (ROOTFS_TRIM_BOOT_TIMEOUT raises it)\nconsole:\n%s\nqemu: %s", timeout, out, &stderr)
	}
	if err != nil {
		t.Fatalf("qemu: %v\n%s\nconsole:\n%s", err, &stderr, out)
	}
	return out, elapsed
}

// report is init.sh's output, parsed from the console.
type report struct {
	started, done bool
	sections      map[string]section
	order         []string
}

type section struct {
	out    string
	status int
	ended  bool
}

// parseReport reads the @@ markers. A marker can share its line with what
// came before it: terminal escapes, or a command's last line without a
// newline.
func parseReport(console string) *report {
	r := &report{sections: map[string]section{}}
	var cur string
	var buf strings.Builder
	in := false
	sc := bufio.NewScanner(strings.NewReader(console))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		marker := ""
		if i := strings.Index(line, "@@"); i >= 0 {
			line, marker = line[:i], line[i+2:]
		}
		if in && (line != "" || marker == "") {
			buf.WriteString(line)
			buf.WriteByte('\n')
		}
		fields := strings.Fields(marker)
		switch {
		case len(fields) == 1 && fields[0] == "START":
			r.started = true
		case len(fields) == 1 && fields[0] == "DONE":
			r.done = true
		case len(fields) == 2 && fields[0] == "BEGIN":
			cur, in = fields[1], true
			buf.Reset()
		case len(fields) == 3 && fields[0] == "END" && in && fields[1] == cur:
			status, err := strconv.Atoi(fields[2])
			if err != nil {
				status = -1
			}
			r.sections[cur] = section{out: buf.String(), status: status, ended: true}
			r.order = append(r.order, cur)
			in = false
		}
	}
	return r
}

// ok returns the output of a section whose command succeeded.
func (r *report) ok(t *testing.T, name string) string {
	t.Helper()
	s, found := r.sections[name]
	switch {
	case !found:
		t.Errorf("guest: no report %q", name)
	case s.status != 0:
		t.Errorf("guest: %s exited %d:\n%s", name, s.status, s.out)
	}
	return s.out
}

func (r *report) lines(t *testing.T, name string) []string {
	t.Helper()
	out := strings.TrimRight(r.ok(t, name), "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// file decodes a file init.sh showed base64-encoded.
func (r *report) file(t *testing.T, name string) []byte {
	t.Helper()
	out := r.ok(t, name)
	data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(out), ""))
	if err != nil {
		t.Errorf("guest: %s: not base64 (%v):\n%s", name, err, out)
	}
	return data
}

func (r *report) wantFile(t *testing.T, name, want string) {
	t.Helper()
	if got := string(r.file(t, name)); got != want {
		t.Errorf("guest: %s:\n%q\nwant\n%q", name, got, want)
	}
}

func (r *report) wantLines(t *testing.T, name string, want ...string) {
	t.Helper()
	if got := r.lines(t, name); !slices.Equal(got, want) {
		t.Errorf("guest: %s: %q, want %q", name, got, want)
	}
}

// checkBridgeSubnet checks that minikube's bridge conflist hands out
// addresses from the pod CIDR.
func checkBridgeSubnet(t *testing.T, conflist []byte, want string) {
	t.Helper()
	var c struct {
		Plugins []struct {
			Type string `json:"type"`
			IPAM struct {
				Subnet string `json:"subnet"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(conflist, &c); err != nil {
		t.Errorf("1-k8s.conflist: %v\n%s", err, conflist)
		return
	}
	if len(c.Plugins) == 0 || c.Plugins[0].Type != "bridge" || c.Plugins[0].IPAM.Subnet != want {
		t.Errorf("1-k8s.conflist: want a bridge on %s first:\n%s", want, conflist)
	}
}

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}

func readFileBytes(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	return string(readFileBytes(t, path))
}
