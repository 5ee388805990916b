package cli

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/schematest"
	"github.com/rootfs-trim/rootfs-trim/pkg/check"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/diff"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
)

const (
	exampleDir   = "../../../../examples/minikube"
	exampleRules = "../../../../rules"
)

// listDoc is list --json's document: listJSON streams it in pieces.
type listDoc struct {
	listHead
	Entries  []listEntry   `json:"entries"`
	Segments []listSegment `json:"segments,omitempty"`
}

// Every JSON document rootfs-trim writes has a committed schema with
// exactly the fields its Go type writes: a field added, renamed or made
// optional without the schema fails here. The SBOM (--sbom) is the one
// exception: CycloneDX forbids a top-level field of ours, so it has no
// schema field and follows CycloneDX's schema (TestOutputsValidate).
func TestSchemasMatchTypes(t *testing.T) {
	for _, tc := range []struct {
		schema string
		typ    reflect.Type
		id     string // the schema field's value
	}{
		{"list", reflect.TypeFor[listDoc](), listSchema},
		{"audit", reflect.TypeFor[auditReport](), auditSchema},
		{"check", reflect.TypeFor[checkReport](), checkSchema},
		{"manifest", reflect.TypeFor[manifest.Manifest](), manifest.Schema},
		{"index", reflect.TypeFor[contract.Index](), contract.IndexSchema},
		{"lock", reflect.TypeFor[check.Lock](), check.LockSchema},
		{"diff", reflect.TypeFor[diff.Result](), diff.Schema},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			schematest.CheckFields(t, tc.typ, tc.schema)
			s := schematest.Schema(t, tc.schema)
			if c := s.Properties["schema"]; c == nil || c.Const == nil || *c.Const != tc.id {
				t.Errorf("docs/schema/%s.json: want schema {\"const\": %q}", tc.schema, tc.id)
			}
		})
	}
}

// The checks above can fail: a field the schema lacks, a property no
// field writes, and a document with a property the schema does not name.
func TestSchemaCheckCatchesChanges(t *testing.T) {
	type extra struct {
		auditReport
		Extra string `json:"extra"`
	}
	type missing struct {
		Schema   string `json:"schema"`
		Findings []struct {
			Package string `json:"package,omitempty"`
		} `json:"findings"`
	}
	s := schematest.Schema(t, "audit")
	for name, tc := range map[string]struct {
		typ  reflect.Type
		want []string
	}{
		"added field":   {reflect.TypeFor[extra](), []string{`field Extra ("extra") is not in the schema`}},
		"missing field": {reflect.TypeFor[missing](), []string{`property "entries" is not a field`, `property "severity" is not a field`, `"package" is omitted when empty, but the schema requires it`}},
	} {
		got := strings.Join(schematest.Fields(tc.typ, s), "\n")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: problems do not say %q:\n%s", name, w, got)
			}
		}
	}
	doc := `{"schema": "rootfs-trim/audit/v3", "entries": 1, "findings": [{"input": "i", "package": "p", "severity": "error",
		"check": "offender", "reason": "r", "pos": {"file": "f", "line": 1}%s}]%s}`
	if err := schematest.Valid(s, []byte(strings.NewReplacer("%s", "").Replace(doc))); err != nil {
		t.Fatalf("the base document is refused: %v", err)
	}
	for _, bad := range [][2]string{{`, "new": 1`, ``}, {``, `, "new": 1`}} {
		if err := schematest.Valid(s, []byte(strings.Replace(strings.Replace(doc, "%s", bad[0], 1), "%s", bad[1], 1))); err == nil {
			t.Errorf("a document with a property the schema does not name validates (%q)", bad)
		}
	}
	if err := schematest.Valid(s, []byte(strings.NewReplacer("%s", "", "v3", "v4").Replace(doc))); err == nil {
		t.Error("a document of another schema version validates")
	}
}

// cycloneDX stands, among the steps below, for CycloneDX's own schema.
const cycloneDX = "CycloneDX 1.6"

// What the commands really write validates: list, audit, check and
// its lock, apply's manifest and the index it puts into the image.
func TestOutputsValidate(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(exampleDir, "target")
	fileList := filepath.Join(exampleDir, "packages-file-list.txt")
	out := filepath.Join(dir, "out")
	mf := filepath.Join(dir, "manifest.json")
	cpio := filepath.Join(dir, "out.cpio")
	lock := filepath.Join(dir, "check.lock")
	bom, bomImage := filepath.Join(dir, "out.cdx.json"), filepath.Join(dir, "cpio.cdx.json")
	steps := []struct {
		schema string
		args   []string
		file   string // the document, when it is not stdout
		code   int
	}{
		{"list", []string{"list", "--json", target}, "", ExitOK},
		{"audit", []string{"audit", "--rules", exampleRules, "--packages-file-list", fileList, "--format", "json", target}, "", ExitFindings},
		{"manifest", []string{"apply", "--rules", exampleRules, "--packages-file-list", fileList, "--manifest", mf, target, out}, mf, ExitOK},
		{"index", []string{"repack", "--format", "newc", out, cpio}, filepath.Join(out, contract.IndexPath), ExitOK},
		{"list", []string{"list", "--json", cpio}, "", ExitOK},
		{"audit", []string{"audit", "--rules", exampleRules, "--packages-file-list", fileList, "--format", "json", cpio}, "", ExitOK},
		{"check", []string{"check", "--rules", exampleRules, "--lock", filepath.Join(exampleDir, "check.lock"), "--packages-file-list", fileList,
			"--show-info", filepath.Join(exampleDir, "show-info.json"), "--format", "json", target}, "", ExitOK},
		// The ISO's lock against the example: other versions, the
		// names packages were seen as, notes; the example's runtime links,
		// which no ISO package ships, are a package the lock does not know.
		{"check", []string{"check", "--rules", exampleRules, "--lock", filepath.Join(exampleRules, "check.lock"), "--packages-file-list", fileList,
			"--allow-new", "--format", "json", target}, "", ExitOK},
		{"lock", []string{"check", "--rules", exampleRules, "--lock", lock, "--update-lock", "--packages-file-list", fileList, target}, lock, ExitOK},
		// The source tree against what apply made of it: files moved,
		// offenders gone; and two manifests.
		{"diff", []string{"diff", "--rules", exampleRules, "--packages-file-list", fileList, "--report", "json", target, out}, "", ExitFindings},
		{"diff", []string{"diff", "--report", "json", mf, mf}, "", ExitOK},
		// The SBOMs, CycloneDX's: of an apply, and of the image it made.
		{cycloneDX, []string{"apply", "--rules", exampleRules, "--packages-file-list", fileList, "--sbom", bom, target, filepath.Join(dir, "out2")}, bom, ExitOK},
		{cycloneDX, []string{"audit", "--rules", exampleRules, "--sbom", bomImage, cpio}, bomImage, ExitOK},
	}
	for _, st := range steps {
		code, stdout, stderr := run(t, nil, st.args...)
		if code != st.code {
			t.Fatalf("%s: exit %d, want %d:\n%s", strings.Join(st.args, " "), code, st.code, stderr)
		}
		doc := []byte(stdout)
		if st.file != "" {
			var err error
			if doc, err = os.ReadFile(st.file); err != nil {
				t.Fatal(err)
			}
		}
		if st.schema == cycloneDX {
			if err := schematest.Valid(schematest.CycloneDX(t), doc); err != nil {
				t.Errorf("%s: not CycloneDX 1.6: %v", strings.Join(st.args, " "), err)
			}
			continue
		}
		schematest.Validate(t, st.schema, doc)
	}
	// An initrd of two segments: the list has its segments.
	initrd := filepath.Join(dir, "initrd.img")
	raw, rerr := os.ReadFile(cpio)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	if err := os.WriteFile(initrd, append(raw, gz.Bytes()...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, nil, "list", "--json", initrd)
	if code != ExitOK || !strings.Contains(stdout, `"segments":[`) {
		t.Fatalf("list --json of two segments: exit %d, no segments:\n%s%s", code, stdout[max(0, len(stdout)-300):], stderr)
	}
	schematest.Validate(t, "list", []byte(stdout))
	// The example's committed lock is an output too (test/packages
	// validates the ISO's and the fixtures').
	data, err := os.ReadFile(filepath.Join(exampleDir, "check.lock"))
	if err != nil {
		t.Fatal(err)
	}
	schematest.Validate(t, "lock", data)
}
