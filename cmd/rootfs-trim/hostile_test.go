package main

// Hostile inputs and faults, against the real binary: each test fails
// without the protection it names. The table in docs/security.md
// points here.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/fslock"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// binary returns a path that runs this test binary as rootfs-trim:
// testscript.Main dispatches on the name it is invoked by.
func binary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "rootfs-trim")
	if err := os.Symlink(os.Args[0], p); err != nil {
		t.Fatal(err)
	}
	return p
}

type result struct {
	code           int
	stdout, stderr string
}

func runBinary(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// leftovers lists temporary files a run left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			found = append(found, e.Name())
		}
	}
	return found
}

// bigArchive writes a newc archive holding one file of size zeros; the
// file on disk is sparse, so it costs no disk space.
func bigArchive(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := archive.NewCpioWriter(f, archive.Newc)
	w.WriteHeader(&archive.Entry{Name: ".", Type: archive.TypeDir, Mode: 0o755, Nlink: 2})
	w.WriteHeader(&archive.Entry{Name: "big", Type: archive.TypeRegular, Mode: 0o644, Nlink: 1, Size: size})
	// Skip the data: the hole reads as zeros.
	if _, err := f.Seek(size, io.SeekCurrent); err != nil {
		t.Fatal(err)
	}
	tail := archive.NewCpioWriter(f, archive.Newc)
	tail.WriteHeader(&archive.Entry{Name: "etc", Type: archive.TypeDir, Mode: 0o755, Nlink: 2})
	if err := tail.Close(); err != nil {
		t.Fatal(err)
	}
}

// SIGINT or SIGTERM in the middle of apply on an archive: exit 2, no output,
// no temporary file, the input untouched.
func TestSignalDuringApply(t *testing.T) {
	bin := binary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.cpio")
			bigArchive(t, in, 3<<30)
			before, _ := os.Stat(in)
			out := filepath.Join(dir, "out.cpio.gz")
			cmd := exec.Command(bin, "apply", "--rules", "../../rules", "--compress", "gzip", in, out)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond)
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("exit: %v, want 2; stderr: %s", err, errb.String())
			}
			if !strings.Contains(errb.String(), "interrupted; nothing was written") {
				t.Errorf("stderr: %s", errb.String())
			}
			if _, err := os.Lstat(out); err == nil {
				t.Error("an output exists after the interrupt")
			}
			if l := leftovers(t, dir); len(l) > 0 {
				t.Errorf("temporary files left: %v", l)
			}
			after, _ := os.Stat(in)
			if !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
				t.Error("the input changed")
			}
		})
	}
}

// mountTmpfs mounts a small tmpfs, to make a disk fill up.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

// A full disk while writing: a clear error, exit 2, nothing left behind,
// an existing output untouched.
func TestDiskFull(t *testing.T) {
	bin := binary(t)
	full := mountTmpfs(t, "1m")
	in := filepath.Join(t.TempDir(), "in.cpio")
	bigArchive(t, in, 8<<20)
	out := filepath.Join(full, "out.cpio")
	os.WriteFile(out, []byte("previous image"), 0o644)
	r := runBinary(t, exec.Command(bin, "repack", in, out))
	if r.code != 2 || !strings.Contains(r.stderr, "no space left on device") {
		t.Fatalf("exit %d, stderr %q; want 2 and ENOSPC", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "previous image" {
		t.Error("the existing output was clobbered")
	}
	if l := leftovers(t, full); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestReadOnlyOutput(t *testing.T) {
	bin := binary(t)
	in := filepath.Join(t.TempDir(), "in.cpio")
	bigArchive(t, in, 10)
	r := runBinary(t, exec.Command(bin, "repack", in, "/sys/rootfs-trim-out.cpio"))
	if r.code != 2 || !strings.Contains(r.stderr, "/sys/") {
		t.Fatalf("exit %d, stderr %q; want 2 naming the path", r.code, r.stderr)
	}
}

// Two runs at once on one target: the second refuses, naming why.
func TestConcurrentApply(t *testing.T) {
	bin := binary(t)
	target := t.TempDir()
	unlock, err := fslock.Lock(target, false)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	r := runBinary(t, exec.Command(bin, "apply", "--rules", "../../rules", target))
	if r.code != 2 || !strings.Contains(r.stderr, "another rootfs-trim is working on it") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// A tiny compressed input that expands without end is stopped by
// --max-size with a clear message, long before it fills anything.
func TestCompressionBomb(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	raw := filepath.Join(dir, "bomb.cpio")
	bigArchive(t, raw, 1<<30)
	bomb := filepath.Join(dir, "bomb.cpio.zst")
	f, _ := os.Create(bomb)
	zw, _, err := compress.NewWriter(f, compress.Zstd, compress.WriterOptions{Level: 1, Backend: compress.PureGo})
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.Open(raw)
	io.Copy(zw, src)
	src.Close()
	zw.Close()
	f.Close()
	fi, _ := os.Stat(bomb)
	t.Logf("%d bytes of zstd expand to 1 GiB", fi.Size())
	start := time.Now()
	r := runBinary(t, exec.Command(bin, "list", "--max-size", "64M", bomb))
	if r.code != 2 || !strings.Contains(r.stderr, "expands beyond the size limit (--max-size 67108864 bytes)") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v to refuse", d)
	}
}

// A name of 100 MB is refused from its header, without reading or
// allocating it.
func TestHugeName(t *testing.T) {
	bin := binary(t)
	p := filepath.Join(t.TempDir(), "name.cpio")
	hdr := "070701" + strings.Repeat("00000000", 11) + fmt.Sprintf("%08X", 100<<20) + "00000000"
	os.WriteFile(p, []byte(hdr), 0o644)
	r := runBinary(t, exec.Command(bin, "list", p))
	if r.code != 2 || !strings.Contains(r.stderr, "name of 104857599 bytes exceeds PATH_MAX") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// A million empty entries stream through apply: memory is bounded by the
// table of output paths, not by the archive.
func TestMillionEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a million entries")
	}
	bin := binary(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "many.cpio.gz")
	f, _ := os.Create(in)
	zw, _, _ := compress.NewWriter(f, compress.Gzip, compress.WriterOptions{Level: 1, Backend: compress.PureGo})
	w := archive.NewCpioWriter(zw, archive.Newc)
	w.WriteHeader(&archive.Entry{Name: ".", Type: archive.TypeDir, Mode: 0o755, Nlink: 2})
	w.WriteHeader(&archive.Entry{Name: "d", Type: archive.TypeDir, Mode: 0o755, Nlink: 2})
	for i := range 1_000_000 {
		w.WriteHeader(&archive.Entry{Name: fmt.Sprintf("d/%07d", i), Type: archive.TypeRegular, Mode: 0o644, Nlink: 1})
	}
	w.Close()
	zw.Close()
	f.Close()
	cmd := exec.Command(bin, "apply", "--quiet", "--rules", "../../rules", in, filepath.Join(dir, "out.cpio.gz"))
	r := runBinary(t, cmd)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
	t.Logf("peak RSS %d MiB for 1,000,000 entries", rss>>10)
	if rss > 512<<10 {
		t.Errorf("peak RSS %d MiB", rss>>10)
	}
}

// Writing a tree as an unprivileged user: device nodes cannot be made and
// setuid bits must not be silently granted to the wrong owner; the run
// says so and fails rather than writing a different tree.
func TestDirOutputAsNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	// Not t.TempDir: its parent is private to root, and nobody must reach
	// the binary and the input.
	dir, err := os.MkdirTemp("", "rootfs-trim-nonroot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	in := filepath.Join(dir, "dev.cpio")
	f, _ := os.Create(in)
	w := archive.NewCpioWriter(f, archive.Newc)
	w.WriteHeader(&archive.Entry{Name: ".", Type: archive.TypeDir, Mode: 0o755, Nlink: 2})
	w.WriteHeader(&archive.Entry{Name: "console", Type: archive.TypeChar, Mode: 0o600, Nlink: 1, RdevMajor: 5, RdevMinor: 1})
	w.Close()
	f.Close()
	os.Chmod(in, 0o644)
	// The test binary must be reachable by nobody.
	exe := filepath.Join(dir, "rootfs-trim")
	data, _ := os.ReadFile(os.Args[0])
	os.WriteFile(exe, data, 0o755)
	cmd := exec.Command(exe, "repack", "--format", "dir", in, filepath.Join(dir, "tree"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	r := runBinary(t, cmd)
	if r.code != 2 || !strings.Contains(r.stderr, "console") {
		t.Fatalf("exit %d, stderr %q; want 2 naming the device", r.code, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, "tree")); err == nil {
		t.Error("a partial tree was left behind")
	}
}
