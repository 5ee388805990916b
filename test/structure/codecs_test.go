package structure

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCodecDocNamesItsFiles: docs/architecture.md's "A new compression"
// names exactly the files a codec touches. Every file of pkg/compress
// that declares code a row of the codec table (pkg/compress/table.go)
// uses, and the file of every splicer of pkg/container/codecs.go, is
// named there; every file of pkg/compress named there is the table's,
// codec.go or one of those; and every column of compress.Spec is named.
func TestCodecDocNamesItsFiles(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := codecSection(t, string(doc))
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b[a-z][a-z0-9_]*\.go\b`).FindAllString(section, -1) {
		named[m] = true
	}

	compress := parseDir(t, filepath.Join(root, "pkg", "compress"))
	declaredIn := map[string]string{} // top-level func or var: its file
	for file, f := range compress {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					declaredIn[d.Name.Name] = file
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if v, ok := s.(*ast.ValueSpec); ok {
						for _, n := range v.Names {
							declaredIn[n.Name] = file
						}
					}
				}
			}
		}
	}
	touched := map[string]bool{"table.go": true, "codec.go": true}
	for _, name := range identsIn(t, compress["table.go"], "table") {
		if file, ok := declaredIn[name]; ok {
			touched[file] = true
		}
	}
	for file := range touched {
		if !named[file] {
			t.Errorf("a codec's row uses code of pkg/compress/%s, which docs/architecture.md's \"A new compression\" does not name", file)
		}
	}
	for file := range named {
		if _, inCompress := compress[file]; inCompress && !touched[file] {
			t.Errorf("docs/architecture.md's \"A new compression\" names %s, which no row of the codec table uses", file)
		}
	}

	container := parseDir(t, filepath.Join(root, "pkg", "container"))
	methods := map[string]string{}
	for file, f := range container {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
				methods[fd.Name.Name] = file
			}
		}
	}
	for _, name := range identsIn(t, container["codecs.go"], "splicers") {
		if file, ok := methods[name]; ok && !named[file] {
			t.Errorf("a splicer is %s, in pkg/container/%s, which the section does not name", name, file)
		}
	}

	for _, field := range specFields(t, compress["codec.go"]) {
		if !strings.Contains(section, "`"+field+"`") {
			t.Errorf("the section does not name compress.Spec's column `%s`", field)
		}
	}
}

// codecSection is the item "A new compression" of "Where to edit".
func codecSection(t *testing.T, doc string) string {
	t.Helper()
	start := strings.Index(doc, "- **A new compression**")
	if start < 0 {
		t.Fatal(`docs/architecture.md has no "- **A new compression**"`)
	}
	rest := doc[start+1:]
	if end := strings.Index(rest, "\n- **"); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// parseDir parses the production files of dir, by name.
func parseDir(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files[name] = f
		}
	}
	return files
}

// identsIn lists the identifiers the value of the package variable v of
// f uses.
func identsIn(t *testing.T, f *ast.File, v string) []string {
	t.Helper()
	if f == nil {
		t.Fatalf("no file declares %s", v)
	}
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range g.Specs {
			vs, ok := s.(*ast.ValueSpec)
			if !ok || !slices.ContainsFunc(vs.Names, func(n *ast.Ident) bool { return n.Name == v }) {
				continue
			}
			for _, value := range vs.Values {
				ast.Inspect(value, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && id.Name != "_" {
						names = append(names, id.Name)
					}
					return true
				})
			}
		}
	}
	if names == nil {
		t.Fatalf("found no variable %s", v)
	}
	return names
}

// specFields lists the fields of the type Spec in f.
func specFields(t *testing.T, f *ast.File) []string {
	t.Helper()
	var fields []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Spec" {
			return true
		}
		for _, fl := range ts.Type.(*ast.StructType).Fields.List {
			for _, n := range fl.Names {
				fields = append(fields, n.Name)
			}
		}
		return false
	})
	if fields == nil {
		t.Fatal("found no type Spec")
	}
	return fields
}
