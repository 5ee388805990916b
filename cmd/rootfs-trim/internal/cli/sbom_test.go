package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/schematest"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners/gobintest"
)

// TestSBOMGoModules: apply --sbom of a tree of real Go binaries, audit
// --sbom of the archive it made (whose index names the modules, not their
// versions) and an enrichment that has one module already: each main
// module is one application component with its purl, its version as go
// version -m says ("(devel)" and a GOPATH build none) and its binaries
// as occurrences; the input's component is not repeated. Each document
// is CycloneDX 1.6 that cyclonedx-go reads.
func TestSBOMGoModules(t *testing.T) {
	b := gobintest.New(t)
	bins := map[string]string{
		"usr/local/bin/buildkitd": b.Module("example.com/buildkit", "v1.2.3"),
		"usr/local/bin/buildctl":  b.Module("example.com/buildkit", "v1.2.3"),
		"usr/local/bin/devel":     b.Devel("example.com/develtool"),
		"usr/bin/containerd":      b.GOPATH("example.com/containerd/cmd/containerd"),
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	want := map[string][]string{} // purl -> locations, from go version -m
	for p, bin := range bins {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(tree, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, p), data, 0o755); err != nil {
			t.Fatal(err)
		}
		purl := purlOf(t, b.VersionM(bin))
		want[purl] = append(want[purl], "/"+p)
	}
	for _, locs := range want {
		slices.Sort(locs)
	}
	if len(want) != 3 || want["pkg:golang/example.com/buildkit@v1.2.3"] == nil {
		t.Fatalf("go version -m does not say what the builds mean to record: %v", want)
	}

	in := filepath.Join(dir, "build.cdx.json")
	if err := os.WriteFile(in, []byte(`{"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1, "components": [
		{"bom-ref": "bk", "type": "application", "name": "example.com/buildkit", "version": "v1.2.3", "purl": "pkg:golang/example.com/buildkit@v1.2.3"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, sbomApply, sbomAudit, sbomIn := filepath.Join(dir, "out.tar"), filepath.Join(dir, "apply.cdx.json"), filepath.Join(dir, "audit.cdx.json"), filepath.Join(dir, "in.cdx.json")
	for _, args := range [][]string{
		{"apply", "--rules", exampleRules, "--quiet", "--sbom", sbomApply, tree, out},
		{"audit", "--rules", exampleRules, "--sbom", sbomAudit, out},
		{"apply", "--rules", exampleRules, "--quiet", "--sbom-in", in, "--sbom", sbomIn, tree, filepath.Join(dir, "out2.tar")},
	} {
		if code, _, stderr := run(t, nil, args...); code != ExitOK {
			t.Fatalf("%s: exit %d:\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	for _, tc := range []struct {
		doc  string
		want map[string][]string
	}{
		{sbomApply, want},
		{sbomAudit, want},
		{sbomIn, map[string][]string{"pkg:golang/example.com/buildkit@v1.2.3": nil, // the input's, as it was
			"pkg:golang/example.com/develtool": want["pkg:golang/example.com/develtool"], "pkg:golang/example.com/containerd/cmd/containerd": want["pkg:golang/example.com/containerd/cmd/containerd"]}},
	} {
		if diff := cmp.Diff(tc.want, goComponents(t, tc.doc)); diff != "" {
			t.Errorf("%s: Go modules (-want +got):\n%s", filepath.Base(tc.doc), diff)
		}
	}
}

// purlOf is the purl of a binary's main module, from go version -m's
// mod line, or for a GOPATH build its path line; no version for (devel).
func purlOf(t *testing.T, versionM string) string {
	t.Helper()
	if m := regexp.MustCompile(`(?m)^\tmod\t(\S+)\t(\S+)`).FindStringSubmatch(versionM); m != nil {
		if m[2] == "(devel)" {
			return "pkg:golang/" + m[1]
		}
		return "pkg:golang/" + m[1] + "@" + m[2]
	}
	if m := regexp.MustCompile(`(?m)^\tpath\t(\S+)$`).FindStringSubmatch(versionM); m != nil {
		return "pkg:golang/" + m[1]
	}
	t.Fatalf("go version -m names no path:\n%s", versionM)
	return ""
}

// goComponents validates the SBOM at name, reads it with cyclonedx-go
// and returns its Go components: purl -> occurrences. Each must be an
// application whose version is its purl's.
func goComponents(t *testing.T, name string) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := schematest.Valid(schematest.CycloneDX(t), doc); err != nil {
		t.Fatalf("%s: not CycloneDX 1.6: %v", name, err)
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(doc), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range *bom.Components {
		if !strings.HasPrefix(c.PackageURL, "pkg:golang/") {
			continue
		}
		if _, v, _ := strings.Cut(c.PackageURL, "@"); c.Type != cdx.ComponentTypeApplication || v != c.Version {
			t.Errorf("%s: component %s: type %s, version %q", filepath.Base(name), c.PackageURL, c.Type, c.Version)
		}
		var locs []string
		if c.Evidence != nil && c.Evidence.Occurrences != nil {
			for _, o := range *c.Evidence.Occurrences {
				locs = append(locs, o.Location)
			}
		}
		if _, dup := got[c.PackageURL]; dup {
			t.Errorf("%s: %s twice", filepath.Base(name), c.PackageURL)
		}
		got[c.PackageURL] = locs
	}
	return got
}
