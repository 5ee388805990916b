package sbom

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
)

// Namespace prefixes every property and bom-ref this package writes.
const Namespace = "rootfs-trim:"

// specVersion is the one version written and enriched: cyclonedx-go
// defaults to 1.7, which the builds that write SBOMs here do not.
const specVersion = "1.6"

// Package is a component of the output: a package that installed files,
// or a Go module found in a binary. PURL is set where the ecosystem is
// known (pkg:golang/...); Version is "" when unknown.
type Package struct {
	Name, Version, PURL string
	// Type is the component's type; "" is a library.
	Type cdx.ComponentType
	// Files are the paths the package owns, as the input had them: the
	// component's evidence of where it occurs in the output.
	Files []string
}

// GoModule is the package of a Go program's main module as its build
// information records it, an application (CycloneDX's type for a
// program): version "(devel)" or none is no version. files are the
// binaries built from it.
func GoModule(path, version string, files ...string) Package {
	if version == "(devel)" {
		version = ""
	}
	purl := "pkg:golang/" + path
	if version != "" {
		purl += "@" + version
	}
	return Package{Name: path, Version: version, PURL: purl, Type: cdx.ComponentTypeApplication, Files: files}
}

// Doc is an SBOM being built: a document of its own (New) or one given
// to enrich (Enrich).
type Doc struct {
	base     map[string]any
	refs     map[string]bool // every bom-ref of the document
	packages []Package
	changes  []manifest.Change
}

// Options say what the document records about the run.
type Options struct {
	// Tool is rootfs-trim's version.
	Tool string
	// Time is the document's and its annotations' timestamp:
	// SOURCE_DATE_EPOCH, for the same bytes from the same run.
	Time time.Time
	// Subject names the output (the metadata component of a document
	// of its own; an enriched one keeps its own).
	Subject string
}

// New starts a document of its own.
func New() *Doc {
	return &Doc{base: map[string]any{
		"$schema":     "http://cyclonedx.org/schema/bom-1.6.schema.json",
		"bomFormat":   cdx.BOMFormat,
		"specVersion": specVersion,
		"version":     json.Number("1"),
	}, refs: map[string]bool{}}
}

// Enrich starts from the CycloneDX 1.6 JSON document r holds.
func Enrich(r io.Reader) (*Doc, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber() // numbers kept as written
	var base map[string]any
	if err := dec.Decode(&base); err != nil {
		return nil, fmt.Errorf("reading sbom: %w", err)
	}
	if base["bomFormat"] != cdx.BOMFormat || base["specVersion"] != specVersion {
		return nil, fmt.Errorf("reading sbom: bomFormat %v, specVersion %v: want CycloneDX %s", base["bomFormat"], base["specVersion"], specVersion)
	}
	if err := checkShape(base); err != nil {
		return nil, fmt.Errorf("reading sbom: %w", err)
	}
	d := &Doc{base: base, refs: map[string]bool{}}
	collectRefs(base, d.refs)
	return d, nil
}

// checkShape refuses, when the document is read, what Encode's merge
// could not add to: a caller reads the input before it writes anything.
func checkShape(base map[string]any) error {
	for _, key := range []string{"components", "annotations"} {
		if _, ok := base[key].([]any); !ok && base[key] != nil {
			return fmt.Errorf("%s: want an array", key)
		}
	}
	meta, ok := base["metadata"].(map[string]any)
	if !ok && base["metadata"] != nil {
		return fmt.Errorf("metadata: want an object")
	}
	switch tools := meta["tools"].(type) {
	case nil, []any:
	case map[string]any:
		if _, ok := tools["components"].([]any); !ok && tools["components"] != nil {
			return fmt.Errorf("metadata.tools.components: want an array")
		}
	default:
		return fmt.Errorf("metadata.tools: want an object or an array")
	}
	if _, ok := base["serialNumber"]; ok {
		if _, err := strconv.Atoi(fmt.Sprint(base["version"])); err != nil {
			return fmt.Errorf("version %v: want a whole number", base["version"])
		}
	}
	return nil
}

// collectRefs adds every bom-ref under v to refs.
func collectRefs(v any, refs map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		if s, ok := v["bom-ref"].(string); ok {
			refs[s] = true
		}
		for _, x := range v {
			collectRefs(x, refs)
		}
	case []any:
		for _, x := range v {
			collectRefs(x, refs)
		}
	}
}

// AddPackages adds packages of the output; one already in an enriched
// document (by bom-ref, then by name) is not added again.
func (d *Doc) AddPackages(pkgs ...Package) { d.packages = append(d.packages, pkgs...) }

// AddChanges adds what a run did to files (manifest.Manifest.Changes).
func (d *Doc) AddChanges(cs []manifest.Change) { d.changes = append(d.changes, cs...) }

// Encode writes the document as indented JSON: the same document and
// options give the same bytes (keys sorted, components in order). It
// merges what was added into the document, so it is called once.
func (d *Doc) Encode(w io.Writer, opt Options) error {
	b := newBuilder(d, opt)
	b.moved = outputPaths(d.changes)
	for _, p := range d.packages {
		b.pkgRef(p)
	}
	for _, c := range sortedChanges(d.changes) {
		placeOf(c.Kind).place(b, c)
	}
	if err := b.merge(); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d.base); err != nil {
		return fmt.Errorf("encoding sbom: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func sortedChanges(cs []manifest.Change) []manifest.Change {
	return slices.SortedStableFunc(slices.Values(cs), func(a, b manifest.Change) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Kind, b.Kind))
	})
}

// prop is a property under Namespace; nil for an empty value.
func prop(name, value string) []cdx.Property {
	if value == "" {
		return nil
	}
	return []cdx.Property{{Name: Namespace + name, Value: value}}
}

// absolute is an entry's path as a reader of an SBOM expects it.
func absolute(p string) string { return "/" + strings.TrimPrefix(p, "/") }
