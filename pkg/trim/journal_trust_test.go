package trim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// The copy of the test binary that runs in a private mount namespace is
// told the case and the directory to mount its jail on.
const (
	jailCaseEnv = "ROOTFS_TRIM_TEST_JOURNAL_JAIL"
	jailDirEnv  = "ROOTFS_TRIM_TEST_JOURNAL_JAIL_DIR"
	nobody      = 65534
)

// jailStamp is the mtime of the jail's directories: a journal's dirs
// entry that apply obeyed shows as another.
var jailStamp = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// jailCase is one journal left for / in the jail. place puts it there
// (the jail is / by then); forged is the journal, which names the
// canaries in temps and usr/bin in dirs, trusted is one a run of apply
// could have left, with temps and dirs as given. want is what the error
// must say; "" for a journal apply uses (or ignores) without harm.
type jailCase struct {
	name  string
	place func(t *testing.T, j jailJournals)
	want  string
}

// jailJournals writes journals for the tree at / of the jail.
type jailJournals struct{ id treeID }

func (jj jailJournals) data(t *testing.T, dirs map[string]int64, temps ...string) []byte {
	t.Helper()
	if temps == nil {
		temps = []string{}
	}
	data, err := json.Marshal(journal{Version: journalVersion, Dev: jj.id.dev, Ino: jj.id.ino, BtimeNs: jj.id.btimeNs, Dirs: dirs, Temps: temps})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// forged is the journal of the issue: it would remove the canaries and
// give usr/bin the mtime 1970.
func (jj jailJournals) forged(t *testing.T) []byte {
	return jj.data(t, map[string]int64{"usr/bin": 0}, "canary/precious", "etc/passwd")
}

// besideForged is the journal for a tree beside which it lies: it
// would remove the tree's canary and give usr/bin the mtime 1970.
func besideForged(t *testing.T, j jailJournals) []byte {
	return j.data(t, map[string]int64{"usr/bin": 0}, "canary")
}

// ownDir makes apply's own directory for the journal of / with owner
// uid and mode.
func ownDir(t *testing.T, parent string, uid int, mode os.FileMode) string {
	t.Helper()
	d := filepath.Join(parent, fmt.Sprintf("rootfs-trim.%d", os.Geteuid()))
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, uid, uid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, mode); err != nil {
		t.Fatal(err)
	}
	return d
}

// put writes data at name with owner uid and mode.
func put(t *testing.T, name string, data []byte, uid int, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(name, uid, uid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
}

// linkTo writes data, owned by root, mode 0600, at target, and makes name
// a link to it with link (os.Symlink, os.Link).
func linkTo(t *testing.T, link func(string, string) error, target, name string, data []byte) {
	t.Helper()
	put(t, target, data, 0, 0o600)
	if err := link(target, name); err != nil {
		t.Fatal(err)
	}
}

func jailCases() []jailCase {
	const own = "/tmp/rootfs-trim.0/journal-of-root"
	return []jailCase{
		{"symlink", func(t *testing.T, j jailJournals) {
			ownDir(t, "/tmp", 0, 0o700)
			linkTo(t, os.Symlink, "/canary/journal", own, j.forged(t))
		}, own + ": not trusted as the journal of an interrupted apply: a symlink"},
		{"foreign-owner", func(t *testing.T, j jailJournals) {
			ownDir(t, "/tmp", 0, 0o700)
			put(t, own, j.forged(t), nobody, 0o600)
		}, own + ": not trusted as the journal of an interrupted apply: owned by uid 65534, not by uid 0 running apply"},
		{"world-writable", func(t *testing.T, j jailJournals) {
			ownDir(t, "/tmp", 0, 0o700)
			put(t, own, j.forged(t), 0, 0o666)
		}, own + ": not trusted as the journal of an interrupted apply: mode 0666: writable by others than its owner"},
		{"hard-linked", func(t *testing.T, j jailJournals) {
			ownDir(t, "/tmp", 0, 0o700)
			linkTo(t, os.Link, "/canary/journal", own, j.forged(t))
		}, own + ": not trusted as the journal of an interrupted apply: it has 2 hard links"},
		{"dir-of-nobody", func(t *testing.T, j jailJournals) {
			// /tmp is sticky, open to all: anyone can make the directory first.
			ownDir(t, "/tmp", nobody, 0o700)
			put(t, own, j.forged(t), 0, 0o600)
		}, "/tmp/rootfs-trim.0: not trusted as the journal of an interrupted apply: owned by uid 65534, not by uid 0 running apply"},
		{"dir-open-to-all", func(t *testing.T, j jailJournals) {
			ownDir(t, "/tmp", 0, 0o777)
			put(t, own, j.forged(t), 0, 0o600)
		}, "/tmp/rootfs-trim.0: not trusted as the journal of an interrupted apply: mode 0777; apply makes it 0700"},
		{"dir-is-symlink", func(t *testing.T, j jailJournals) {
			if err := os.Mkdir("/canary/dir", 0o700); err != nil {
				t.Fatal(err)
			}
			put(t, "/canary/dir/journal-of-root", j.forged(t), 0, 0o600)
			if err := os.Symlink("/canary/dir", "/tmp/rootfs-trim.0"); err != nil {
				t.Fatal(err)
			}
		}, "/tmp/rootfs-trim.0: not trusted as the journal of an interrupted apply: not a directory"},
		{"temps-not-a-temp-name", func(t *testing.T, j jailJournals) {
			ownDir(t, "/tmp", 0, 0o700)
			put(t, own, j.data(t, nil, "canary/precious"), 0, 0o600)
		}, own + `: refusing the journal: temps entry canary/precious is not a temporary name apply makes (.NAME.rootfs-trim-apply.tmp); nothing changed`},
		{"temps-beside-no-planned-path", func(t *testing.T, j jailJournals) {
			ownDir(t, "/tmp", 0, 0o700)
			put(t, own, j.data(t, nil, "canary/.precious.rootfs-trim-apply.tmp"), 0, 0o600)
		}, own + `: refusing the journal: temps entry canary/.precious.rootfs-trim-apply.tmp is beside canary/precious, which no rule matches and apply does not add; nothing changed`},
		{"dirs-above-no-planned-path", func(t *testing.T, j jailJournals) {
			ownDir(t, "/tmp", 0, 0o700)
			put(t, own, j.data(t, map[string]int64{"usr/bin": 0}), 0, 0o600)
		}, own + `: refusing the journal: dirs entry usr/bin holds no path the rules match or apply adds; nothing changed`},
		{"in-run", func(t *testing.T, j jailJournals) {
			// With a /run only root can write, the journal of / is there.
			if err := os.Mkdir("/run", 0o755); err != nil {
				t.Fatal(err)
			}
			ownDir(t, "/run", 0, 0o700)
			put(t, "/run/rootfs-trim.0/journal-of-root", j.forged(t), nobody, 0o600)
		}, "/run/rootfs-trim.0/journal-of-root: not trusted as the journal of an interrupted apply: owned by uid 65534"},
		{"where-it-was", func(t *testing.T, j jailJournals) {
			// The issue's own file, where the journal of / used to be:
			// nothing reads it now.
			put(t, "/tmp/.rootfs-trim-journal-of-root", j.forged(t), nobody, 0o644)
		}, ""},
		{"empty-dir-left", func(t *testing.T, j jailJournals) {
			// A kill after the journal went, before its directory did.
			ownDir(t, "/tmp", 0, 0o700)
		}, ""},
		{"killed", nil, ""}, // see killInJail
		{"trusted", func(t *testing.T, j jailJournals) {
			// What a killed run leaves: a temporary crictl.yaml (a path the
			// rules match) and the mtime of etc. apply finishes it.
			ownDir(t, "/tmp", 0, 0o700)
			put(t, "/etc/.crictl.yaml.rootfs-trim-apply.tmp", []byte("x\n"), 0, 0o600)
			put(t, own, j.data(t, map[string]int64{"etc": jailStamp.Add(time.Hour).UnixNano()}, "etc/.crictl.yaml.rootfs-trim-apply.tmp"), 0, 0o600)
		}, ""},
	}
}

// TestForgedJournalInJail is the attack on `apply /` (a RUN of a
// Dockerfile), each case in a jail of its own: a tmpfs, in a private mount
// namespace (unshare(1), as root), that a second run of this test binary
// chroots into. The jail's canaries (/canary/precious, /etc/passwd, the
// mtime of /usr/bin) must survive every journal; a journal not trusted or
// naming what apply would not touch is refused with an error naming it,
// and the tree is left exactly as it was.
func TestForgedJournalInJail(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a jail (tmpfs, chroot) and files of another owner need root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare(1) is not installed")
	}
	for _, c := range jailCases() {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0], "-test.run=^TestJournalJailHelper$", "-test.v")
			cmd.Env = append(os.Environ(), jailCaseEnv+"="+c.name, jailDirEnv+"="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestJournalJailHelper") {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Logf("%s", out)
		})
	}
}

// TestJournalJailHelper runs only under TestForgedJournalInJail.
func TestJournalJailHelper(t *testing.T) {
	name, dir := os.Getenv(jailCaseEnv), os.Getenv(jailDirEnv)
	if name == "" {
		t.Skip("run by TestForgedJournalInJail")
	}
	var c *jailCase
	for _, jc := range jailCases() {
		if jc.name == name {
			c = &jc
		}
	}
	if c == nil {
		t.Fatalf("no case %q", name)
	}
	set := shippedRules(t) // read whole, before the chroot
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"tmp", "etc", "canary", "usr/bin"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "tmp"), 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(dir, "etc/passwd"), []byte("root:x:0:0::/root:/bin/sh\n"), 0, 0o644)
	put(t, filepath.Join(dir, "canary/precious"), []byte("secret\n"), 0, 0o600)
	put(t, filepath.Join(dir, "canary/.precious.rootfs-trim-apply.tmp"), []byte("secret too\n"), 0, 0o600)
	put(t, filepath.Join(dir, "usr/bin/busybox"), []byte("busybox\n"), 0, 0o755)
	if err := syscall.Chroot(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir("/"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", "") // as in a RUN of a Dockerfile: /tmp
	id, err := identify("/")
	if err != nil {
		t.Fatal(err)
	}
	if c.place == nil {
		killInJail(t, set)
		return
	}
	c.place(t, jailJournals{id})
	for _, d := range []string{"usr/bin", "etc", "canary"} {
		if err := os.Chtimes(d, jailStamp, jailStamp); err != nil {
			t.Fatal(err)
		}
	}
	before := listTree(t, "/")

	table := owners.New()
	table.Fixed = "busybox"
	rep, err := ApplyDir(context.Background(), "/", Options{Set: set, Owners: table}, false)
	t.Logf("apply /: %v", err)
	for name, want := range map[string]string{"/canary/precious": "secret\n", "/etc/passwd": "root:x:0:0::/root:/bin/sh\n", "/usr/bin/busybox": "busybox\n"} {
		if got, err := os.ReadFile(name); err != nil || string(got) != want {
			t.Errorf("canary %s: %q, %v; want %q", name, got, err, want)
		}
	}
	if fi, err := os.Lstat("/usr/bin"); err != nil || !fi.ModTime().Equal(jailStamp) {
		t.Errorf("canary /usr/bin: mtime %v (err %v), want %v", fi.ModTime(), err, jailStamp)
	}
	if c.want != "" {
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("apply / with that journal: err %v, want one saying %q", err, c.want)
		}
		if d := cmp.Diff(before, listTree(t, "/")); d != "" {
			t.Errorf("apply refused the journal but changed the tree (-before +after):\n%s", d)
		}
		return
	}
	if err != nil {
		t.Fatalf("apply /: %v", err)
	}
	if c.name == "empty-dir-left" {
		if _, err := os.Lstat("/tmp/rootfs-trim.0"); err == nil {
			t.Error("apply left its own empty directory for the journal in /tmp")
		}
	}
	if c.name != "trusted" {
		return
	}
	if !rep.Resumed {
		t.Error("apply did not finish the interrupted run its journal records")
	}
	if _, err := os.Lstat("/etc/.crictl.yaml.rootfs-trim-apply.tmp"); err == nil {
		t.Error("the killed run's temporary file is still there")
	}
	if fi, err := os.Lstat("/etc"); err != nil || !fi.ModTime().Equal(jailStamp.Add(time.Hour)) {
		t.Errorf("/etc: mtime %v (err %v), want the journal's %v", fi.ModTime(), err, jailStamp.Add(time.Hour))
	}
	if _, err := os.Lstat("/tmp/rootfs-trim.0"); err == nil {
		t.Error("apply's own directory for the journal is left in /tmp")
	}
}

// TestJournalBesideTreeTrusted: beside a tree (Buildroot's output/target),
// the journal and the directory holding it are checked as for /: a
// journal anyone but the user running apply can have written, or a
// directory in which someone else could swap it, is refused and the tree
// left as it was; a directory of the user's (or root's), sticky, or
// writable by the user's own group, is used. The name the journal is
// written under first is never written through (a hard link to a canary
// planted in a sticky directory).
func TestJournalBesideTreeTrusted(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("files of another owner need root")
	}
	set := shippedRules(t)
	const (
		journalName = ".target.rootfs-trim-journal"
		refused     = "not trusted as the journal of an interrupted apply"
	)
	for _, c := range []struct {
		name      string
		dirMode   os.FileMode
		dirOwner  int
		dirGroup  int
		place     func(t *testing.T, parent string, j jailJournals)
		want      string
		canaryTmp bool // a hard link to the canary at the journal's temporary name
	}{
		{name: "foreign-owner", dirMode: 0o755, place: func(t *testing.T, parent string, j jailJournals) {
			put(t, filepath.Join(parent, journalName), besideForged(t, j), nobody, 0o600)
		}, want: journalName + ": " + refused + ": owned by uid 65534"},
		{name: "symlink", dirMode: 0o755, place: func(t *testing.T, parent string, j jailJournals) {
			linkTo(t, os.Symlink, filepath.Join(parent, "elsewhere"), filepath.Join(parent, journalName), besideForged(t, j))
		}, want: journalName + ": " + refused + ": a symlink"},
		{name: "hard-linked", dirMode: 0o755, place: func(t *testing.T, parent string, j jailJournals) {
			linkTo(t, os.Link, filepath.Join(parent, "elsewhere"), filepath.Join(parent, journalName), besideForged(t, j))
		}, want: journalName + ": " + refused + ": it has 2 hard links"},
		{name: "group-writable", dirMode: 0o755, place: func(t *testing.T, parent string, j jailJournals) {
			put(t, filepath.Join(parent, journalName), besideForged(t, j), 0, 0o620)
		}, want: journalName + ": " + refused + ": mode 0620"},
		{name: "temps-not-a-temp-name", dirMode: 0o755, place: func(t *testing.T, parent string, j jailJournals) {
			put(t, filepath.Join(parent, journalName), j.data(t, nil, "canary"), 0, 0o600)
		}, want: journalName + ": refusing the journal: temps entry canary is not a temporary name apply makes"},
		{name: "temps-beside-no-planned-path", dirMode: 0o755, place: func(t *testing.T, parent string, j jailJournals) {
			put(t, filepath.Join(parent, "target/.canary.rootfs-trim-apply.tmp"), []byte("secret\n"), 0, 0o600)
			put(t, filepath.Join(parent, journalName), j.data(t, nil, ".canary.rootfs-trim-apply.tmp"), 0, 0o600)
		}, want: journalName + ": refusing the journal: temps entry .canary.rootfs-trim-apply.tmp is beside canary, which no rule matches"},
		{name: "dirs-above-no-planned-path", dirMode: 0o755, place: func(t *testing.T, parent string, j jailJournals) {
			put(t, filepath.Join(parent, journalName), j.data(t, map[string]int64{"usr/bin": 0}), 0, 0o600)
		}, want: journalName + ": refusing the journal: dirs entry usr/bin holds no path the rules match or apply adds"},
		{name: "dir-of-nobody", dirMode: 0o755, dirOwner: nobody, want: refused + ": the directory is owned by uid 65534"},
		{name: "dir-open-to-all", dirMode: 0o777, want: refused + ": the directory is writable by anyone and not sticky"},
		{name: "dir-of-another-group", dirMode: 0o775, dirGroup: nobody, want: refused + ": the directory is writable by group 65534 and not sticky"},
		{name: "dir-of-own-group", dirMode: 0o775},
		{name: "sticky", dirMode: 0o777 | os.ModeSticky, canaryTmp: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "out")
			root := filepath.Join(parent, "target")
			opt := Options{Set: set, Owners: killTarget(t, root, false)}
			put(t, filepath.Join(root, "canary"), []byte("secret\n"), 0, 0o600)
			canary := filepath.Join(t.TempDir(), "canary")
			put(t, canary, []byte("secret\n"), 0, 0o600)
			if c.canaryTmp {
				if err := os.Link(canary, filepath.Join(parent, journalName+".tmp")); err != nil {
					t.Fatal(err)
				}
			}
			id, err := identify(root)
			if err != nil {
				t.Fatal(err)
			}
			if c.place != nil {
				c.place(t, parent, jailJournals{id})
			}
			if err := os.Chown(parent, c.dirOwner, c.dirGroup); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(parent, c.dirMode); err != nil {
				t.Fatal(err)
			}
			before := listTree(t, root)
			_, err = ApplyDir(context.Background(), root, opt, false)
			canaries := []string{filepath.Join(root, "canary"), canary}
			if c.name == "temps-beside-no-planned-path" {
				canaries = append(canaries, filepath.Join(root, ".canary.rootfs-trim-apply.tmp"))
			}
			for _, p := range canaries {
				if got, rerr := os.ReadFile(p); rerr != nil || string(got) != "secret\n" {
					t.Errorf("canary %s: %q, %v", p, got, rerr)
				}
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("apply: %v", err)
				}
				checkNoJournal(t, root)
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("apply: err %v, want one saying %q", err, c.want)
			}
			if d := cmp.Diff(before, listTree(t, root)); d != "" {
				t.Errorf("apply refused but changed the tree (-before +after):\n%s", d)
			}
		})
	}
}

// killInJail stops apply / in the jail after it wrote its journal, as a
// kill would: the journal is in apply's own directory, made 0700, itself
// 0600, both root's; the next run trusts it, finishes, and both go.
func killInJail(t *testing.T, set *rules.Set) {
	put(t, "/etc/crictl.yaml", []byte("runtime-endpoint: unix:///var/run/crio/crio.sock\n"), 0, 0o644)
	table := owners.New()
	table.Fixed = "crio-bin"
	opt := Options{Set: set, Owners: table}
	if _, killed, err := applyKilled("/", opt, 1); !killed {
		t.Fatalf("apply / was not stopped (err %v)", err)
	}
	for name, want := range map[string]os.FileMode{"/tmp/rootfs-trim.0": os.ModeDir | 0o700, "/tmp/rootfs-trim.0/journal-of-root": 0o600} {
		fi, err := os.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want || fi.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("%s: mode %v, uid %d; want %v, root's", name, fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid, want)
		}
	}
	if _, _, err := applyKilled("/", opt, -1); err != nil {
		t.Fatalf("the rerun: %v", err)
	}
	for _, gone := range []string{"/etc/crictl.yaml", "/tmp/rootfs-trim.0"} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is still there after the rerun", gone)
		}
	}
}
