package trim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// levelRules are two packages whose rules overlap (alike on a path both
// name, as the shipped crictl rules; unlike on globs, which rules.Load
// cannot compare) and the fallback, for the levels and the joint findings.
var levelRules = map[string]string{
	"policy.yaml": `policy:
  - name: no-cni
    forbid: ["etc/cni/net.d/*"]
    reason: kubelet takes the first config there
  - name: crictl-config
    forbid: ["etc/crictl.yaml"]
    reason: the boot step writes it for the chosen runtime
`,
	"a.yaml": `package: pkg-a
rules:
  - name: a-crictl
    match: ["etc/crictl.yaml"]
    action: strip
    reason: points crictl at a.sock
  - name: a-net
    match: ["etc/cni/net.d/10-a.conflist"]
    action: strip
    reason: a's bridge
  - name: a-waived
    match: ["etc/cni/net.d/20-w.conflist"]
    action: strip
    waive: known, and accepted
    reason: w's bridge
  - name: a-shared
    match: ["etc/cni/net.d/3*.conflist"]
    action: relocate
    to: etc/a/net.d/
    reason: a keeps it for itself
  - name: a-gone
    match: ["etc/cni/net.d/40-gone.conflist"]
    action: strip
    must_match: true
    reason: gone
  - name: a-gone-expected
    match: ["etc/cni/net.d/41-gone.conflist"]
    action: strip
    must_match: true
    stale_reason: newer a keeps it in the binary
    reason: gone
  - name: a-gone-waived
    match: ["etc/cni/net.d/42-gone.conflist"]
    action: strip
    must_match: true
    waive: the 1.x branch only
    reason: gone
`,
	"b.yaml": `package: pkg-b
rules:
  - name: b-crictl
    match: ["etc/crictl.yaml"]
    action: strip
    reason: points crictl at b.sock
  - name: b-shared
    match: ["etc/cni/net.d/*-shared.conflist"]
    action: strip
    reason: b's bridge
`,
	"fallback.yaml": `package: "*"
rules:
  - name: fallback
    fallback: true
    match: ["etc/cni/net.d/*", "etc/crictl.yaml"]
    action: strip
    must_match: false
    reason: no package rule names it
`,
}

func levelSet(t *testing.T, without ...string) *rules.Set {
	t.Helper()
	dir := t.TempDir()
	for name, text := range levelRules {
		if !strings.Contains(strings.Join(without, " "), name) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	set, err := rules.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// auditEntries audits entries ("f NAME", "l NAME TARGET", as aliasEntry)
// with owners and returns the findings, stale rules included.
func auditEntries(t *testing.T, set *rules.Set, owners *owners.Table, entries ...string) []Finding {
	t.Helper()
	a := NewAuditor(set, AuditInput{Path: "img", Owners: owners}, archive.KindCpio)
	for _, spec := range append([]string{"d etc", "d etc/cni", "d etc/cni/net.d"}, entries...) {
		if _, err := a.Entry(aliasEntry(spec), strings.NewReader("")); err != nil {
			t.Fatal(err)
		}
	}
	return append(a.Findings(), StaleFindings(set, []*Classifier{a.Classifier()})...)
}

// TestFindingLevels (issue 38): a finding's level says what it asks of a
// CI user: error, apply cannot fix it as reviewed; warning, a reviewed
// rule fixes it, or it fails nothing; note, informational. Audit's exit
// status (Offends) is whether the image holds an offending file, as
// before: a level changed, no exit status did.
func TestFindingLevels(t *testing.T) {
	table := owners.New()
	if err := table.ParseFileList(strings.NewReader(strings.Join([]string{
		"pkg-a,./etc/cni/net.d/10-a.conflist", "pkg-a,./etc/cni/net.d/20-w.conflist",
		"pkg-a,./etc/cni/net.d/99-new.conflist", "pkg-a,./etc/a-link", "pkg-a,./etc/x",
	}, "\n")), "files.txt"); err != nil {
		t.Fatal(err)
	}
	type level struct {
		Check    string
		Severity string
		Offends  bool // audit exits 1
	}
	tests := []struct {
		name  string
		entry string // the finding's; "" for a stale rule's
		rule  string // the stale rule
		set   *rules.Set
		want  level
	}{
		{name: "a package rule handles it", entry: "f etc/cni/net.d/10-a.conflist",
			want: level{CheckHandled, "warning", true}},
		{name: "only the fallback handles it", entry: "f etc/cni/net.d/99-new.conflist",
			want: level{CheckUnreviewed, "error", true}},
		{name: "no rule handles it", entry: "f etc/cni/net.d/99-new.conflist", set: levelSet(t, "fallback.yaml"),
			want: level{CheckUnhandled, "error", true}},
		{name: "a waived rule handles it", entry: "f etc/cni/net.d/20-w.conflist",
			want: level{CheckHandled, "note", false}},
		{name: "a link left dangling", entry: "l etc/a-link /etc/cni/net.d/10-a.conflist",
			want: level{CheckDangling, "warning", false}},
		{name: "a stale rule", rule: "a-gone", want: level{CheckStale, "error", false}},
		{name: "a stale rule expected", rule: "a-gone-expected", want: level{CheckStale, "warning", false}},
		{name: "a stale rule waived", rule: "a-gone-waived", want: level{CheckStale, "warning", false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := tc.set
			if set == nil {
				set = levelSet(t)
			}
			// pkg-a is present; the dangling link's target is a-net's.
			entries, path := []string{"f etc/x"}, ""
			if tc.entry != "" {
				path = strings.Fields(tc.entry)[1]
				if path != "etc/cni/net.d/10-a.conflist" {
					entries = append(entries, "f etc/cni/net.d/10-a.conflist")
				}
				entries = append(entries, tc.entry)
			}
			var got []level
			for _, f := range auditEntries(t, set, table, entries...) {
				if f.Path == path && (path != "" || f.Rule == tc.rule) {
					got = append(got, level{f.Check, f.Severity.String(), f.Offends()})
				}
			}
			if d := cmp.Diff([]level{tc.want}, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestJointRules (issue 38): with the table unknown, a file the rules of
// several packages match is not said to be the first package's (a
// crictl.yaml naming crio.sock was containerd's "points crictl at
// containerd.sock"): rules that do alike handle it together, each named,
// with the policy's reason, true of them all; rules that disagree leave it
// to the fallback, unreviewed. Known table still pick their own rule.
func TestJointRules(t *testing.T) {
	table := owners.New()
	if err := table.ParseFileList(strings.NewReader(
		"pkg-b,./etc/crictl.yaml\npkg-b,./etc/cni/net.d/30-shared.conflist\n"), "files.txt"); err != nil {
		t.Fatal(err)
	}
	type got struct {
		Package, Rule, Check, Severity, Reason string
	}
	tests := []struct {
		name  string
		path  string
		table *owners.Table
		want  got
	}{
		{name: "alike, table unknown", path: "etc/crictl.yaml",
			want: got{owners.Unknown, "a-crictl,b-crictl", CheckHandled, "warning",
				"owner unknown; the rules of pkg-a, pkg-b all strip it: the boot step writes it for the chosen runtime"}},
		{name: "alike, owner known", path: "etc/crictl.yaml", table: table,
			want: got{"pkg-b", "b-crictl", CheckHandled, "warning", "points crictl at b.sock"}},
		{name: "they disagree, table unknown", path: "etc/cni/net.d/30-shared.conflist",
			want: got{owners.Unknown, "fallback", CheckUnreviewed, "error",
				"only the fallback handles it; name it in a package rule: no package rule names it"}},
		{name: "they disagree, owner known", path: "etc/cni/net.d/30-shared.conflist", table: table,
			want: got{"pkg-b", "b-shared", CheckHandled, "warning", "b's bridge"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var all []got
			for _, f := range auditEntries(t, levelSet(t), tc.table, "f "+tc.path) {
				if f.Path == tc.path {
					all = append(all, got{f.Package, f.Rule, f.Check, f.Severity.String(), f.Reason})
				}
			}
			if d := cmp.Diff([]got{tc.want}, all); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
