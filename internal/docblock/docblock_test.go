package docblock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeDocs(t *testing.T, readme, recipes string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"README.md": readme, "docs/recipes.md": recipes} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestBlock(t *testing.T) {
	root := writeDocs(t,
		"text\n<!-- block: a -->\n```sh\necho a\n```\n",
		"<!-- block: b -->\nSome words.\n\n```dockerfile\nRUN b \\\n    c\n```\n<!-- block: open -->\n```sh\nx\n")
	names, err := Names(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a": "README.md", "b": "docs/recipes.md", "open": "docs/recipes.md"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{"a": "echo a\n", "b": "RUN b \\\n    c\n"} {
		got, err := Block(root, name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("block %s (-want +got):\n%s", name, diff)
		}
	}
	for name, want := range map[string]string{"open": "docs/recipes.md: block \"open\" is not closed", "c": `no block "c" in README.md, docs/recipes.md`} {
		if _, err := Block(root, name); err == nil || err.Error() != want {
			t.Errorf("block %s: error %v, want %q", name, err, want)
		}
	}
}

func TestNamesUnique(t *testing.T) {
	root := writeDocs(t, "<!-- block: a -->\n```sh\n```\n", "<!-- block: a -->\n```sh\n```\n")
	if _, err := Names(root); err == nil || !strings.Contains(err.Error(), `block "a" is both in README.md and in docs/recipes.md`) {
		t.Errorf("a name in two docs: error %v", err)
	}
}

func TestUnmarked(t *testing.T) {
	root := writeDocs(t, "", "# R\n<!-- block: a -->\n```sh\nx\n```\n\n```sh\ny\n```\n<!-- block: b -->\n\n```sh\n```\n")
	got, err := Unmarked(root, "docs/recipes.md")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{7, 12}, got); diff != "" {
		t.Errorf("unmarked blocks' lines (-want +got):\n%s", diff)
	}
}
