package archivetest

import (
	"archive/tar"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
)

// ToolLocale is the locale the tests run the external tools in. Buildroot
// exports LC_ALL=C, under which bsdtar cannot convert UTF-8 names ("Pathname
// can't be converted from UTF-8 to current locale"); C.UTF-8 sorts and
// compares bytes as C does, and glibc has it built in (Debian's libc-bin
// ships it, no locales package needed).
const ToolLocale = "C.UTF-8"

// SetToolEnv fixes the environment the external tools see, whatever the
// caller's: locale and time zone (cpio -tv and bsdtar -tv print local
// times). Call it from TestMain, before any test runs a tool.
func SetToolEnv() {
	for _, v := range []string{"LANG", "LANGUAGE", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_TIME"} {
		os.Unsetenv(v)
	}
	os.Setenv("LC_ALL", ToolLocale)
	os.Setenv("TZ", "UTC")
}

// RequireToolsEnv names the variable that CI sets: with it, a missing
// external tool fails the test instead of skipping it, so that an
// interoperability test can never pass by not running.
const RequireToolsEnv = "ROOTFS_TRIM_REQUIRE_TOOLS"

// RequireTool skips t when name is not on PATH, or fails it under CI.
func RequireTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv(RequireToolsEnv) == "1" {
			t.Fatalf("%s is not installed, and %s=1 forbids skipping", name, RequireToolsEnv)
		}
		t.Skipf("%s is not installed", name)
	}
}

// RequireRoot skips t when it does not run as root, or fails it under CI;
// why says what needs root ("podman with a private storage root").
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv(RequireToolsEnv) == "1" {
			t.Fatalf("needs root (%s), and %s=1 forbids skipping", why, RequireToolsEnv)
		}
		t.Skipf("needs root: %s", why)
	}
}

// TarNames lists the entry names of the tar file name, cleaned ("./x/" is
// "x", the root itself left out), sorted.
func TarNames(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := strings.TrimPrefix(filepath.Clean("/"+h.Name), "/"); n != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// ToolMissing is RequireTool for callers without a testing.TB (testscript
// conditions): it returns an error under CI, ok=false when skipping is fine.
func ToolMissing(name string) (missing bool, err error) {
	if _, lerr := exec.LookPath(name); lerr == nil {
		return false, nil
	}
	if os.Getenv(RequireToolsEnv) == "1" {
		return true, fmt.Errorf("%s is not installed, and %s=1 forbids skipping", name, RequireToolsEnv)
	}
	return true, nil
}

// FixtureTime is the mtime of everything in a fixture tree, so listings of
// different runs compare equal.
var FixtureTime = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// MakeRootfsTree builds, at root (which must not exist), a small rootfs with
// every kind of entry a real one has: setuid and setgid binaries, a sticky
// directory, relative and absolute symlinks, a hard-link group of three,
// names with spaces and UTF-8, a fifo, and, when running as root, device
// nodes like the console Buildroot creates and a file owned by 1000:100.
func MakeRootfsTree(root string) error {
	dirs := []string{"", "bin", "dev", "etc", "etc/cni", "etc/cni/net.d", "opt", "opt/cni", "opt/cni/bin",
		"tmp", "usr", "usr/bin", "usr/lib", "usr/share", "usr/share/doc with space", "usr/share/ünïcødé"}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		"etc/cni/net.d/.keep":                     "",
		"etc/cni/net.d/87-podman-bridge.conflist": `{"cniVersion":"0.4.0","name":"podman"}` + "\n",
		"etc/crictl.yaml":                         "runtime-endpoint: unix:///var/run/crio/crio.sock\n",
		"opt/cni/bin/bridge":                      repeat("\x7fELF bridge ", 3000),
		"usr/bin/busybox":                         repeat("\x7fELF busybox ", 1001),
		"usr/lib/libc.so.6":                       repeat("libc", 2049),
		"usr/share/doc with space/README":         "odd name\n",
		"usr/share/ünïcødé/fichier":               "utf-8\n",
		"usr/bin/mkfs.ext4":                       "e2fsprogs\n",
		"etc/empty":                               "",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	for _, l := range []string{"usr/bin/mkfs.ext2", "usr/bin/mkfs.ext3"} {
		if err := os.Link(filepath.Join(root, "usr/bin/mkfs.ext4"), filepath.Join(root, l)); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{
		"bin/sh":          "../usr/bin/busybox",
		"usr/bin/bridge":  "../../opt/cni/bin/bridge",
		"etc/mtab":        "/proc/self/mounts",
		"usr/lib/libc.so": "libc.so.6",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			return err
		}
	}
	for name, mode := range map[string]uint32{"usr/bin/busybox": 0o4755, "usr/bin/mkfs.ext4": 0o2755, "tmp": 0o1777} {
		// syscall, not os.Chmod: os.FileMode spells setuid differently.
		if err := syscall.Chmod(filepath.Join(root, name), mode); err != nil {
			return err
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "dev/initctl"), 0o600); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		if err := unix.Mknod(filepath.Join(root, "dev/console"), unix.S_IFCHR|0o622, int(unix.Mkdev(5, 1))); err != nil {
			return err
		}
		if err := unix.Mknod(filepath.Join(root, "dev/sda"), unix.S_IFBLK|0o660, int(unix.Mkdev(8, 0))); err != nil {
			return err
		}
		if err := os.Lchown(filepath.Join(root, "usr/share/doc with space/README"), 1000, 100); err != nil {
			return err
		}
	}
	// Exact modes despite the umask that mknod and mkfifo applied.
	for name, mode := range map[string]uint32{"dev/console": 0o622, "dev/sda": 0o660, "dev/initctl": 0o600} {
		if err := syscall.Chmod(filepath.Join(root, name), mode); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return SetTimes(root, FixtureTime)
}

// SetTimes sets the mtime and atime of everything under root, symlinks
// included (without following them), to t.
func SetTimes(root string, t time.Time) error {
	ts := unix.NsecToTimespec(t.UnixNano())
	return filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
	})
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

// CopyTree copies src into dst as rsync -a (and Buildroot's overlay copy)
// would: symlinks as symlinks, modes with setuid, setgid and sticky bits,
// and mtimes kept, directories' mtimes set after their content.
func CopyTree(src, dst string) error {
	type dirTime struct {
		path string
		info fs.FileInfo
	}
	var dirs []dirTime
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(to, info.Mode().Perm()|info.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
				return err
			}
			dirs = append(dirs, dirTime{to, info})
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			// A symlink's own mtime is left as is: nothing reads it.
			os.Remove(to)
			return os.Symlink(link, to)
		case d.Type().IsRegular():
			if err := CopyFile(path, to, info.Mode()); err != nil {
				return err
			}
			return os.Chtimes(to, info.ModTime(), info.ModTime())
		default:
			return fmt.Errorf("%s: unexpected file type %s", path, d.Type())
		}
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chtimes(dirs[i].path, dirs[i].info.ModTime(), dirs[i].info.ModTime()); err != nil {
			return err
		}
	}
	return nil
}

// CopyFile copies src to dst, replacing it, with mode (setuid, setgid and
// sticky included).
func CopyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	os.Remove(dst)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode.Perm()|mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}

// TreeListing describes every entry under root, one line each: name, type
// and mode (setuid, setgid, sticky), owner, mtime to the nanosecond,
// symlink target, size and sha256 of the content. Two equal listings mean
// nothing an image built from the tree depends on differs.
func TreeListing(root string) ([]string, error) {
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := fmt.Sprintf("%s mode=%07o uid=%d gid=%d mtime=%d.%09d", rel, st.Mode, st.Uid, st.Gid, st.Mtim.Sec, st.Mtim.Nsec)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		case unix.S_IFREG:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" size=%d sha256=%s", len(data), digest.Bytes(data))
		}
		lines = append(lines, line)
		return nil
	})
	return lines, err
}

// RequireGNUTar is RequireTool for tar, and skips where tar is another
// tar: the sparse and global-header tests read GNU tar's own forms.
func RequireGNUTar(t testing.TB) {
	t.Helper()
	RequireTool(t, "tar")
	if out, _ := exec.Command("tar", "--version").Output(); !strings.Contains(string(out), "GNU tar") {
		t.Skip("tar is not GNU tar")
	}
}

// RunIn runs a tool in dir with env (nil: the test's), failing the test on
// an error, and returns what it printed.
func RunIn(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	RequireTool(t, name)
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
	return string(out)
}

// HoleyFile writes a file of size bytes holding data at the given offsets
// and holes elsewhere: the input of the sparse-file tests.
func HoleyFile(t testing.TB, p string, size int64, data map[int64]string) {
	t.Helper()
	f, err := os.Create(p)
	if err == nil {
		defer f.Close()
		err = f.Truncate(size)
	}
	for off, d := range data {
		if err == nil {
			_, err = f.WriteAt([]byte(d), off)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// CapFuzzMinimizing caps the fuzzer's minimizing at 100 tries an input
// unless -test.fuzzminimizetime is given; call it from TestMain. Go
// minimizes every input that adds coverage, not only a crasher, and its
// minimizeBytes (internal/fuzz, minimize.go) tries a number of cuts
// quadratic in the input's length; a structured input (a tarball, an xz
// index) hardly ever survives a cut, so each new input bred from a seed of
// a few kilobytes took the default 60 s with no exec meanwhile: the
// "stall" of FuzzTarball, and FuzzXzBlocks's 4,377 execs in 30 s. A
// crasher is written all the same, only less minimized.
func CapFuzzMinimizing() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.fuzzminimizetime" })
	if !given {
		if err := flag.Set("test.fuzzminimizetime", "100x"); err != nil {
			panic(err)
		}
	}
}
