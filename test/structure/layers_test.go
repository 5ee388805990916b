package structure

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rootfs-trim/rootfs-trim/"

// The top-level internal/ is the ground floor: leaves every layer may use
// (names, paths, digests, *at calls). A leaf that imported a pkg/ package
// would make every pkg/ import of it an import from above, so none does;
// the CLI, the top floor, lives under cmd/rootfs-trim/internal.
func TestInternalHoldsLeaves(t *testing.T) {
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.Contains(p, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(path, module); ok && !strings.HasPrefix(rest, "internal/") {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s imports %s: internal/ holds only leaves", rel, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("read %d files under internal/: the walk missed the code", files)
	}
}
