package structure

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	maxLines  = 100 // from the func keyword to the closing brace
	maxParams = 6
)

// size is how long a function is and how many parameters it takes.
type size struct{ lines, params int }

// fn is a function found in the code, and where.
type fn struct {
	key, pos string
	size
}

func TestFunctionSizes(t *testing.T) {
	var fns []fn
	for _, dir := range []string{"pkg", "internal", "cmd"} {
		found, err := functions(filepath.Join("..", "..", dir))
		if err != nil {
			t.Fatal(err)
		}
		fns = append(fns, found...)
	}
	if len(fns) < 500 {
		t.Fatalf("found %d functions under pkg/ and internal/: the walk missed the code", len(fns))
	}
	for _, msg := range check(fns) {
		t.Error(msg)
	}
}

// check returns a message for each function of fns over the limits.
func check(fns []fn) []string {
	var msgs []string
	for _, f := range fns {
		if f.lines > maxLines || f.params > maxParams {
			msgs = append(msgs, fmt.Sprintf("%s: %s has %d lines and %d parameters; at most %d lines and %d parameters", f.pos, f.key, f.lines, f.params, maxLines, maxParams))
		}
	}
	sort.Strings(msgs)
	return msgs
}

// functions parses every non-test Go file under dir, vendor and testdata
// aside, and returns each function declaration and function literal.
func functions(dir string) ([]fn, error) {
	fset := token.NewFileSet()
	var fns []fn
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "vendor" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(filepath.Dir(dir), p)
		if err != nil {
			return err
		}
		fns = append(fns, inFile(fset, f, path.Dir(filepath.ToSlash(rel)))...)
		return nil
	})
	return fns, err
}

// inFile lists the functions of one file of package dir (pkg/trim).
func inFile(fset *token.FileSet, f *ast.File, dir string) []fn {
	var fns []fn
	outer := ""
	ast.Inspect(f, func(n ast.Node) bool {
		var typ *ast.FuncType
		var body *ast.BlockStmt
		var name string
		switch n := n.(type) {
		case *ast.GenDecl:
			outer = "package level"
		case *ast.FuncDecl:
			typ, body, name = n.Type, n.Body, funcName(n)
			outer = name
		case *ast.FuncLit:
			typ, body = n.Type, n.Body
			name = fmt.Sprintf("%s (func literal at line %d)", outer, fset.Position(n.Pos()).Line)
		default:
			return true
		}
		if body == nil {
			return true
		}
		start := fset.Position(n.Pos())
		fns = append(fns, fn{
			key:  dir + " " + name,
			pos:  fmt.Sprintf("%s/%s:%d", dir, filepath.Base(start.Filename), start.Line),
			size: size{lines: fset.Position(body.Rbrace).Line - start.Line + 1, params: params(typ)},
		})
		return true
	})
	return fns
}

// funcName is F, or T.M for a method of T.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

// params counts parameters (not results, not the receiver): func(a, b int)
// takes two.
func params(t *ast.FuncType) int {
	n := 0
	for _, f := range t.Params.List {
		n += max(len(f.Names), 1)
	}
	return n
}

// TestCheck runs check on made-up functions: each one over a limit is
// reported, at the limits is not.
func TestCheck(t *testing.T) {
	fns := []fn{
		{"pkg/rules short", "a.go:1", size{10, 2}},
		{"pkg/rules long", "a.go:2", size{101, 2}},
		{"pkg/rules wide", "a.go:3", size{5, 7}},
		{"pkg/trim limit", "b.go:1", size{100, 6}},
	}
	want := []string{
		"a.go:2: pkg/rules long has 101 lines and 2 parameters; at most 100 lines and 6 parameters",
		"a.go:3: pkg/rules wide has 5 lines and 7 parameters; at most 100 lines and 6 parameters",
	}
	if diff := cmp.Diff(want, check(fns)); diff != "" {
		t.Errorf("check (-want +got):\n%s", diff)
	}
}
