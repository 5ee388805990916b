package sbom

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/schematest"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
)

// checkDocument validates doc against the 1.6 schema and checks that
// cyclonedx-go reads back every field of it: decoded and encoded again
// as 1.6, it is the same JSON.
func checkDocument(t *testing.T, doc []byte) *cdx.BOM {
	t.Helper()
	return checkAdded(t, doc, -1)
}

// checkAdded is checkDocument for a document that enriched one of
// inComps components (-1: none, a document of its own), whose own fields cyclonedx-go need not keep (it
// drops Buildroot's empty dependsOn arrays and adds a version 0 where
// there was none, which is why Enrich merges JSON): what was added, the
// components after the first inComps, the annotations and the metadata,
// must come back the same.
func checkAdded(t *testing.T, doc []byte, inComps int) *cdx.BOM {
	t.Helper()
	if err := schematest.Valid(schematest.CycloneDX(t), doc); err != nil {
		t.Fatalf("not CycloneDX 1.6: %v", err)
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(doc), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := cdx.NewBOMEncoder(&again, cdx.BOMFileFormatJSON).EncodeVersion(&bom, cdx.SpecVersion1_6); err != nil {
		t.Fatal(err)
	}
	ours, back := generic(t, doc), generic(t, again.Bytes())
	if inComps >= 0 {
		ours, back = added(ours, inComps), added(back, inComps)
	}
	if d := cmp.Diff(ours, back); d != "" {
		t.Errorf("cyclonedx-go's round trip changed the document (-ours +read back):\n%s", d)
	}
	return &bom
}

// added is what an enrichment adds to a document of inComps components.
func added(doc any, inComps int) any {
	m := doc.(map[string]any)
	comps, _ := m["components"].([]any)
	return []any{comps[inComps:], m["annotations"], m["metadata"]}
}

func generic(t *testing.T, doc []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

var epoch = time.Unix(1700000000, 0)

// everyKind is a change of every kind the manifest knows.
func everyKind() []manifest.Change {
	return []manifest.Change{
		{Kind: contract.Removed, Path: "etc/crictl.yaml", Type: "file", Package: "cri-o", Rule: "crio-crictl", Reason: "minikube writes it", Mode: "0644", SHA256: strings.Repeat("a", 64)},
		{Kind: contract.Relocated, Path: "etc/cni/net.d/87-podman-bridge.conflist", To: "usr/share/podman/87-podman-bridge.conflist", Type: "file", Package: "podman", Rule: "podman-bridge", Reason: "kept for podman only", Mode: "0644", SHA256: strings.Repeat("b", 64)},
		{Kind: contract.Deferred, Path: "etc/containerd/config.toml", To: "usr/share/minikube/deferred/etc/containerd/config.toml", Type: "file", Package: "containerd", Rule: "containerd-config", Reason: "the boot step writes it for containerd", Mode: "0644", SHA256: strings.Repeat("c", 64), Unreviewed: true},
		{Kind: contract.Retargeted, Path: "etc/resolv.conf", To: "../run/resolv.conf", Type: "symlink", Package: "systemd", Rule: "resolv", Reason: "points into /run", Mode: "0777"},
		{Kind: contract.Edited, Path: "etc/containerd/config.toml", Type: "file", Package: "containerd.io", Rule: "containerd-cri-disabled", Reason: `disabled_plugins: ["cri"] -> []`, Mode: "0644", SHA256: strings.Repeat("f", 64)},
		{Kind: contract.Added, Path: "usr/lib/systemd/system/rootfs-trim-boot.service", Type: "file", Package: "rootfs-trim", Reason: "the boot step", Mode: "0644", SHA256: strings.Repeat("d", 64)},
		{Kind: contract.Template, Path: "usr/share/minikube/templates/crictl.yaml", Type: "file", Package: "rootfs-trim", Rule: "crictl", Mode: "0644", SHA256: strings.Repeat("e", 64)},
		{Kind: contract.Created, Path: "usr/share/minikube", Type: "dir", Package: "rootfs-trim", Mode: "0755"},
		{Kind: contract.Dangling, Path: "etc/alternatives/x", To: "/nowhere", Type: "symlink", Package: "unknown", Reason: "target missing", Mode: "0777"},
		{Kind: contract.Removed, Path: "etc/overlay.conf", Type: "file", Package: "(overlay or script)", Rule: "fallback", Reason: "no package", Mode: "0644"},
	}
}

func encode(t *testing.T, d *Doc) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := d.Encode(&buf, Options{Tool: "1.2.3", Time: epoch, Subject: "rootfs.cpio.gz"}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestNewDocument: packages (a Go module among them) and every kind of
// change give a valid 1.6 document that cyclonedx-go reads in full, with
// a file component where the output has the file and an annotation on
// its package where it has not.
func TestNewDocument(t *testing.T) {
	d := New()
	d.AddPackages(Package{Name: "cri-o", Version: "1.31.0"}, Package{Name: "podman", Version: "4.9"},
		Package{Name: "containerd"}, Package{Name: "systemd", Version: "252"})
	d.AddPackages(GoModule("github.com/moby/buildkit", "v0.17.0", "usr/bin/buildkitd", "usr/bin/buildctl"),
		GoModule("github.com/containerd/nerdctl", "(devel)", "usr/local/bin/nerdctl"))
	d.AddChanges(everyKind())
	bom := checkDocument(t, encode(t, d))

	if bom.SpecVersion != cdx.SpecVersion1_6 || bom.SerialNumber != "" || bom.Metadata.Timestamp != "2023-11-14T22:13:20Z" {
		t.Errorf("spec %v serial %q timestamp %q: want 1.6, none, SOURCE_DATE_EPOCH's", bom.SpecVersion, bom.SerialNumber, bom.Metadata.Timestamp)
	}
	var files, pkgs []string
	for _, c := range *bom.Components {
		switch c.Type {
		case cdx.ComponentTypeFile:
			files = append(files, c.Name+" "+propValue(c, "action")+" "+propValue(c, "rule"))
		default:
			pkgs = append(pkgs, string(c.Type)+" "+c.Name+"@"+c.Version+" "+c.PackageURL+occurrences(c))
		}
	}
	wantFiles := []string{
		"/etc/alternatives/x dangling ", // in the order of the paths the packages gave
		"/usr/share/podman/87-podman-bridge.conflist relocated podman-bridge",
		"/usr/share/minikube/deferred/etc/containerd/config.toml deferred containerd-config",
		"/etc/containerd/config.toml edited containerd-cri-disabled",
		"/etc/resolv.conf retargeted resolv",
		"/usr/lib/systemd/system/rootfs-trim-boot.service added ",
		"/usr/share/minikube created ",
		"/usr/share/minikube/templates/crictl.yaml template crictl",
	}
	if d := cmp.Diff(wantFiles, files); d != "" {
		t.Errorf("file components (-want +got):\n%s", d)
	}
	wantPkgs := []string{"library cri-o@1.31.0 ", "library podman@4.9 ", "library containerd@ ", "library systemd@252 ",
		"application github.com/moby/buildkit@v0.17.0 pkg:golang/github.com/moby/buildkit@v0.17.0 /usr/bin/buildctl /usr/bin/buildkitd",
		"application github.com/containerd/nerdctl@ pkg:golang/github.com/containerd/nerdctl /usr/local/bin/nerdctl"}
	if d := cmp.Diff(wantPkgs, pkgs); d != "" {
		t.Errorf("package components (-want +got):\n%s", d)
	}
	var notes []string
	for _, a := range *bom.Annotations {
		notes = append(notes, string((*a.Subjects)[0])+": "+a.Text)
	}
	wantNotes := []string{
		"rootfs-trim:package:cri-o: rootfs-trim removed /etc/crictl.yaml (package cri-o) by rule crio-crictl (removed): minikube writes it",
		"rootfs-trim:output: rootfs-trim removed /etc/overlay.conf (package (overlay or script)) by rule fallback (removed): no package",
	}
	if d := cmp.Diff(wantNotes, notes); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
}

// occurrences are c's evidence of occurrence, each after a space.
func occurrences(c cdx.Component) string {
	var s string
	if c.Evidence != nil && c.Evidence.Occurrences != nil {
		for _, o := range *c.Evidence.Occurrences {
			s += " " + o.Location
		}
	}
	return s
}

// TestGoModuleOccursInOutput: a Go module's files are where the output
// has them: one removed is no occurrence, one relocated occurs where it
// went.
func TestGoModuleOccursInOutput(t *testing.T) {
	d := New()
	d.AddPackages(GoModule("example.com/tool", "v1.0.0", "usr/bin/kept", "usr/bin/gone", "usr/bin/moved"))
	d.AddChanges([]manifest.Change{
		{Kind: contract.Removed, Path: "usr/bin/gone", Type: "file", Package: "example.com/tool", Rule: "r", Reason: "x"},
		{Kind: contract.Relocated, Path: "usr/bin/moved", To: "usr/libexec/moved", Type: "file", Package: "example.com/tool", Rule: "r", Reason: "x"},
	})
	bom := checkDocument(t, encode(t, d))
	if got, want := occurrences((*bom.Components)[0]), " /usr/bin/kept /usr/libexec/moved"; got != want {
		t.Errorf("occurrences %q, want %q", got, want)
	}
}

func propValue(c cdx.Component, name string) string {
	if c.Properties == nil {
		return ""
	}
	for _, p := range *c.Properties {
		if p.Name == Namespace+name {
			return p.Value
		}
	}
	return ""
}

// TestMovedFileRecordsItsOrigin: a relocated or deferred file names the
// path its package put it at, as a property and as its pedigree's
// ancestor, and carries its digest.
func TestMovedFileRecordsItsOrigin(t *testing.T) {
	d := New()
	d.AddChanges(everyKind()[1:2])
	bom := checkDocument(t, encode(t, d))
	c := (*bom.Components)[0]
	got := []string{propValue(c, "from"), (*c.Pedigree.Ancestors)[0].Name, (*c.Hashes)[0].Value, c.BOMRef}
	want := []string{"/etc/cni/net.d/87-podman-bridge.conflist", "/etc/cni/net.d/87-podman-bridge.conflist", strings.Repeat("b", 64),
		"rootfs-trim:file:/usr/share/podman/87-podman-bridge.conflist"}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

// TestEveryManifestKindPlaced: each kind docs/schema/manifest.json
// lists has a row in placements, so a new kind cannot land unplaced.
func TestEveryManifestKindPlaced(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(schematest.Dir(t), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, def := range s.Defs {
		kinds = append(kinds, def.Properties["kind"].Enum...)
	}
	if len(kinds) == 0 {
		t.Fatal("no kind enum found in manifest.json")
	}
	for _, k := range kinds {
		if _, ok := placements[contract.Kind(k)]; !ok {
			t.Errorf("kind %q has no placement", k)
		}
	}
}

// TestReproducible: the same run gives the same bytes, whatever the
// order the changes came in; the time is the one given.
func TestReproducible(t *testing.T) {
	build := func(cs []manifest.Change) []byte {
		d := New()
		d.AddPackages(Package{Name: "cri-o", Version: "1"})
		d.AddChanges(cs)
		return encode(t, d)
	}
	cs := everyKind()
	rev := append([]manifest.Change(nil), cs...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	a, b := build(cs), build(rev)
	if !bytes.Equal(a, b) {
		t.Errorf("two runs differ:\n%s", cmp.Diff(string(a), string(b)))
	}
	if n := strings.Count(string(a), `"2023-11-14T22:13:20Z"`); n != 3 { // metadata and two annotations
		t.Errorf("the given time appears %d times, want 3", n)
	}
}
