package structure

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/architecture.md is a map a new reader follows: every file it names
// must be there, and every function, method or type it names in backquotes
// must be declared somewhere in the module (issue 25: "every path and name
// it gives exists").
func TestArchitectureNamesExist(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, decls := moduleNames(t, root)
	text := string(doc)
	for _, m := range regexp.MustCompile(`\b(?:pkg|cmd|test|internal)/[A-Za-z0-9_/.\-]*[A-Za-z0-9_]`).FindAllString(text, -1) {
		if _, err := os.Stat(filepath.Join(root, m)); err != nil {
			t.Errorf("docs/architecture.md names %s, which does not exist", m)
		}
	}
	for _, m := range regexp.MustCompile(`\b[a-z][a-z0-9_]*\.go\b`).FindAllString(text, -1) {
		if !files[m] {
			t.Errorf("docs/architecture.md names %s, which no directory of the module holds", m)
		}
	}
	// `Name`, `pkg.Name`, `Type.Method`: the last part must be declared.
	for _, m := range regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\\(\\))?`").FindAllStringSubmatch(text, -1) {
		parts := strings.Split(m[1], ".")
		name := parts[len(parts)-1]
		if len(parts) == 1 && !isGoName(name) {
			continue // a flag value, a field, a word
		}
		if len(parts) > 1 && (name == "go" || name == "sh" || name == "md" || name == "json" || name == "yaml") {
			continue // a file: checked above
		}
		if !decls[name] && isGoName(name) {
			t.Errorf("docs/architecture.md names `%s`, which nothing in the module declares", m[1])
		}
	}
}

// isGoName tells a name that reads as Go code (CamelCase, or lowerCamel
// with a capital inside) from a plain word in backquotes.
func isGoName(s string) bool {
	if s == "" || s == strings.ToLower(s) || s == strings.ToUpper(s) {
		return false
	}
	return true
}

func moduleNames(t *testing.T, root string) (files, decls map[string]bool) {
	files, decls = map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "vendor" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		files[d.Name()] = true
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				decls[decl.Name.Name] = true
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						decls[spec.Name.Name] = true
						if st, ok := spec.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									decls[n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							decls[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, decls
}
