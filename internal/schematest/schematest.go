package schematest

import (
	"bytes"
	"encoding"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Dir is the module's docs/schema.
func Dir(t testing.TB) string {
	t.Helper()
	return filepath.Join(Root(t), "docs", "schema")
}

// Root is the module's root, found from the working directory up.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = up
	}
}

var (
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

// Compile compiles the schema at path (and what it refers to) once.
func Compile(t testing.TB, path string) *jsonschema.Schema {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if s := compiled[path]; s != nil {
		return s
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.AssertContent()
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compiling %s: %v", path, err)
	}
	compiled[path] = s
	return s
}

// Schema compiles docs/schema/NAME.json.
func Schema(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	return Compile(t, filepath.Join(Dir(t), name+".json"))
}

// Valid reports why doc does not validate against s, or nil.
func Valid(s *jsonschema.Schema, doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.Validate(v)
}

// Validate fails t unless doc validates against docs/schema/NAME.json.
func Validate(t testing.TB, name string, doc []byte) {
	t.Helper()
	if err := Valid(Schema(t, name), doc); err != nil {
		t.Errorf("%s does not validate against docs/schema/%s.json:\n%v\ndocument:\n%s", name, name, err, clip(doc))
	}
}

func clip(b []byte) []byte {
	if len(b) > 4000 {
		return append(b[:4000:4000], "..."...)
	}
	return b
}

// Fields lists where the JSON fields of typ and the properties of s
// disagree: a field the schema lacks, a property no field writes, a field
// always written that the schema does not require or the other way round,
// and an object schema that admits properties it does not name. It
// descends into nested structs, slices and maps of them.
func Fields(typ reflect.Type, s *jsonschema.Schema) []string {
	var w walker
	w.walk(typ.String(), typ, s)
	return w.problems
}

// CheckFields fails t with every problem Fields finds.
func CheckFields(t testing.TB, typ reflect.Type, name string) {
	t.Helper()
	for _, p := range Fields(typ, Schema(t, name)) {
		t.Errorf("docs/schema/%s.json: %s", name, p)
	}
}

type walker struct{ problems []string }

func (w *walker) errorf(format string, args ...any) {
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

func (w *walker) walk(where string, typ reflect.Type, s *jsonschema.Schema) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Implements(textMarshaler) || reflect.PointerTo(typ).Implements(textMarshaler) {
		return // a string in JSON
	}
	switch typ.Kind() {
	case reflect.Struct:
		w.object(where, typ, s)
	case reflect.Slice, reflect.Array:
		if typ.Elem().Kind() == reflect.Uint8 {
			return // base64
		}
		items := follow(s, func(s *jsonschema.Schema) *jsonschema.Schema { return s.Items2020 })
		if items == nil {
			w.errorf("%s: a list, but the schema has no items", where)
			return
		}
		w.walk(where+"[]", typ.Elem(), items)
	case reflect.Map:
		values := follow(s, func(s *jsonschema.Schema) *jsonschema.Schema {
			v, _ := s.AdditionalProperties.(*jsonschema.Schema)
			return v
		})
		if values == nil {
			w.errorf("%s: a map, but the schema has no additionalProperties schema", where)
			return
		}
		w.walk(where+"{}", typ.Elem(), values)
	}
}

// follow returns the first non-nil get(x) along s's $ref chain.
func follow(s *jsonschema.Schema, get func(*jsonschema.Schema) *jsonschema.Schema) *jsonschema.Schema {
	for ; s != nil; s = s.Ref {
		if v := get(s); v != nil {
			return v
		}
	}
	return nil
}

func (w *walker) object(where string, typ reflect.Type, s *jsonschema.Schema) {
	props := map[string]*jsonschema.Schema{}
	var required []string
	closed := false
	for x := s; x != nil; x = x.Ref {
		for k, v := range x.Properties {
			if props[k] == nil {
				props[k] = v
			}
		}
		required = append(required, x.Required...)
		// audit's finding is closed by unevaluatedProperties where it
		// is used (check adds to it), so anywhere along the chain.
		if b, ok := x.AdditionalProperties.(bool); ok && !b {
			closed = true
		}
		if u := x.UnevaluatedProperties; u != nil && u.Bool != nil && !*u.Bool {
			closed = true
		}
	}
	if !closed {
		w.errorf("%s: the schema admits properties it does not name (want additionalProperties: false)", where)
	}
	fields := jsonFields(typ)
	for _, f := range fields {
		p := props[f.name]
		if p == nil {
			w.errorf("%s: field %s (%q) is not in the schema", where, f.goName, f.name)
			continue
		}
		if req := slices.Contains(required, f.name); req == f.optional {
			if f.optional {
				w.errorf("%s: %q is omitted when empty, but the schema requires it", where, f.name)
			} else {
				w.errorf("%s: %q is always written, but the schema does not require it", where, f.name)
			}
		}
		w.walk(where+"."+f.name, f.typ, p)
	}
	for k := range props {
		if !slices.ContainsFunc(fields, func(f field) bool { return f.name == k }) {
			w.errorf("%s: the schema's property %q is not a field", where, k)
		}
	}
	slices.Sort(w.problems)
}

type field struct {
	name, goName string
	optional     bool
	typ          reflect.Type
}

// jsonFields are the fields encoding/json writes for typ, embedded
// structs flattened as it does.
func jsonFields(typ reflect.Type) []field {
	var out []field
	for i := range typ.NumField() {
		sf := typ.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		if sf.Anonymous && (!hasTag || name == "") {
			t := sf.Type
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t.Kind() == reflect.Struct {
				out = append(out, jsonFields(t)...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		optional := false
		for _, o := range strings.Split(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		out = append(out, field{name: name, goName: sf.Name, optional: optional, typ: sf.Type})
	}
	return out
}

// CycloneDX compiles the CycloneDX 1.6 JSON schema (testdata/cyclonedx,
// as cyclonedx-go v0.12.0 ships it), with the schemas it refers to
// registered at the addresses it names them by.
func CycloneDX(t testing.TB) *jsonschema.Schema {
	t.Helper()
	const base = "http://cyclonedx.org/schema/"
	mu.Lock()
	defer mu.Unlock()
	if s := compiled[base]; s != nil {
		return s
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, name := range []string{"spdx.schema.json", "jsf-0.82.schema.json", "bom-1.6.schema.json"} {
		data, err := os.ReadFile(filepath.Join(Root(t), "internal", "schematest", "testdata", "cyclonedx", name))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.AddResource(base+name, doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(base + "bom-1.6.schema.json")
	if err != nil {
		t.Fatalf("compiling CycloneDX 1.6: %v", err)
	}
	compiled[base] = s
	return s
}
