package sbom

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// builder collects what a document adds to its base, typed, and merges
// it into the base's JSON.
type builder struct {
	d           *Doc
	opt         Options
	subject     string            // bom-ref of what the document describes
	byName      map[string]string // package name -> bom-ref
	components  []cdx.Component
	annotations []cdx.Annotation
	ourSubject  *cdx.Component    // the metadata component, when the base has none
	moved       map[string]string // outputPaths of the changes
}

func newBuilder(d *Doc, opt Options) *builder {
	b := &builder{d: d, opt: opt, byName: map[string]string{}}
	if c, ok := metadata(d.base)["component"].(map[string]any); ok {
		if ref, ok := c["bom-ref"].(string); ok {
			b.subject = ref
		}
	}
	if b.subject == "" {
		b.subject = b.uniqueRef(Namespace + "output")
		b.ourSubject = &cdx.Component{BOMRef: b.subject, Type: cdx.ComponentTypeOS, Name: opt.Subject}
	}
	return b
}

// metadata is base's metadata object, made if missing.
func metadata(base map[string]any) map[string]any {
	m, ok := base["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		base["metadata"] = m
	}
	return m
}

func (b *builder) timestamp() string { return b.opt.Time.UTC().Format(time.RFC3339) }

func (b *builder) tool() *cdx.Component {
	return &cdx.Component{Type: cdx.ComponentTypeApplication, Name: "rootfs-trim", Version: b.opt.Tool}
}

// uniqueRef is ref, or ref with a number, so that no two bom-refs of the
// document are the same.
func (b *builder) uniqueRef(ref string) string {
	r := ref
	for n := 2; b.d.refs[r]; n++ {
		r = ref + "#" + strconv.Itoa(n)
	}
	b.d.refs[r] = true
	return r
}

// pkgRef is the bom-ref of p's component: the base's (by purl, else by
// bom-ref, then by name), or one added.
func (b *builder) pkgRef(p Package) string {
	if ref, ok := b.byName[p.Name]; ok {
		return ref
	}
	ref := b.baseRef(p)
	if ref == "" {
		ref = b.uniqueRef(Namespace + "package:" + p.Name)
		b.components = append(b.components, b.component(p, ref))
	}
	b.byName[p.Name] = ref
	return ref
}

// component is p's component, the files it owns in the output its
// evidence of occurrence.
func (b *builder) component(p Package, ref string) cdx.Component {
	c := cdx.Component{BOMRef: ref, Type: cmp.Or(p.Type, cdx.ComponentTypeLibrary), Name: p.Name, Version: p.Version, PackageURL: p.PURL}
	var occ []cdx.EvidenceOccurrence
	for _, f := range p.Files {
		at, moved := b.moved[f]
		if !moved {
			at = f
		}
		if at != "" {
			occ = append(occ, cdx.EvidenceOccurrence{Location: absolute(at)})
		}
	}
	if len(occ) > 0 {
		slices.SortFunc(occ, func(a, b cdx.EvidenceOccurrence) int { return strings.Compare(a.Location, b.Location) })
		c.Evidence = &cdx.Evidence{Occurrences: &occ}
	}
	return c
}

// baseRef is the bom-ref of the base's top-level component for p: for a
// package with a purl, the component with that purl (a name alone may be
// another version); else Buildroot's bom-ref, the package's name, or
// syft's component named after the package. One without a bom-ref is
// given one, so that it need not be repeated.
func (b *builder) baseRef(p Package) string {
	comps, _ := b.d.base["components"].([]any)
	var found map[string]any
	for _, c := range comps {
		c, _ := c.(map[string]any)
		if p.PURL != "" {
			if c["purl"] == p.PURL {
				found = c
				break
			}
			continue
		}
		if c["bom-ref"] == p.Name {
			found = c
			break
		}
		if c["name"] == p.Name && found == nil {
			found = c
		}
	}
	if found == nil {
		return ""
	}
	if _, ok := found["bom-ref"]; !ok {
		found["bom-ref"] = b.uniqueRef(Namespace + "package:" + p.Name)
	}
	ref, _ := found["bom-ref"].(string)
	return ref
}

// ownerRef is the bom-ref an annotation about a file of pkg names: its
// package's, or the document's subject for a file of no known package.
func (b *builder) ownerRef(pkg string) string {
	if ref, ok := b.byName[pkg]; ok {
		return ref
	}
	return b.subject
}

// merge adds what was collected to the base: components and annotations
// appended, rootfs-trim among the tools, the timestamp set; an enriched
// document with a serial number is a new version of it.
func (b *builder) merge() error {
	base := b.d.base
	if err := appendTo(base, "components", b.components); err != nil {
		return err
	}
	if err := appendTo(base, "annotations", b.annotations); err != nil {
		return err
	}
	meta := metadata(base)
	meta["timestamp"] = b.timestamp()
	if b.ourSubject != nil {
		v, err := toJSON(b.ourSubject)
		if err != nil {
			return err
		}
		meta["component"] = v
	}
	if err := b.addTool(meta); err != nil {
		return err
	}
	if _, ok := base["serialNumber"]; ok {
		n, _ := strconv.Atoi(fmt.Sprint(base["version"])) // a whole number (checkShape)
		base["version"] = json.Number(strconv.Itoa(n + 1))
	}
	return nil
}

// addTool lists rootfs-trim in meta's tools: a component in the tools
// object of CycloneDX 1.5 and later, or a tool in the array before it
// (checkShape has refused anything else).
func (b *builder) addTool(meta map[string]any) error {
	switch tools := meta["tools"].(type) {
	case []any:
		// The legacy tool cyclonedx-go deprecates: written as a map.
		meta["tools"] = append(tools, map[string]any{"name": "rootfs-trim", "version": b.opt.Tool})
		return nil
	case map[string]any:
		return appendTo(tools, "components", []cdx.Component{*b.tool()})
	}
	t := map[string]any{}
	meta["tools"] = t
	return appendTo(t, "components", []cdx.Component{*b.tool()})
}

// appendTo appends vs, as JSON, to the array obj[key] (an array or
// nothing: checkShape).
func appendTo[T any](obj map[string]any, key string, vs []T) error {
	if len(vs) == 0 {
		return nil
	}
	arr, _ := obj[key].([]any)
	for _, v := range vs {
		j, err := toJSON(v)
		if err != nil {
			return err
		}
		arr = append(arr, j)
	}
	obj[key] = arr
	return nil
}

// toJSON is v as the generic JSON the base is held in.
func toJSON(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding sbom: %w", err)
	}
	var out any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("encoding sbom: %w", err)
	}
	return out, nil
}
