package trim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// aliasEntry is "d NAME", "f NAME" or "l NAME TARGET".
func aliasEntry(spec string) *archive.Entry {
	f := strings.SplitN(spec, " ", 3)
	e := &archive.Entry{Name: f[1], Type: archive.TypeRegular, Mode: 0o644, Nlink: 1}
	switch f[0] {
	case "d":
		e.Type, e.Mode = archive.TypeDir, 0o755
	case "l":
		e.Type, e.Linkname, e.Mode = archive.TypeSymlink, f[2], 0o777
	}
	return e
}

// TestEntriesJudgedWhereTheyLand (issue 23): no entry is judged at a
// literal name that is not where its consumer puts it. In cpio the policy
// is matched where the kernel's unpacker makes the entry; in tar an entry
// beneath a path that is a symlink or no directory at that point is
// refused, naming it, since GNU tar and bsdtar disagree.
func TestEntriesJudgedWhereTheyLand(t *testing.T) {
	netd := []string{"d etc", "d etc/cni", "d etc/cni/net.d"}
	const evil = "x/00-evil.conflist"
	tests := []struct {
		name    string
		entries []string
		newc    map[string]string // unhandled path -> alias ("" for the path itself)
		tar     string            // the entry refused, "" for none
		tarSeen map[string]string // findings when tar refuses none
	}{
		{name: "an empty directory then a symlink", entries: append(netd, "d x", "l x etc/cni/net.d", "f "+evil),
			newc: map[string]string{evil: "etc/cni/net.d/00-evil.conflist"}, tar: evil},
		{name: "a non-empty directory then a symlink", entries: append(netd, "d x", "f x/keep", "l x etc/cni/net.d", "f "+evil),
			newc: map[string]string{}, tar: evil},
		{name: "a symlink then a directory", entries: append(netd, "l x etc/cni/net.d", "d x", "f "+evil),
			newc: map[string]string{}, tar: evil},
		{name: "a file then a directory", entries: append(netd, "f x", "d x", "f "+evil),
			newc: map[string]string{}, tarSeen: map[string]string{}},
		{name: "a file over a non-empty directory", entries: append(netd, "d x", "f x/keep", "f x", "f "+evil),
			newc: map[string]string{}, tar: evil},
		{name: "a chain of links", entries: append(netd, "l x y", "l y /etc/cni/z", "l etc/cni/z net.d", "f "+evil),
			newc: map[string]string{evil: "etc/cni/net.d/00-evil.conflist"}, tar: evil},
		{name: "an absolute target", entries: append(netd, "d x", "l x /etc/cni/net.d", "f "+evil),
			newc: map[string]string{evil: "etc/cni/net.d/00-evil.conflist"}, tar: evil},
		{name: "a dot-dot target", entries: append(netd, "d usr", "l usr/x ../../../etc/cni/net.d", "f usr/x/00-evil.conflist"),
			newc: map[string]string{"usr/x/00-evil.conflist": "etc/cni/net.d/00-evil.conflist"}, tar: "usr/x/00-evil.conflist"},
		{name: "the alias two levels above the file", entries: append(netd, "d x", "l x etc/cni", "f x/net.d/00-evil.conflist"),
			newc: map[string]string{"x/net.d/00-evil.conflist": "etc/cni/net.d/00-evil.conflist"}, tar: "x/net.d/00-evil.conflist"},
		// A link at a policy directory whose target leads through another
		// link: matched where it leads (srv/evil), in both formats.
		{name: "a directory link's target through another link", entries: []string{"d etc", "d srv", "l opt srv", "l etc/cni /opt/evil",
			"d srv/evil", "d srv/evil/net.d", "f srv/evil/net.d/00-evil.conflist"},
			newc:    map[string]string{"etc/cni": "", "srv/evil/net.d/00-evil.conflist": "etc/cni/net.d/00-evil.conflist"},
			tarSeen: map[string]string{"etc/cni": "", "srv/evil/net.d/00-evil.conflist": "etc/cni/net.d/00-evil.conflist"}},
	}
	set := shippedRules(t)
	for _, tc := range tests {
		for _, kind := range []archive.Kind{archive.KindCpio, archive.KindTar} {
			t.Run(tc.name+"/"+kind.String(), func(t *testing.T) {
				d := NewDecider(set, nil, nil)
				d.Strict = true
				d.SetInput(kind)
				got := map[string]string{}
				var refused string
				for _, s := range tc.entries {
					e := aliasEntry(s)
					dec, err := d.Decide(e)
					if err != nil {
						if !errors.Is(err, archive.ErrAmbiguousParent) || !strings.Contains(err.Error(), e.Name) {
							t.Fatalf("%s: %v", e.Name, err)
						}
						refused = e.Name
						break
					}
					if v := dec.Verdict; v.Unhandled() {
						got[v.Path] = v.Alias
						if v.Through == "" {
							t.Errorf("%s: no link named", v.Path)
						}
					}
				}
				want := tc.newc
				if kind == archive.KindTar {
					if refused != tc.tar {
						t.Fatalf("refused %q, want %q", refused, tc.tar)
					}
					if refused != "" {
						return
					}
					want = tc.tarSeen
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("findings (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestGuardResolvesTheOutput: what apply drops can change where a later
// entry lands. x holds a file a rule strips, so in the input the kernel
// keeps the directory and the link x fails; in the output x is empty,
// the link replaces it and the conflist after it lands in etc/cni/net.d.
// The output check resolves what is written and refuses it.
func TestGuardResolvesTheOutput(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"policy.yaml": "policy:\n  - name: cni\n    forbid: [\"etc/cni/net.d/**\"]\n    reason: test\n",
		"p.yaml":      "package: p\nrules:\n  - name: junk\n    match: [\"x/junk\"]\n    action: strip\n    reason: test\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := rules.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	w := archive.NewCpioWriter(&in, archive.Newc)
	for _, s := range []string{"d etc", "d etc/cni", "d etc/cni/net.d", "d x", "f x/junk", "l x etc/cni/net.d", "f x/00-evil.conflist"} {
		if err := w.WriteHeader(aliasEntry(s)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	var out bytes.Buffer
	_, err = ApplyStream(archive.NewCpioWriter(&out, archive.Newc), archive.KindCpio, archive.NewCpioReader(&in),
		Options{Set: set, Owners: owners.New(), Input: archive.KindCpio}, nil)
	if !errors.Is(err, errGuard) || !strings.Contains(err.Error(), "lands at etc/cni/net.d/00-evil.conflist (x -> etc/cni/net.d)") {
		t.Fatalf("apply: %v", err)
	}
}

// TestDirLinksStayFew: an input that repeats a symlink at a directory the
// policy's paths lie in keeps one link to resolve each later entry
// through, the last, not one per repetition (each entry is matched
// against every remembered link).
func TestDirLinksStayFew(t *testing.T) {
	c := NewClassifier(shippedRules(t), nil)
	for i := range 1000 {
		if _, err := c.Classify(aliasEntry(fmt.Sprintf("l etc/cni /opt/evil%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	v, err := c.Classify(aliasEntry("f opt/evil999/net.d/a.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.dirLinks) != 1 || v.Alias != "etc/cni/net.d/a.conflist" {
		t.Errorf("%d links remembered; alias %q", len(c.dirLinks), v.Alias)
	}
}
