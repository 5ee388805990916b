package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// killTree makes the bundled example target with a long write phase: a
// directory of 1,200 leftovers that a rule strips, and a deferred file.
// Every entry gets its own mtime in 2025. It returns the file list.
func killTree(t *testing.T, root string) string {
	t.Helper()
	if err := archivetest.CopyTree("../../examples/minikube/target", root); err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile("../../examples/minikube/packages-file-list.txt")
	if err != nil {
		t.Fatal(err)
	}
	for d := range 12 {
		dir := filepath.Join(root, fmt.Sprintf("etc/cni/net.mk/d%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d.conflist", f)), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	conflist := "etc/cni/net.d/10-containerd-net.conflist"
	if err := os.WriteFile(filepath.Join(root, conflist), []byte(`{"name":"containerd-net"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fileList := filepath.Join(filepath.Dir(root), "packages-file-list.txt")
	if err := os.WriteFile(fileList, append(list, "containerd-bin,./"+conflist+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	i := 0
	err = filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ts := unix.NsecToTimespec(mt.Add(time.Duration(i) * time.Second).UnixNano())
		i++
		return unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
	})
	if err != nil {
		t.Fatal(err)
	}
	return fileList
}

// listing describes every entry of the tree at root (archivetest.TreeListing).
func listing(t *testing.T, root string) []string {
	t.Helper()
	lines, err := archivetest.TreeListing(root)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// treeApplyReference runs apply, uninterrupted, on killTree's tree, for
// the tests that then interrupt it: apply makes the command for a tree and
// its file list (the caller's environment but LC_ALL=C and no
// SOURCE_DATE_EPOCH), dir is where to make more trees, want the tree the
// run left and took how long it took.
func treeApplyReference(t *testing.T) (apply func(root, fileList string) *exec.Cmd, dir string, want []string, took time.Duration) {
	t.Helper()
	bin := binary(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SOURCE_DATE_EPOCH=") && !strings.HasPrefix(kv, "LC_ALL=") {
			env = append(env, kv)
		}
	}
	env = append(env, "LC_ALL=C")
	apply = func(root, fileList string) *exec.Cmd {
		cmd := exec.Command(bin, "apply", "--quiet", "--rules", "../../rules", "--packages-file-list", fileList, root)
		cmd.Env = env
		return cmd
	}
	dir = t.TempDir()
	ref := filepath.Join(dir, "ref", "target")
	fileList := killTree(t, ref)
	start := time.Now()
	if r := runBinary(t, apply(ref, fileList)); r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	took = time.Since(start)
	return apply, dir, listing(t, ref), took
}

// TestKillDuringApplyOnTree sends SIGKILL to apply on a tree at increasing
// delays, then runs it again: each time the tree must end exactly as an
// uninterrupted run leaves it, mtimes included, with nothing left beside it.
func TestKillDuringApplyOnTree(t *testing.T) {
	apply, dir, want, took := treeApplyReference(t)

	// Reading the tree takes the first part of a run: most kills go later.
	const tries = 12
	delay := func(i int) time.Duration { return took * time.Duration(i+4) / (tries + 4) }
	var midWrite int
	for i := range tries {
		root := filepath.Join(dir, fmt.Sprint(i), "target")
		fileList := killTree(t, root)
		cmd := apply(root, fileList)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay(i))
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		if _, err := os.Lstat(filepath.Join(filepath.Dir(root), ".target.rootfs-trim-journal")); killed && err == nil {
			midWrite++
		}
		r := runBinary(t, apply(root, fileList))
		if r.code != 0 {
			t.Fatalf("after a kill at %v: exit %d: %s", delay(i), r.code, r.stderr)
		}
		if d := cmp.Diff(want, listing(t, root)); d != "" {
			t.Fatalf("after a kill at %v (killed: %v), the rerun left another tree than an uninterrupted run (-want +got):\n%s", delay(i), killed, d)
		}
		entries, _ := os.ReadDir(filepath.Dir(root))
		if len(entries) != 2 {
			t.Errorf("beside the tree: %v, want only the file list", entries)
		}
		os.RemoveAll(filepath.Dir(root))
	}
	// How many kills landed while the tree was being changed depends on
	// the machine; the rest check that a kill while reading changes nothing.
	t.Logf("an uninterrupted run took %v; %d of %d kills landed while apply changed the tree", took, midWrite, tries)
}

// TestInterruptDuringApplyOnTree sends SIGINT to apply on a tree at
// increasing delays. Each run ends in one of four ways: killed by the
// signal before main handles it, having done nothing; or, saying which: an
// interrupt while reading changes nothing (exit 2); one while writing lets
// the run finish the tree, exactly as an uninterrupted run leaves it, and
// exits 130 (128 + SIGINT) so that a script sees it; a run the signal came
// too late for exits 0.
func TestInterruptDuringApplyOnTree(t *testing.T) {
	apply, dir, want, took := treeApplyReference(t)

	const tries = 12
	delay := func(i int) time.Duration { return took * time.Duration(i+4) / (tries + 4) }
	seen := map[int]int{}
	for i := range tries {
		root := filepath.Join(dir, fmt.Sprint(i), "target")
		fileList := killTree(t, root)
		before := listing(t, root)
		cmd := apply(root, fileList)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay(i))
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		seen[code]++
		got := listing(t, root)
		switch msg := stderr.String(); {
		case strings.Contains(msg, "interrupted while writing; finished the changes"):
			if code != 130 {
				t.Errorf("interrupted while writing at %v: exit %d, want 130: %s", delay(i), code, msg)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("interrupted while writing at %v: the tree differs from an uninterrupted run's (-want +got):\n%s", delay(i), d)
			}
		case strings.Contains(msg, "interrupted; nothing was written"):
			if code != 2 {
				t.Errorf("interrupted while reading at %v: exit %d, want 2: %s", delay(i), code, msg)
			}
			if d := cmp.Diff(before, got); d != "" {
				t.Errorf("interrupted while reading at %v: the tree changed (-before +after):\n%s", delay(i), d)
			}
		case cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled():
			// The signal came before main set up its handler (a loaded
			// machine starts the binary slowly): ended before any work.
			if d := cmp.Diff(before, got); d != "" {
				t.Errorf("ended by the signal at %v: the tree changed (-before +after):\n%s", delay(i), d)
			}
		default:
			if code != 0 || msg != "" {
				t.Errorf("at %v: exit %d, stderr %q; want an interrupt's message or a clean run", delay(i), code, msg)
			}
		}
		os.RemoveAll(filepath.Dir(root))
	}
	// Where the signals land depends on the machine's load, as for the kills.
	t.Logf("an uninterrupted run took %v; exit codes of the interrupted runs: %v", took, seen)
}
