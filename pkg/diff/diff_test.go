package diff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

func TestMain(m *testing.M) {
	archivetest.SetToolEnv()
	os.Exit(m.Run())
}

func TestCompareRecords(t *testing.T) {
	base := Record{Type: "file", Mode: "0644", Size: 3, SHA256: "aa"}
	for _, tc := range []struct {
		name string
		edit func(r *Record)
		want []string
	}{
		{"same", func(r *Record) {}, nil},
		{"content", func(r *Record) { r.SHA256 = "bb" }, []string{WhatContent}},
		{"size only", func(r *Record) { r.Size = 4 }, []string{WhatContent}},
		{"mode", func(r *Record) { r.Mode = "0755" }, []string{WhatMode}},
		{"owner", func(r *Record) { r.GID = 1 }, []string{WhatOwner}},
		{"symlink", func(r *Record) { r.Type, r.SHA256, r.Size, r.Link = "symlink", "", 0, "x" }, []string{WhatType, WhatContent, WhatLink}},
		{"device", func(r *Record) { r.Device = "1,3" }, []string{WhatDevice}},
		{"handling", func(r *Record) { r.Rule = "other" }, []string{WhatHandling}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base
			tc.edit(&b)
			if d := cmp.Diff(tc.want, compareRecords(&base, &b)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestCompareFindings(t *testing.T) {
	off := func(path, rule string) trim.Finding {
		return trim.Finding{Input: "x", Path: path, Package: "p", Rule: rule, Check: trim.CheckHandled}
	}
	stale := trim.Finding{Package: "p", Rule: "r", Check: trim.CheckStale}
	for _, tc := range []struct {
		name      string
		old, new  []trim.Finding
		wantNew   []trim.Finding
		wantGone  []trim.Finding
		wantEmpty bool
	}{
		{name: "same", old: []trim.Finding{off("a", "r")}, new: []trim.Finding{off("a", "r")}, wantEmpty: true},
		{name: "another input, same finding", old: []trim.Finding{off("a", "r")},
			new: []trim.Finding{{Input: "y", Path: "a", Package: "q", Rule: "r", Check: trim.CheckHandled}}, wantEmpty: true},
		{name: "new and gone", old: []trim.Finding{off("a", "r")}, new: []trim.Finding{off("b", "r"), stale},
			wantNew: []trim.Finding{off("b", "r"), stale}, wantGone: []trim.Finding{off("a", "r")}},
		{name: "another rule", old: []trim.Finding{off("a", "r")}, new: []trim.Finding{off("a", "s")},
			wantNew: []trim.Finding{off("a", "s")}, wantGone: []trim.Finding{off("a", "r")}},
		{name: "a duplicate counts", old: []trim.Finding{off("a", "r")}, new: []trim.Finding{off("a", "r"), off("a", "r")},
			wantNew: []trim.Finding{off("a", "r")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b builder
			b.compareFindings(tc.old, tc.new)
			if tc.wantEmpty {
				if len(b.byPkg) != 0 {
					t.Fatalf("want no difference, got %+v", b.byPkg)
				}
				return
			}
			var gotNew, gotGone []trim.Finding
			for _, p := range b.byPkg {
				gotNew = append(gotNew, p.OffendersNew...)
				gotGone = append(gotGone, p.OffendersGone...)
			}
			// A finding's segment is audit's own, said by Initrd.
			ignore := cmpopts.IgnoreUnexported(trim.Finding{})
			if d := cmp.Diff(tc.wantNew, gotNew, ignore); d != "" {
				t.Errorf("new (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantGone, gotGone, ignore); d != "" {
				t.Errorf("gone (-want +got):\n%s", d)
			}
		})
	}
}

func loadRules(t *testing.T) *rules.Set {
	t.Helper()
	set, err := rules.Load(filepath.Join("..", "..", "rules"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// writeTree makes a tree of files (path -> content; a "->" prefix makes a
// symlink).
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(c, "->"); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(c), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type fileRow struct {
	Change, Path        string
	What                []string
	Forbidden, Deferred bool
	Package             string
}

func rows(res *Result) []fileRow {
	var out []fileRow
	for _, p := range res.Packages {
		for _, f := range p.Files {
			if f.Old != nil && f.Old.Type == "dir" || f.New != nil && f.New.Type == "dir" {
				continue
			}
			out = append(out, fileRow{f.Change, f.Path, f.What, f.Forbidden, f.Deferred, p.Package})
		}
	}
	return out
}

func TestImages(t *testing.T) {
	set := loadRules(t)
	const conflist = "etc/cni/net.d/11-crio-ipv4-bridge.conflist"
	for _, tc := range []struct {
		name     string
		old, new map[string]string
		want     []fileRow
		fails    bool
	}{
		{name: "identical", old: map[string]string{"usr/bin/crio": "1"}, new: map[string]string{"usr/bin/crio": "1"}},
		{name: "a plain file changes", old: map[string]string{"usr/bin/crio": "1"}, new: map[string]string{"usr/bin/crio": "2"},
			want: []fileRow{{Change: Changed, Path: "usr/bin/crio", What: []string{WhatContent}, Package: "crio-bin"}}},
		{name: "deferred content changes", old: map[string]string{conflist: "a"}, new: map[string]string{conflist: "b"},
			want:  []fileRow{{Change: Changed, Path: conflist, What: []string{WhatContent}, Forbidden: true, Deferred: true, Package: "crio-bin"}},
			fails: true},
		{name: "a forbidden file becomes a symlink", old: map[string]string{"etc/crictl.yaml": "x"}, new: map[string]string{"etc/crictl.yaml": "->/run/crictl.yaml"},
			want:  []fileRow{{Change: Changed, Path: "etc/crictl.yaml", What: []string{WhatType, WhatContent, WhatMode, WhatLink}, Forbidden: true, Package: "crio-bin"}},
			fails: true},
		{name: "added and removed", old: map[string]string{"usr/bin/a": "1"}, new: map[string]string{"usr/bin/b": "1"},
			want: []fileRow{{Change: Removed, Path: "usr/bin/a", Package: "crio-bin"}, {Change: Added, Path: "usr/bin/b", Package: "crio-bin"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			owners := owners.New()
			owners.Fixed = "crio-bin"
			opened := map[string]int{}
			opt := Options{Set: set, Wrap: func(r archive.Reader) archive.Reader {
				opened[r.(*container.Input).Path]++
				return r
			}}
			old, new := writeTree(t, tc.old), writeTree(t, tc.new)
			res, err := Images(opt, Input{Path: old, Source: container.SourceOf(old, container.OpenOptions{}), Owners: owners}, Input{Path: new, Source: container.SourceOf(new, container.OpenOptions{}), Owners: owners})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, rows(res)); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			if res.Summary.Fails != tc.fails {
				t.Errorf("fails %v, want %v", res.Summary.Fails, tc.fails)
			}
			// Streaming: each input is opened and read once.
			if d := cmp.Diff(map[string]int{old: 1, new: 1}, opened); d != "" {
				t.Errorf("inputs opened (-want +got):\n%s", d)
			}
		})
	}
}

// A cpio hard-link group carries its data on one member (GNU cpio: the
// last): every member's content is the group's, so moving the data to
// another member changes nothing, and changing it changes every member.
func TestImagesHardLinkGroups(t *testing.T) {
	archivetest.RequireTool(t, "cpio")
	set := loadRules(t)
	mk := func(content string) string {
		dir := writeTree(t, map[string]string{"usr/bin/a": content})
		if err := os.Link(filepath.Join(dir, "usr/bin/a"), filepath.Join(dir, "usr/bin/b")); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "x.cpio")
		cmd := exec.Command("sh", "-c", "find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 > "+out)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cpio: %v: %s", err, b)
		}
		return out
	}
	one, same, other := mk("one"), mk("one"), mk("two")
	res, err := Images(Options{Set: set}, Input{Path: one, Source: container.SourceOf(one, container.OpenOptions{})}, Input{Path: same, Source: container.SourceOf(same, container.OpenOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Empty() {
		t.Errorf("same content: want no difference, got %+v", rows(res))
	}
	res, err = Images(Options{Set: set}, Input{Path: one, Source: container.SourceOf(one, container.OpenOptions{})}, Input{Path: other, Source: container.SourceOf(other, container.OpenOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	want := []fileRow{
		{Change: Changed, Path: "usr/bin/a", What: []string{WhatContent}, Package: owners.Unknown},
		{Change: Changed, Path: "usr/bin/b", What: []string{WhatContent}, Package: owners.Unknown},
	}
	if d := cmp.Diff(want, rows(res)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestManifestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"version": 1, "changes": [], "stale_rules": []}`)
	for _, tc := range []struct{ name, body, want string }{
		{"version", `{"version": 9}`, "manifest version 9, want 1 to 2"},
		{"not JSON", `{"version": 1,`, "decoding the manifest"},
		{"bad b64", `{"version": 1, "changes": [{"path": "x", "path_b64": "!"}]}`, "change 0: path_b64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(tc.name+".json", tc.body)
			if ok, err := IsManifest(p); !ok || err != nil {
				t.Fatalf("IsManifest = %v, %v", ok, err)
			}
			_, err := Manifests(good, p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err %v, want one naming %s with %q", err, p, tc.want)
			}
		})
	}
	if ok, _ := IsManifest(dir); ok {
		t.Error("a directory is no manifest")
	}
}

func FuzzManifests(f *testing.F) {
	f.Add([]byte(`{"version": 1, "changes": [{"kind": "deferred", "path": "etc/x", "package": "p", "sha256": "aa"}], "stale_rules": [{"rule": "r", "package": "p", "pos": "rules/p.yaml:3"}]}`))
	f.Add([]byte(`{"version": 1, "changes": [{"kind": "removed", "path": "", "path_b64": "/w=="}]}`))
	good := filepath.Join(f.TempDir(), "good.json")
	if err := os.WriteFile(good, []byte(`{"version": 1}`), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "m.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, pair := range [][2]string{{good, p}, {p, p}} {
			res, err := Manifests(pair[0], pair[1])
			if err != nil {
				continue
			}
			if pair[0] == pair[1] && !res.Empty() {
				t.Fatalf("a manifest differs from itself: %+v", res.Packages)
			}
		}
	})
}
