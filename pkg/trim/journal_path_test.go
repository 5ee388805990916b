package trim

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// TestJournalPath: the journal sits beside the tree; the live root, which
// has nothing beside it, keeps its journal in a directory of apply's own,
// in /run when root runs apply and /run is root's alone, else in the
// temporary directory (a container build step may have no /run).
func TestJournalPath(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "out", "target"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(tmp, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(tmp, "shared-run")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	own := fmt.Sprintf("rootfs-trim.%d", os.Geteuid())
	inRun := filepath.Join(tmp, own, "journal-of-root")
	if os.Geteuid() == 0 {
		inRun = filepath.Join(run, own, "journal-of-root")
	}
	old := runDir
	t.Cleanup(func() { runDir = old })
	for _, tc := range []struct{ root, run, want string }{
		{filepath.Join(tmp, "out/target"), run, filepath.Join(tmp, "out/.target.rootfs-trim-journal")},
		{filepath.Join(tmp, "out/target") + "/", run, filepath.Join(tmp, "out/.target.rootfs-trim-journal")},
		{"/", run, inRun},
		{"/", filepath.Join(tmp, "none"), filepath.Join(tmp, own, "journal-of-root")},
		{"/", shared, filepath.Join(tmp, own, "journal-of-root")},
	} {
		runDir = tc.run
		jf, err := openJournal(tc.root)
		if err != nil {
			t.Errorf("openJournal(%q) with /run at %s: %v", tc.root, tc.run, err)
			continue
		}
		jf.Close()
		if jf.path != tc.want {
			t.Errorf("openJournal(%q) with /run at %s: journal at %q, want %q", tc.root, tc.run, jf.path, tc.want)
		}
	}
}

// FuzzJournal: whatever a journal holds, decoding it never panics, and a
// journal it accepts for the tree names in temps only apply's own
// temporary names of clean paths, and in dirs only clean paths.
func FuzzJournal(f *testing.F) {
	id := treeID{dev: 1, ino: 2, btimeNs: 3}
	for _, s := range []string{
		`{"version":1,"dev":1,"ino":2,"btime_ns":3,"epoch_ns":0,"dirs":{"etc":5},"temps":["etc/.crictl.yaml.rootfs-trim-apply.tmp"]}`,
		`{"version":1,"dev":1,"ino":2,"btime_ns":3,"epoch_ns":0,"dirs":{"usr/bin":0},"temps":["canary/precious","etc/passwd"]}`,
		`{"version":1,"dev":1,"ino":2,"btime_ns":3,"temps":[".rootfs-trim-apply.tmp","a/..rootfs-trim-apply.tmp","../.x.rootfs-trim-apply.tmp"]}`,
		`{"version":1,"dev":1,"ino":2,"btime_ns":3,"dirs":{"/etc":0,"a//b":0,".":0}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, stale, err := decodeJournal("journal", data, id)
		if err != nil || stale {
			return
		}
		for _, tmp := range j.Temps {
			p, ok := untemp(tmp)
			if !ok || tempName(p) != tmp {
				t.Errorf("accepted temps entry %q (path %q, ok %v)", tmp, p, ok)
			}
			if c, err := pathx.Clean(p); err != nil || c != p {
				t.Errorf("accepted temps entry %q beside an unclean path %q", tmp, p)
			}
		}
		for d := range j.Dirs {
			if c, err := pathx.Clean(d); err != nil || c != d {
				t.Errorf("accepted dirs entry %q", d)
			}
		}
	})
}
