package sbom

import (
	"fmt"
	"slices"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
)

// placement is where the document records one kind of change.
type placement interface {
	place(b *builder, c manifest.Change)
	// outputPath is where the output has the file c changed, "" where
	// it has it no more.
	outputPath(c manifest.Change) string
}

// removedFile is a file the output no longer has: no component (the
// components are what the output holds), but an annotation on the
// package that shipped it, which the specification has for what a tool
// says about a component.
type removedFile struct{}

// outputFile is a file the output has: a file component carrying what
// was done to it. A moved one is at the change's To, and records the
// path the package put it at as its pedigree's ancestor.
type outputFile struct{ moved bool }

// placements has a row for every kind of change (docs/schema/manifest.json).
var placements = map[contract.Kind]placement{
	contract.Removed:    removedFile{},
	contract.Relocated:  outputFile{moved: true},
	contract.Deferred:   outputFile{moved: true}, // the copy the boot step puts back
	contract.Retargeted: outputFile{},
	contract.Edited:     outputFile{}, // one key changed in place
	contract.Added:      outputFile{},
	contract.Template:   outputFile{},
	contract.Created:    outputFile{},
	contract.Dangling:   outputFile{},
}

// placeOf is the placement of kind; a kind without a row (a newer
// manifest's) is taken as a file left in the output, which is what
// every kind but removed is.
func placeOf(kind contract.Kind) placement {
	if p, ok := placements[kind]; ok {
		return p
	}
	return outputFile{}
}

func (removedFile) outputPath(manifest.Change) string { return "" }

func (f outputFile) outputPath(c manifest.Change) string {
	if f.moved {
		return c.To
	}
	return c.Path
}

// outputPaths maps the path of each file a change moved or removed to
// where the output has it ("" for nowhere).
func outputPaths(cs []manifest.Change) map[string]string {
	at := map[string]string{}
	for _, c := range cs {
		if p := placeOf(c.Kind).outputPath(c); p != c.Path {
			at[c.Path] = p
		}
	}
	return at
}

func (removedFile) place(b *builder, c manifest.Change) {
	text := fmt.Sprintf("rootfs-trim removed %s (package %s) by rule %s (%s): %s", absolute(c.Path), c.Package, c.Rule, c.Kind, c.Reason)
	b.annotations = append(b.annotations, cdx.Annotation{
		Subjects:  &[]cdx.BOMReference{cdx.BOMReference(b.ownerRef(c.Package))},
		Annotator: &cdx.Annotator{Component: b.tool()},
		Timestamp: b.timestamp(),
		Text:      text,
	})
}

func (f outputFile) place(b *builder, c manifest.Change) {
	at := absolute(f.outputPath(c))
	props := [][]cdx.Property{
		prop("action", string(c.Kind)), prop("rule", c.Rule), prop("reason", c.Reason),
		prop("package", c.Package), prop("type", c.Type), prop("mode", c.Mode),
		prop("path-b64", names.B64(at)),
	}
	comp := cdx.Component{BOMRef: b.uniqueRef(Namespace + "file:" + at), Type: cdx.ComponentTypeFile, Name: at}
	if f.moved {
		from := absolute(c.Path)
		props = append(props, prop("from", from), prop("from-b64", names.B64(from)))
		comp.Pedigree = &cdx.Pedigree{Ancestors: &[]cdx.Component{{Type: cdx.ComponentTypeFile, Name: from}}}
	}
	if c.Unreviewed {
		props = append(props, prop("unreviewed", "true"))
	}
	if c.Kept != "" {
		props = append(props, prop("kept", absolute(c.Kept)))
	}
	if c.SHA256 != "" && c.Type == "file" {
		comp.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: c.SHA256}}
	}
	all := slices.Concat(props...)
	comp.Properties = &all
	b.components = append(b.components, comp)
}
