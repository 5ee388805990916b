package structure

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// contractInAPI is what pkg/ may export in terms of internal/: nothing.
// pkg/contract, the vocabulary build and boot share, is public itself.
var contractInAPI []string

// TestPublicAPINamesNoInternalType: pkg/ is a library, so what it exports
// must be usable by a program outside the module, which cannot name a type
// of internal/. An exported function, method, field, variable or type of
// pkg/ that mentions one fails here; a deliberate public name for such a
// type is an alias (`type Kind = contract.Kind`).
func TestPublicAPINamesNoInternalType(t *testing.T) {
	root := filepath.Join("..", "..")
	var got []string
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasSuffix(d.Name(), "test")) {
			return filepath.SkipDir // the tests' helpers are no library
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		got = append(got, internalInAPI(f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if d := cmp.Diff(contractInAPI, got); d != "" {
		t.Errorf("exported API of pkg/ naming a type of internal/ (-allowed +found):\n%s", d)
	}
}

// internalInAPI lists the exported declarations of f, as pkg.Name or
// pkg.Type.Member, whose types mention a package of internal/.
func internalInAPI(f *ast.File) []string {
	internal := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if rest, ok := strings.CutPrefix(path, module); ok && strings.HasPrefix(rest, "internal/") {
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			internal[name] = true
		}
	}
	mentions := func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
					found = true
				}
			}
			return !found
		})
		return found
	}
	pkg := f.Name.Name
	var out []string
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			name := decl.Name.Name
			if decl.Recv != nil {
				recv := receiverName(decl.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = recv + "." + name
			}
			if decl.Name.IsExported() && mentions(decl.Type) {
				out = append(out, pkg+"."+name)
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				out = append(out, specInAPI(pkg, spec, mentions)...)
			}
		}
	}
	return out
}

func specInAPI(pkg string, spec ast.Spec, mentions func(ast.Node) bool) []string {
	var out []string
	switch spec := spec.(type) {
	case *ast.ValueSpec:
		for _, n := range spec.Names {
			if n.IsExported() && spec.Type != nil && mentions(spec.Type) {
				out = append(out, pkg+"."+n.Name)
			}
		}
	case *ast.TypeSpec:
		if !spec.Name.IsExported() || spec.Assign.IsValid() {
			return nil // an alias is the deliberate public name
		}
		var members *ast.FieldList
		switch typ := spec.Type.(type) {
		case *ast.StructType:
			members = typ.Fields
		case *ast.InterfaceType:
			members = typ.Methods
		default:
			if mentions(typ) {
				out = append(out, pkg+"."+spec.Name.Name)
			}
			return out
		}
		for _, m := range members.List {
			for _, n := range m.Names {
				if n.IsExported() && mentions(m.Type) {
					out = append(out, pkg+"."+spec.Name.Name+"."+n.Name)
				}
			}
		}
	}
	return out
}

// receiverName is the type name of a method's receiver (T, *T, T[P]).
func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.IndexListExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}
