package trim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

func shippedRules(t *testing.T) *rules.Set {
	t.Helper()
	set, err := rules.Load(filepath.Join("..", "..", "rules"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestClassifyAttribution(t *testing.T) {
	set := shippedRules(t)
	table := owners.New()
	err := table.ParseFileList(strings.NewReader(
		"podman,./etc/cni/net.d/87-podman-bridge.conflist\n"+
			"cri-o,./etc/crictl.yaml\n"+
			"crio-bin,./etc/containers/registries.conf\n"+
			"podman,./etc/containers/registries.conf\n"+
			"weird,./etc/cni/net.d/has,comma.conf\n"), "files.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path      string
		table     *owners.Table
		wantRule  string
		wantOwner string
		unhandled bool
		strict    bool // apply --strict: no fallback
	}{
		{"etc/cni/net.d/87-podman-bridge.conflist", table, "podman-bridge", "podman", false, false},
		// cri-o is an alias of crio-bin.
		{"etc/crictl.yaml", table, "crio-crictl", "cri-o", false, false},
		// Two table: the last one wrote it.
		{"etc/containers/registries.conf", table, "", "podman", false, false},
		// Split on the first comma only, as Buildroot's size-stats does.
		// No package rule names it: the shipped fallback strips it, or,
		// strict, it is a new offender.
		{"etc/cni/net.d/has,comma.conf", table, "site-fallback-cni-and-crictl", "weird", false, false},
		{"etc/cni/net.d/has,comma.conf", table, "", "weird", true, true},
		// Owned by no package although tablehip data exists: an overlay.
		{"etc/cni/net.d/10-overlay.conf", table, "", owners.Overlay, true, true},
		// The fallback acts only on what the policy forbids.
		{"etc/cni/net.d/.keep", table, "", owners.Overlay, false, false},
		{"etc/cni/net.d/x.mk_disabled", table, "mk-disabled-leftovers", owners.Overlay, false, false},
		// Without tablehip data, any package's rule may handle a file.
		{"etc/cni/net.d/87-podman-bridge.conflist", nil, "podman-bridge", owners.Unknown, false, false},
		{"etc/cni/net.d/10-containerd-net.conflist", nil, "containerd-net", owners.Unknown, false, false},
	}
	for _, tc := range tests {
		c := NewClassifier(set, tc.table)
		c.Strict = tc.strict
		v, err := c.Classify(&archive.Entry{Name: "./" + tc.path, Type: archive.TypeRegular})
		if err != nil {
			t.Fatal(err)
		}
		rule := ""
		if v.Rule != nil {
			rule = v.Rule.Name
		}
		got := []any{rule, v.Owner(c.Owners), v.Unhandled()}
		want := []any{tc.wantRule, tc.wantOwner, tc.unhandled}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.path, d)
		}
	}
}

// A hard-link group is one unit: when the member that carries the data
// (GNU cpio puts it on the last) is stripped, a kept member gets the data.
func TestStripDataCarryingLinkMember(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(`policy:
  - name: no-x
    forbid: ["etc/x/**"]
    reason: test
`), 0o644)
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(`package: p
rules:
  - name: strip-x
    match: ["etc/x/**"]
    action: strip
    reason: test
`), 0o644)
	set, err := rules.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	mt := time.Unix(1700000000, 0).UTC()
	entries := []*archive.Entry{
		{Name: ".", Type: archive.TypeDir, Mode: 0o755, Nlink: 4, ModTime: mt},
		{Name: "etc", Type: archive.TypeDir, Mode: 0o755, Nlink: 3, ModTime: mt, Inode: 1},
		{Name: "etc/x", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt, Inode: 2},
		{Name: "usr", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt, Inode: 3},
		{Name: "usr/a", Type: archive.TypeRegular, Mode: 0o755, Nlink: 3, Inode: 9, ModTime: mt},
		{Name: "usr/b", Type: archive.TypeRegular, Mode: 0o755, Nlink: 3, Inode: 9, ModTime: mt},
		{Name: "etc/x/c", Type: archive.TypeRegular, Mode: 0o755, Nlink: 3, Inode: 9, ModTime: mt, Size: 5},
	}
	// Put etc/x/c last, as GNU cpio would if it sorted last.
	out, rep := applyHello(t, set, entries)
	if _, err := archivetest.CheckInitramfs(bytes.NewReader(out.Bytes())); err != nil {
		t.Fatalf("kernel rules: %v", err)
	}
	got := map[string]string{}
	links := map[string]uint32{}
	eachCpioEntry(t, out.Bytes(), func(e *archive.Entry, r io.Reader) {
		b, _ := io.ReadAll(r)
		got[e.Name] = string(b)
		links[e.Name] = e.Nlink
	})
	if _, ok := got["etc/x/c"]; ok {
		t.Error("etc/x/c was not stripped")
	}
	if got["usr/a"]+got["usr/b"] != "hello" {
		t.Errorf("the group's data did not move to a kept member: a=%q b=%q", got["usr/a"], got["usr/b"])
	}
	if links["usr/a"] != 2 || links["usr/b"] != 2 {
		t.Errorf("link counts %v, want 2 for the two kept members", links)
	}
	var kinds []string
	for _, c := range rep.Changes {
		kinds = append(kinds, string(c.Kind)+" "+c.Path)
	}
	want := []string{"removed etc/x", "removed etc/x/c", "created usr/share", "created usr/share/minikube",
		"created usr/share/minikube/rootfs-trim", "added usr/share/minikube/rootfs-trim/index.json"}
	if d := cmp.Diff(want, kinds); d != "" {
		t.Errorf("changes (-want +got):\n%s", d)
	}
}

// TestApplyDirEpochPaths: with SOURCE_DATE_EPOCH, ApplyDir reads the tree
// from its directory listings and lstats only what rules touch; without
// it, everything, for the newest mtime. Given the epoch that the newest
// mtime would have been, both must change the tree in exactly the same way.
func TestApplyDirEpochPaths(t *testing.T) {
	set := shippedRules(t)
	mt := time.Unix(1700000000, 0).UTC()
	trees := map[string]*time.Time{"walked": nil, "listed": &mt}
	var digests, reports []string
	for _, name := range []string{"walked", "listed"} {
		root := filepath.Join(t.TempDir(), name)
		if err := archivetest.MakeRootfsTree(root); err != nil {
			t.Fatal(err)
		}
		setMtimes(t, root, mt)
		rep, err := ApplyDir(context.Background(), root, Options{Set: set, Owners: owners.New(), Epoch: trees[name]}, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rep.Changes) == 0 {
			t.Fatalf("%s: no changes; the tree should hold offenders", name)
		}
		var b strings.Builder
		for _, c := range rep.Changes {
			fmt.Fprintf(&b, "%+v\n", c)
		}
		reports = append(reports, b.String())
		d, _, err := TreeDigest(root)
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	if diff := cmp.Diff(reports[0], reports[1]); diff != "" {
		t.Errorf("changes (-walked +listed):\n%s", diff)
	}
	if digests[0] != digests[1] {
		t.Errorf("trees differ after apply: %s vs %s", digests[0], digests[1])
	}
}

// TestApplyDirAgainWithoutEpoch covers a target an earlier apply trimmed,
// without SOURCE_DATE_EPOCH: it is listed by name, and the mtimes are read
// only when something is written, which must then still get the newest
// mtime of the whole tree, not of the entries a rule touched.
func TestApplyDirAgainWithoutEpoch(t *testing.T) {
	set := shippedRules(t)
	root := filepath.Join(t.TempDir(), "target")
	if err := archivetest.MakeRootfsTree(root); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1700000000, 0).UTC()
	setMtimes(t, root, old)
	apply := func() *Report {
		t.Helper()
		rep, err := ApplyDir(context.Background(), root, Options{Set: set, Owners: owners.New()}, false)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	mtime := func(name string) time.Time {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime().UTC()
	}

	apply()
	if got := mtime(contract.IndexPath); !got.Equal(old) {
		t.Fatalf("first apply: index mtime %v, want the newest in the tree, %v", got, old)
	}
	templates, err := filepath.Glob(filepath.Join(root, contract.TemplateDir, "*.tmpl"))
	if err != nil || len(templates) == 0 {
		t.Fatalf("no templates written (%v)", err)
	}

	before, _, err := TreeDigest(root)
	if err != nil {
		t.Fatal(err)
	}
	if rep := apply(); len(rep.Changes) != 0 {
		t.Errorf("second apply changed %+v", rep.Changes)
	}
	if after, _, _ := TreeDigest(root); after != before {
		t.Errorf("second apply, with nothing to do, changed the tree")
	}

	// A template lost, and a file no rule touches newer than the rest:
	// the template comes back with that file's mtime.
	newer := old.Add(time.Hour)
	lost, _ := filepath.Rel(root, templates[0])
	if err := os.Remove(templates[0]); err != nil {
		t.Fatal(err)
	}
	setMtime(t, filepath.Join(root, "usr/lib/libc.so.6"), newer)
	// podman reinstalled its conflist, which is moved again: rule-touched
	// entries are lstat'ed either way and must not be all that counts.
	conflist := `{"cniVersion":"0.4.0","name":"podman"}` + "\n"
	if err := os.WriteFile(filepath.Join(root, "etc/cni/net.d/87-podman-bridge.conflist"), []byte(conflist), 0o644); err != nil {
		t.Fatal(err)
	}
	setMtime(t, filepath.Join(root, "etc/cni/net.d/87-podman-bridge.conflist"), old.Add(time.Minute))
	// As the first apply did, the test keeps the directories it changed
	// as they were.
	setMtime(t, filepath.Join(root, contract.TemplateDir), old)
	setMtime(t, filepath.Join(root, "etc/cni/net.d"), old)
	rep := apply()
	if len(rep.Changes) == 0 {
		t.Fatal("third apply changed nothing; the template should be written again")
	}
	if got := mtime(lost); !got.Equal(newer) {
		t.Errorf("rewritten %s: mtime %v, want the newest in the tree, %v", lost, got, newer)
	}
}

func setMtimes(t *testing.T, root string, mt time.Time) {
	t.Helper()
	err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		setMtime(t, p, mt)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func setMtime(t *testing.T, p string, mt time.Time) {
	t.Helper()
	tv := unix.NsecToTimeval(mt.UnixNano())
	if err := unix.Lutimes(p, []unix.Timeval{tv, tv}); err != nil {
		t.Fatal(err)
	}
}

// applyHello applies set to a newc stream of entries, each with data
// "hello" if it has a size, and returns the output stream.
func applyHello(t *testing.T, set *rules.Set, entries []*archive.Entry) (*bytes.Buffer, *Report) {
	t.Helper()
	return applyData(t, set, entries, "hello")
}

// applyData is applyHello with data for the files' content (each entry's
// Size must be its length).
func applyData(t *testing.T, set *rules.Set, entries []*archive.Entry, data string) (*bytes.Buffer, *Report) {
	t.Helper()
	var in bytes.Buffer
	w := archive.NewCpioWriter(&in, archive.Newc)
	for _, e := range entries {
		w.WriteHeader(e)
		if e.Size > 0 {
			io.WriteString(w, data)
		}
	}
	w.Close()
	var out bytes.Buffer
	ow := archive.NewCpioWriter(&out, archive.Newc)
	rep, err := ApplyStream(ow, archive.KindCpio, archive.NewCpioReader(&in), Options{Set: set, Owners: owners.New()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ow.Close()
	return &out, rep
}
