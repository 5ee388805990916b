package sbom

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/schematest"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
)

// sharedFixture is a file of shared/fixtures, which CI checks out beside
// the repository; a worktree finds it further up.
func sharedFixture(t testing.TB, name string) string {
	t.Helper()
	for dir := filepath.Dir(schematest.Root(t)); ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "fixtures", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if dir == filepath.Dir(dir) {
			t.Fatalf("shared/fixtures/%s not found beside the checkout or above it", name)
		}
	}
}

func buildrootSBOM(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(sharedFixture(t, "buildroot-sbom/qemu_x86_64_defconfig.cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestEnrichBuildroot: Buildroot's own SBOM, enriched, keeps every
// component, bom-ref and field it had, gains what rootfs-trim did (on
// Buildroot's component of the package, not a second one), and is still
// CycloneDX 1.6 that cyclonedx-go reads in full.
func TestEnrichBuildroot(t *testing.T) {
	in := buildrootSBOM(t)
	d, err := Enrich(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	d.AddPackages(Package{Name: "busybox"}, Package{Name: "ifupdown-scripts"}, Package{Name: "cri-o", Version: "1.31.0"})
	d.AddChanges([]manifest.Change{
		{Kind: contract.Removed, Path: "etc/network/interfaces", Type: "file", Package: "ifupdown-scripts", Rule: "no-ifupdown", Reason: "systemd-networkd configures the network"},
		{Kind: contract.Relocated, Path: "etc/crictl.yaml", To: "usr/share/cri-o/crictl.yaml", Type: "file", Package: "cri-o", Rule: "crictl", Reason: "minikube writes its own"},
	})
	out := encode(t, d)
	checkAdded(t, out, 61)

	var before, after map[string]any
	if err := json.Unmarshal(in, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &after); err != nil {
		t.Fatal(err)
	}
	inComps, outComps := before["components"].([]any), after["components"].([]any)
	if len(inComps) != 61 {
		t.Fatalf("fixture has %d components, want 61", len(inComps))
	}
	if d := cmp.Diff(inComps, outComps[:len(inComps)]); d != "" {
		t.Errorf("Buildroot's components changed:\n%s", d)
	}
	var added []string
	for _, c := range outComps[len(inComps):] {
		added = append(added, c.(map[string]any)["bom-ref"].(string))
	}
	if d := cmp.Diff([]string{"rootfs-trim:package:cri-o", "rootfs-trim:file:/usr/share/cri-o/crictl.yaml"}, added); d != "" {
		t.Errorf("added components (-want +got):\n%s", d)
	}
	refsIn, refsOut := map[string]bool{}, map[string]bool{}
	collectRefs(before, refsIn)
	collectRefs(after, refsOut)
	for r := range refsIn {
		if !refsOut[r] {
			t.Errorf("bom-ref %q lost", r)
		}
	}
	for _, k := range []string{"$schema", "bomFormat", "specVersion", "dependencies", "vulnerabilities"} {
		if d := cmp.Diff(before[k], after[k]); d != "" {
			t.Errorf("%s changed:\n%s", k, d)
		}
	}
	meta, metaIn := after["metadata"].(map[string]any), before["metadata"].(map[string]any)
	if d := cmp.Diff(metaIn["component"], meta["component"]); d != "" {
		t.Errorf("metadata.component changed:\n%s", d)
	}
	tools := meta["tools"].(map[string]any)["components"].([]any)
	if d := cmp.Diff(metaIn["tools"].(map[string]any)["components"], tools[:1]); d != "" || len(tools) != 2 {
		t.Errorf("tools: Buildroot's changed (%s) or rootfs-trim's missing (%d tools)", d, len(tools))
	}
	subject := after["annotations"].([]any)[0].(map[string]any)["subjects"].([]any)[0]
	if subject != "ifupdown-scripts" {
		t.Errorf("the removed file's annotation is on %v, want Buildroot's ifupdown-scripts", subject)
	}
}

// TestEnrichRefuses: a document that is no CycloneDX 1.6 JSON is refused
// before anything is written.
func TestEnrichRefuses(t *testing.T) {
	for _, doc := range []string{
		`{"bomFormat": "CycloneDX", "specVersion": "1.7", "version": 1}`,
		`{"bomFormat": "SPDX", "specVersion": "1.6", "version": 1}`,
		`[]`,
		`{"bomFormat": "CycloneDX", "specVersion": "1.6"`,
		`{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": {}}`,
		`{"bomFormat": "CycloneDX", "specVersion": "1.6", "annotations": 1}`,
		`{"bomFormat": "CycloneDX", "specVersion": "1.6", "metadata": []}`,
		`{"bomFormat": "CycloneDX", "specVersion": "1.6", "metadata": {"tools": "x"}}`,
		`{"bomFormat": "CycloneDX", "specVersion": "1.6", "metadata": {"tools": {"components": {}}}}`,
		`{"bomFormat": "CycloneDX", "specVersion": "1.6", "serialNumber": "s", "version": 1.5}`,
	} {
		if _, err := Enrich(bytes.NewReader([]byte(doc))); err == nil {
			t.Errorf("%s: accepted", doc)
		}
	}
}

// TestEnrichNewVersion: an enriched document with a serial number is the
// next version of that BOM (CycloneDX: same serial, version incremented);
// none is made up for one without.
func TestEnrichNewVersion(t *testing.T) {
	const doc = `{"bomFormat": "CycloneDX", "specVersion": "1.6", "serialNumber": "urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79", "version": 4}`
	d, err := Enrich(bytes.NewReader([]byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	bom := checkAdded(t, encode(t, d), 0)
	if bom.Version != 5 || bom.SerialNumber != "urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79" {
		t.Errorf("version %d serial %q, want 5 and the input's", bom.Version, bom.SerialNumber)
	}
}

// FuzzEnrich: whatever the input, Enrich refuses it, or Encode writes
// it (apply writes its output in between) as a document Enrich reads
// again.
func FuzzEnrich(f *testing.F) {
	f.Add(buildrootSBOM(f))
	f.Add([]byte(`{"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1, "metadata": {"tools": []}}`))
	f.Add([]byte(`{"bomFormat": "CycloneDX", "specVersion": "1.6", "serialNumber": "x", "version": 1.5}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := Enrich(bytes.NewReader(in))
		if err != nil {
			return
		}
		d.AddPackages(Package{Name: "busybox", Version: "1"})
		d.AddChanges(everyKind())
		var out bytes.Buffer
		if err := d.Encode(&out, Options{Tool: "t", Time: epoch}); err != nil {
			t.Fatalf("Enrich took a document that Encode refuses: %v", err) // the caller writes its output in between
		}
		if _, err := Enrich(&out); err != nil {
			t.Fatalf("output not read again: %v", err)
		}
	})
}

// TestEnrichKeepsRefsUnique: a bom-ref of the input that one of ours
// would repeat stays the input's; ours gets a number.
func TestEnrichKeepsRefsUnique(t *testing.T) {
	const doc = `{"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1,
		"components": [{"bom-ref": "rootfs-trim:package:cri-o", "type": "library", "name": "not-cri-o"}]}`
	d, err := Enrich(bytes.NewReader([]byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	d.AddPackages(Package{Name: "cri-o", Version: "1"})
	bom := checkAdded(t, encode(t, d), 1)
	var refs []string
	for _, c := range *bom.Components {
		refs = append(refs, c.BOMRef)
	}
	if diff := cmp.Diff([]string{"rootfs-trim:package:cri-o", "rootfs-trim:package:cri-o#2"}, refs); diff != "" {
		t.Error(diff)
	}
}

// TestEnrichGoModuleByPurl: a Go module the input already has (same
// purl) is not added again, and one it lacks a bom-ref for is given one;
// the same module at another version is another component.
func TestEnrichGoModuleByPurl(t *testing.T) {
	const doc = `{"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1, "components": [
		{"bom-ref": "pkg:golang/example.com/a@v1.0.0", "type": "library", "name": "example.com/a", "version": "v1.0.0", "purl": "pkg:golang/example.com/a@v1.0.0"},
		{"type": "library", "name": "example.com/b", "purl": "pkg:golang/example.com/b@v2.0.0"},
		{"bom-ref": "c-old", "type": "library", "name": "example.com/c", "version": "v0.9.0", "purl": "pkg:golang/example.com/c@v0.9.0"}]}`
	d, err := Enrich(bytes.NewReader([]byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	d.AddPackages(GoModule("example.com/a", "v1.0.0", "usr/bin/a"), GoModule("example.com/b", "v2.0.0", "usr/bin/b"), GoModule("example.com/c", "v1.0.0", "usr/bin/c"))
	d.AddChanges([]manifest.Change{{Kind: contract.Removed, Path: "etc/b.conf", Type: "file", Package: "example.com/b", Rule: "r", Reason: "x"}})
	bom := checkAdded(t, encode(t, d), 3)
	var got []string
	for _, c := range *bom.Components {
		got = append(got, c.BOMRef+" "+c.PackageURL)
	}
	want := []string{"pkg:golang/example.com/a@v1.0.0 pkg:golang/example.com/a@v1.0.0", "rootfs-trim:package:example.com/b pkg:golang/example.com/b@v2.0.0",
		"c-old pkg:golang/example.com/c@v0.9.0", "rootfs-trim:package:example.com/c pkg:golang/example.com/c@v1.0.0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("components (-want +got):\n%s", diff)
	}
	if s := (*(*bom.Annotations)[0].Subjects)[0]; s != "rootfs-trim:package:example.com/b" {
		t.Errorf("the removed file's annotation is on %s, want the input's component of example.com/b", s)
	}
}
