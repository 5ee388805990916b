package container_test

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// TestEveryContainerCommands: every container's samples, the test-only
// tar-in-tar's included, go through what list, audit, apply and repack
// do with them: opened and described, audited (the rule's file found),
// applied (the file stripped, the output of the input's container) and
// repacked (read back the same, of that container still).
func TestEveryContainerCommands(t *testing.T) {
	container.WithTestContainer(t)
	tree := filepath.Join(t.TempDir(), "target")
	if err := archivetest.MakeRootfsTree(tree); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rule := "package: crictl\nrules:\n  - name: drop\n    match: [\"etc/crictl.yaml\"]\n    action: strip\n    reason: t\n"
	if err := os.WriteFile(filepath.Join(dir, "crictl.yaml"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := rules.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	own := &owners.Table{Fixed: "crictl"}
	for _, s := range container.RowSamples(t, tree) {
		t.Run(s.Name, func(t *testing.T) {
			names := list(t, s.Path, s.Row)
			if !slices.Contains(names, "etc/crictl.yaml") {
				t.Fatalf("list: no etc/crictl.yaml in %q", names)
			}
			res, err := trim.Audit(set, []trim.AuditInput{{Path: s.Path, Source: container.SourceOf(s.Path, container.OpenOptions{}), Owners: own}}, nil, container.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, f := range res.Findings {
				found = append(found, f.Path)
			}
			if d := cmp.Diff([]string{"etc/crictl.yaml"}, found); d != "" {
				t.Errorf("audit's findings (-want +got):\n%s", d)
			}
			out := filepath.Join(t.TempDir(), "out"+s.Ext)
			_, err = container.Rewrite(s.Path, out, container.RewriteOptions{Want: s.Want, Transform: func(e container.Entries) error {
				_, err := trim.ApplyEntries(e, trim.Options{Set: set, Owners: own})
				return err
			}})
			if err != nil {
				t.Fatal(err)
			}
			applied := list(t, out, s.Row)
			if slices.Contains(applied, "etc/crictl.yaml") {
				t.Errorf("apply: etc/crictl.yaml is still there")
			}
			again := filepath.Join(t.TempDir(), "again"+s.Ext)
			if _, err := container.Rewrite(out, again, container.RewriteOptions{Want: s.Want}); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(applied, list(t, again, s.Row)); d != "" {
				t.Errorf("repack (-applied +repacked):\n%s", d)
			}
		})
	}
}

// list opens path as list does, checks that row's container reads it and
// that it describes itself, and returns its entries' names, files first.
func list(t *testing.T, path, row string) []string {
	t.Helper()
	in, err := container.Open(path, container.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if got := in.Format.Container.Name(); got != row {
		t.Errorf("%s: read as %s, want %s", filepath.Base(path), got, row)
	}
	if _, err := in.Describe(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for {
		e, err := in.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == archive.TypeRegular {
			names = append(names, filepath.Clean(e.Name))
		}
	}
	slices.Sort(names)
	return names
}
