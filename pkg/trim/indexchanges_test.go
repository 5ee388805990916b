package trim

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// TestIndexChangesAreApplys: what audit reads back from the index of the
// example apply made is what apply reported, change for change, but for
// what the index does not record (the directories apply created, the
// index itself, sizes, a fallback's mark, a directory's type).
func TestIndexChangesAreApplys(t *testing.T) {
	set := shippedRules(t)
	example := filepath.Join("..", "..", "examples", "minikube")
	target := filepath.Join(t.TempDir(), "target")
	if err := os.CopyFS(target, os.DirFS(filepath.Join(example, "target"))); err != nil {
		t.Fatal(err)
	}
	table := owners.New()
	if err := table.ReadFileList(filepath.Join(example, "packages-file-list.txt")); err != nil {
		t.Fatal(err)
	}
	rep, err := ApplyDir(context.Background(), target, Options{Set: set, Owners: table}, false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(target, contract.IndexPath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ix, err := contract.DecodeIndex(f)
	if err != nil {
		t.Fatal(err)
	}
	var want []manifest.Change
	for _, c := range rep.Changes {
		if c.Kind != contract.Created && c.Path != contract.IndexPath {
			want = append(want, c)
		}
	}
	got := indexChanges(ix, set)
	if len(want) < 6 {
		t.Fatalf("apply made %d changes: the example should make every kind the index records", len(want))
	}
	byPath := cmpopts.SortSlices(func(a, b manifest.Change) bool { return a.Path < b.Path })
	notRecorded := cmpopts.IgnoreFields(manifest.Change{}, "Size", "Unreviewed", "Kept")
	// A rule for any owner (the boot_runtime policy's) records no owner in
	// the index, and a removed entry no type: the index says what it knows.
	for i := range want {
		if r := ruleNamed(set, want[i].Rule); r != nil && r.Package == "*" && want[i].Kind == contract.Removed {
			want[i].Package, want[i].Type = "*", "file"
		}
	}
	if d := cmp.Diff(want, got, byPath, notRecorded); d != "" {
		t.Errorf("index changes (-apply +index):\n%s", d)
	}
}

func ruleNamed(set *rules.Set, name string) *rules.Rule {
	for _, r := range set.Rules() {
		if r.Name == name {
			return r
		}
	}
	return nil
}
