package trim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
)

// killTarget builds, at root, the bundled example target plus files that
// make apply do every kind of change it makes to a tree: strip a file and
// a directory with its contents, defer (into a new directory, and next to
// an earlier deferred copy), relocate into an existing directory and into
// a new one, drop a relocation whose destination exists, add, template,
// and the index. big adds 400 files no rule touches, a
// directory of 120 leftovers to strip, and dozens of *.mk_disabled files.
// Every entry gets its own mtime, all in 2025: anything a killed run
// leaves newer, or a lost directory mtime, shows in a listing.
// It returns the ownership data, as Buildroot's packages-file-list.txt.
func killTarget(t *testing.T, root string, big bool) *owners.Table {
	t.Helper()
	if err := archivetest.CopyTree(filepath.Join("..", "..", "examples", "minikube", "target"), root); err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join("..", "..", "examples", "minikube", "packages-file-list.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fileList := string(list)
	write := func(owner, name, data string, mode uint32) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			fileList += owner + ",./" + name + "\n"
		}
	}
	// cri-docker.socket relocates into usr/lib/systemd/system, where the
	// package's own copy is not.
	if err := os.Remove(filepath.Join(root, "usr/lib/systemd/system/cri-docker.socket")); err != nil {
		t.Fatal(err)
	}
	write("containerd-bin", "etc/cni/net.d/10-containerd-net.conflist", `{"cniVersion":"1.0.0","name":"containerd-net","plugins":[{"type":"bridge","bridge":"cni0"}]}`+"\n", 0o644)
	write("crio-bin", "etc/cni/net.d/200-loopback.conf", `{"cniVersion":"0.3.1","name":"crio-lo","type":"loopback"}`+"\n", 0o640)
	write("crio-bin", "etc/cni/net.d/100-crio-bridge.conflist", `{"cniVersion":"0.3.1","name":"crio","plugins":[]}`+"\n", 0o644)
	write("buildkit-bin", "etc/buildkit/cni.json", `{"cniVersion":"0.4.0","name":"buildkit"}`+"\n", 0o600)
	write("crio-bin", "etc/crictl.yaml", `runtime-endpoint: "unix:///var/run/crio/crio.sock"`+"\n", 0o644)
	write("containerd-bin", "etc/systemd/system/containerd.service", "[Service]\nExecStart=/usr/local/bin/containerd\n", 0o644)
	write("cri-dockerd", "etc/systemd/system/cri-docker.socket", "[Socket]\nListenStream=%t/cri-dockerd.sock\n", 0o644)
	write("crio-bin", "usr/local/lib/systemd/system/crio.service", "[Service]\nExecStart=/usr/local/bin/crio\n", 0o644)
	write("", "etc/cni/net.d/87-podman-bridge.conflist.mk_disabled", `{"name":"podman"}`+"\n", 0o644)
	write("", "etc/cni/net.mk/1-k8s.conflist", `{"name":"k8s"}`+"\n", 0o644)
	write("", "etc/cni/net.mk/old/87-podman.conflist", `{"name":"podman"}`+"\n", 0o644)
	if err := os.Symlink("../net.d/.keep", filepath.Join(root, "etc/cni/net.mk/keep")); err != nil {
		t.Fatal(err)
	}
	if big {
		for d := range 10 {
			for f := range 40 {
				write("", fmt.Sprintf("usr/lib/gen/d%02d/f%02d.so", d, f), strings.Repeat(fmt.Sprintf("%d/%d ", d, f), 20+f), 0o644+uint32(f%2)*0o111)
			}
		}
		for i := range 30 {
			write("", fmt.Sprintf("etc/cni/net.d/%02d-bridge.conflist.mk_disabled", i), fmt.Sprintf(`{"name":"old%d"}`+"\n", i), 0o644)
		}
		for d := range 6 {
			for f := range 20 {
				write("", fmt.Sprintf("etc/cni/net.mk/sub%d/%02d.conf", d, f), fmt.Sprintf(`{"n":%d}`+"\n", f), 0o644)
			}
		}
		write("", "usr/bin/suid", "setuid\n", 0o4755)
		if err := os.Link(filepath.Join(root, "usr/bin/suid"), filepath.Join(root, "usr/bin/suid-link")); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(root, "usr/lib/gen/fifo"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, "usr/lib/gen"), 0o777|fs.ModeSticky); err != nil {
			t.Fatal(err)
		}
	}
	// A distinct mtime for every entry, newest last in walk order.
	mt := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var paths []string
	err = filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		ts := unix.NsecToTimespec(mt.Add(time.Duration(i)*time.Minute + time.Duration(i)*time.Microsecond).UnixNano())
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
	table := owners.New()
	if err := table.ParseFileList(strings.NewReader(fileList), "packages-file-list.txt"); err != nil {
		t.Fatal(err)
	}
	return table
}

// copyExact copies the tree src to dst with everything listTree shows:
// modes, table, mtimes (symlinks' too), fifos and hard links.
func copyExact(t *testing.T, src, dst string) {
	t.Helper()
	links := map[uint64]string{}
	var entries []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		perm := st.Mode &^ unix.S_IFMT
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			err = unix.Mkdir(to, 0o700)
		case unix.S_IFLNK:
			var target string
			if target, err = os.Readlink(p); err == nil {
				err = os.Symlink(target, to)
			}
		case unix.S_IFIFO:
			err = unix.Mkfifo(to, 0o600)
		case unix.S_IFREG:
			if first, ok := links[st.Ino]; ok && st.Nlink > 1 {
				return os.Link(first, to)
			}
			links[st.Ino] = to
			var data []byte
			if data, err = os.ReadFile(p); err == nil {
				err = os.WriteFile(to, data, 0o600)
			}
		default:
			return fmt.Errorf("%s: unexpected type %o", p, st.Mode)
		}
		if err != nil {
			return err
		}
		if err := unix.Lchown(to, int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			if err := unix.Chmod(to, perm); err != nil {
				return err
			}
		}
		entries = append(entries, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Times last, when nothing is created in the directories any more.
	for _, rel := range entries {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(src, rel), &st); err != nil {
			t.Fatal(err)
		}
		ts := []unix.Timespec{st.Atim, st.Mtim}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(dst, rel), ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
}

// listTree describes every entry under root (archivetest.TreeListing).
func listTree(t *testing.T, root string) []string {
	t.Helper()
	lines, err := archivetest.TreeListing(root)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// errKilled is what the test hook panics with to stop a run after a given
// number of steps, as SIGKILL would: nothing of ApplyDir runs after it
// but deferred closes.
var errKilled = errors.New("killed by the test")

// stops holds, for each tree a test is applying to, the step before which
// the run stops, and counts its steps.
var stops sync.Map // root -> *stopAt

type stopAt struct{ stop, steps int }

func init() {
	beforeStep = func(root string) {
		s, ok := stops.Load(root)
		if !ok {
			return
		}
		at := s.(*stopAt)
		if at.steps == at.stop {
			panic(errKilled)
		}
		at.steps++
	}
}

// applyKilled runs ApplyDir and stops it before its step number stop
// (counting from 0), or not at all if stop < 0. It returns the number of
// steps the run took and whether it was stopped.
func applyKilled(root string, opt Options, stop int) (steps int, killed bool, err error) {
	at := &stopAt{stop: stop}
	stops.Store(root, at)
	defer func() {
		stops.Delete(root)
		steps = at.steps
		if r := recover(); r != nil {
			if r != errKilled {
				panic(r)
			}
			killed = true
		}
	}()
	_, err = ApplyDir(context.Background(), root, opt, false)
	return 0, false, err
}

// TestApplyDirKilledAtEveryStep stops apply on a tree before each of its
// steps in turn, as a kill would, then runs it again: every rerun must
// leave exactly the tree an uninterrupted run leaves (names, types,
// modes, owners, contents, mtimes, symlink targets), with and without
// SOURCE_DATE_EPOCH, also when the rerun is killed too.
func TestApplyDirKilledAtEveryStep(t *testing.T) {
	syncWrites = false
	t.Cleanup(func() { syncWrites = true })
	set := shippedRules(t)
	epoch := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		big   bool
		epoch *time.Time
	}{
		{"example", false, nil},
		{"example-epoch", false, &epoch},
		{"big", true, nil},
		{"big-epoch", true, &epoch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			base := filepath.Join(dir, "base")
			opt := Options{Set: set, Owners: killTarget(t, base, tc.big), Epoch: tc.epoch}
			build := func(name string) (string, Options) {
				root := filepath.Join(dir, name)
				copyExact(t, base, root)
				return root, opt
			}
			ref, opt := build("ref")
			steps, _, err := applyKilled(ref, opt, -1)
			if err != nil {
				t.Fatal(err)
			}
			want := listTree(t, ref)
			if steps < 20 {
				t.Fatalf("an uninterrupted run took %d steps; the fixture should need many more", steps)
			}
			t.Logf("%d entries, %d steps", len(want), steps)
			if again, _, err := applyKilled(ref, opt, -1); again != 0 || err != nil {
				t.Errorf("a second uninterrupted run took %d steps (err %v), want none", again, err)
			}
			// Every step of the example; some 30 of the big tree's, spread
			// over all its phases.
			stride := 1
			if tc.big {
				stride = max(1, steps/30)
			}
			var failed []string
			for k := 0; k < steps; k += stride {
				root, opt := build(fmt.Sprintf("k%d", k))
				if _, killed, err := applyKilled(root, opt, k); !killed {
					t.Fatalf("run stopping before step %d of %d was not stopped (err %v)", k, steps, err)
				}
				var err error
				// Every third rerun is killed too, halfway.
				if k%3 == 0 {
					_, _, err = applyKilled(root, opt, k/2)
				}
				if err == nil {
					_, _, err = applyKilled(root, opt, -1)
				}
				if err != nil {
					failed = append(failed, fmt.Sprint(k))
					if len(failed) == 1 {
						t.Errorf("killed before step %d of %d, the rerun fails: %v", k, steps, err)
					}
				} else if d := cmp.Diff(want, listTree(t, root)); d != "" {
					failed = append(failed, fmt.Sprint(k))
					if len(failed) == 1 {
						t.Errorf("killed before step %d of %d, the rerun left another tree than an uninterrupted run (-want +got):\n%s", k, steps, d)
					}
				}
				checkNoJournal(t, root)
				if err := os.RemoveAll(root); err != nil {
					t.Fatal(err)
				}
			}
			if len(failed) > 0 {
				t.Errorf("reruns after %d of %d kill points fail or differ: before steps %s", len(failed), (steps+stride-1)/stride, strings.Join(failed, " "))
			}
		})
	}
}

// checkNoJournal checks that nothing but the tree is left in the
// directory that holds it.
func checkNoJournal(t *testing.T, root string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(root))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "."+filepath.Base(root)+".") {
			t.Errorf("%s left beside the tree", e.Name())
		}
	}
}

// TestApplyDirReinstalledFiles is `make containerd-bin-rebuild` (or podman's)
// after an apply: Buildroot installs the package's files into the target
// again, deferred and relocated ones included, and the next make runs apply
// on that. It must apply again: a file equal to the copy apply made is
// taken away again and the tree ends as after the first apply; a changed
// file (the package was bumped) replaces the copy, and the index records
// its new sha256.
func TestApplyDirReinstalledFiles(t *testing.T) {
	set := shippedRules(t)
	const (
		conflist = "etc/cni/net.d/10-containerd-net.conflist"
		deferred = "usr/share/minikube/deferred/containerd+none/etc/cni/net.d/10-containerd-net.conflist"
		podman   = "etc/cni/net.d/87-podman-bridge.conflist"
		moved    = "etc/containers/net.d/87-podman-bridge.conflist"
	)
	for _, epoch := range []*time.Time{nil, ptr(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))} {
		t.Run(fmt.Sprintf("epoch=%v", epoch != nil), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "target")
			opt := Options{Set: set, Owners: killTarget(t, root, false), Epoch: epoch}
			orig := map[string]fs.FileInfo{}
			for _, p := range []string{conflist, podman} {
				fi, err := os.Lstat(filepath.Join(root, p))
				if err != nil {
					t.Fatal(err)
				}
				orig[p] = fi
			}
			apply := func() *Report {
				t.Helper()
				rep, err := ApplyDir(context.Background(), root, opt, false)
				if err != nil {
					t.Fatalf("apply: %v", err)
				}
				return rep
			}
			apply()
			first := listTree(t, root)
			netd, err := os.Lstat(filepath.Join(root, "etc/cni/net.d"))
			if err != nil {
				t.Fatal(err)
			}
			// Buildroot installs the package's files again: the same
			// bytes, mode and mtime as they had before apply took them.
			reinstall := func(p, data string, mtime time.Time) {
				t.Helper()
				full := filepath.Join(root, p)
				if err := os.WriteFile(full, []byte(data), orig[p].Mode()); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(full, mtime, mtime); err != nil {
					t.Fatal(err)
				}
				// As the first apply did, the test keeps the directory's
				// mtime; Buildroot's install changes it.
				if err := os.Chtimes(filepath.Join(root, "etc/cni/net.d"), netd.ModTime(), netd.ModTime()); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{conflist, podman} {
				to := map[string]string{conflist: deferred, podman: moved}[p]
				data, err := os.ReadFile(filepath.Join(root, to))
				if err != nil {
					t.Fatal(err)
				}
				reinstall(p, string(data), orig[p].ModTime())
			}
			rep := apply()
			if d := cmp.Diff(first, listTree(t, root)); d != "" {
				t.Errorf("after reinstalling the same files, apply left another tree than the first apply (-first +now):\n%s", d)
			}
			var kinds []string
			for _, c := range rep.Changes {
				kinds = append(kinds, string(c.Kind)+" "+c.Path)
			}
			if d := cmp.Diff([]string{"deferred " + conflist, "relocated " + podman}, kinds); d != "" {
				t.Errorf("changes (-want +got):\n%s", d)
			}

			// The packages were bumped: new content, a newer mtime.
			newer := orig[conflist].ModTime().Add(48 * time.Hour)
			bumped := map[string]string{conflist: `{"cniVersion":"1.0.0","name":"containerd-net","plugins":[]}` + "\n", podman: `{"cniVersion":"0.4.0","name":"podman","plugins":[]}` + "\n"}
			for p, data := range bumped {
				reinstall(p, data, newer)
			}
			apply()
			for p, to := range map[string]string{conflist: deferred, podman: moved} {
				if _, err := os.Lstat(filepath.Join(root, p)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is still in etc/cni/net.d (err %v)", p, err)
				}
				got, err := os.ReadFile(filepath.Join(root, to))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != bumped[p] {
					t.Errorf("%s holds %q, want the reinstalled %q", to, got, bumped[p])
				}
				fi, err := os.Lstat(filepath.Join(root, to))
				if err != nil {
					t.Fatal(err)
				}
				if !fi.ModTime().Equal(newer) || fi.Mode() != orig[p].Mode() {
					t.Errorf("%s: mtime %v mode %v, want the reinstalled file's %v %v", to, fi.ModTime(), fi.Mode(), newer, orig[p].Mode())
				}
			}
			index, err := os.ReadFile(filepath.Join(root, "usr/share/minikube/rootfs-trim/index.json"))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(bumped[conflist]))
			if !strings.Contains(string(index), hex.EncodeToString(sum[:])) {
				t.Errorf("the index does not record the new sha256 of %s:\n%s", deferred, index)
			}
			before := listTree(t, root)
			if rep := apply(); len(rep.Changes) != 0 {
				t.Errorf("a further apply changed %+v", rep.Changes)
			}
			if d := cmp.Diff(before, listTree(t, root)); d != "" {
				t.Errorf("a further apply changed the tree (-before +after):\n%s", d)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// The rules the fixture relies on are the shipped ones: fail loudly if
// they stop covering what the kill test means to exercise.
func TestKillTargetCoversEveryChange(t *testing.T) {
	set := shippedRules(t)
	root := filepath.Join(t.TempDir(), "target")
	rep, err := ApplyDir(context.Background(), root, Options{Set: set, Owners: killTarget(t, root, false)}, true)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, c := range rep.Changes {
		kinds[string(c.Kind)]++
	}
	for _, k := range []string{"removed", "deferred", "relocated", "added", "template", "created"} {
		if kinds[k] == 0 {
			t.Errorf("no %s change in the fixture: %v", k, kinds)
		}
	}
}

// TestApplyDirJournalOfAnotherTree: a journal a killed run left for a tree
// that was since removed and made again (Buildroot's make clean keeps what
// is beside the target) is not used, and goes; one that cannot be read
// stops apply before anything changes.
func TestApplyDirJournalOfAnotherTree(t *testing.T) {
	set := shippedRules(t)
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	opt := Options{Set: set, Owners: killTarget(t, ref, false)}
	if _, err := ApplyDir(context.Background(), ref, opt, false); err != nil {
		t.Fatal(err)
	}
	want := listTree(t, ref)

	root := filepath.Join(dir, "target")
	killTarget(t, root, false)
	jpath := filepath.Join(dir, ".target.rootfs-trim-journal")
	stale := `{"version":1,"dev":1,"ino":2,"epoch_ns":0,"dirs":{"etc":0,"usr/share":0},"temps":["etc/hostname"]}`
	if err := os.WriteFile(jpath, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyDir(context.Background(), root, opt, false); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, listTree(t, root)); d != "" {
		t.Errorf("with another tree's journal beside it (-want +got):\n%s", d)
	}
	checkNoJournal(t, root)

	other := filepath.Join(dir, "other")
	killTarget(t, other, false)
	before := listTree(t, other)
	if err := os.WriteFile(filepath.Join(dir, ".other.rootfs-trim-journal"), []byte(`{"version":1,"dirs":{`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ApplyDir(context.Background(), other, opt, false)
	if err == nil || !strings.Contains(err.Error(), ".other.rootfs-trim-journal") {
		t.Errorf("a truncated journal: err = %v, want one naming it", err)
	}
	if d := cmp.Diff(before, listTree(t, other)); d != "" {
		t.Errorf("apply changed the tree although it refused (-before +after):\n%s", d)
	}
}
