package boot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBootSplice boots initrds that apply rewrote by reusing the input's
// compressed bytes (issue #18): gzip with deflate blocks copied bit for
// bit, legacy lz4 and multi-block xz with whole blocks copied and a few
// compressed anew. The kernel must unpack every entry as GNU cpio extracts
// it from the same image. Only the unpacked rootfs is checked: what the
// guest's render does is TestBootRender's. The gzip image boots with a
// second segment whose entries land elsewhere than at their names
// (alias_test.go).
func TestBootSplice(t *testing.T) {
	fx := newBootFixture(t)
	work := fx.work
	// After every entry apply changes (var/ sorts last), so that whole
	// 8 MiB lz4 blocks lie where nothing changed and are copied.
	writeBulk(t, filepath.Join(fx.tree, "var/lib/boot-test/bulk"), 20<<20)
	gz := filepath.Join(work, "rootfs.cpio.gz")
	makeCpioGz(t, fx.tree, gz)
	raw := gunzip(t, gz)

	for _, tc := range []struct {
		name, ext  string
		tool       string
		compress   []string // raw cpio on stdin, compressed on stdout
		decompress []string
		compressor string // the manifest's, a regexp
	}{
		{"gzip", ".gz", "gzip", []string{"gzip", "-9", "-n", "-c"}, []string{"gzip", "-dc"},
			`^gzip splice: [1-9][0-9]* block\(s\) copied from the input`},
		{"lz4-legacy", ".lz4", "lz4", []string{"lz4", "-l", "-9", "-q", "-c"}, []string{"lz4", "-dc"},
			`^lz4-legacy splice: [1-9][0-9]* block\(s\) copied from the input, [1-9][0-9]* compressed`},
		// 1 MiB blocks: the fixture (busybox and rootfs-trim) makes a
		// dozen, and the kernel reads the new index.
		{"xz-blocks", ".xz", "xz", []string{"xz", "-6", "-C", "crc32", "-T2", "--block-size=1MiB", "-c"}, []string{"xz", "-dc"},
			`^xz splice: [1-9][0-9]* block\(s\) copied from the input, [1-9][0-9]* compressed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := exec.LookPath(tc.tool); err != nil {
				missing(t, "%s not found (apt-get install %s)", tc.tool, tc.tool)
			}
			input := filepath.Join(work, tc.name+".cpio"+tc.ext)
			writeFile(t, input, runFilter(t, raw, tc.compress))
			image := filepath.Join(work, tc.name+"-image.cpio"+tc.ext)
			manifest := filepath.Join(work, tc.name+".json")
			fx.apply(t, "--manifest", manifest, input, image)
			compressor := manifestCompressor(t, manifest)
			if !regexp.MustCompile(tc.compressor).MatchString(compressor) {
				t.Fatalf("the manifest says the image was written by %q, not the splice path (%s)", compressor, tc.compressor)
			}
			t.Logf("%s", compressor)

			// The same stream as the full path writes.
			full := filepath.Join(work, tc.name+"-full.cpio"+tc.ext)
			fx.apply(t, "--recompress=full", input, full)
			spliced := runFilter(t, readFileBytes(t, image), tc.decompress)
			if !bytes.Equal(spliced, runFilter(t, readFileBytes(t, full), tc.decompress)) {
				t.Fatal("the spliced image decompresses to another stream than --recompress=full's")
			}

			// GNU cpio's view of the image, through archiveManifest (which
			// reads gzip).
			asGz := filepath.Join(work, tc.name+"-ref.cpio.gz")
			writeFile(t, asGz, runFilter(t, spliced, []string{"gzip", "-1", "-n", "-c"}))
			want := archiveManifest(t, asGz, filepath.Join(work, tc.name+"-extracted"))

			// The gzip image gets a second segment (issue 23) whose
			// entries the kernel makes elsewhere than at their names:
			// the image's own entries are unpacked first and compared as
			// for the others.
			booted := image
			if tc.name == "gzip" {
				booted = appendAliasSegment(t, image)
				checkAliasTools(t, fx, booted)
			}
			r := fx.boot(t, booted, "boot and poweroff")
			checkUnpacked(t, want, r.lines(t, "manifest"))
			if booted != image {
				checkAliasGuest(t, booted, r.lines(t, "manifest"))
			}
		})
	}
}

// writeBulk writes n bytes of numbered lines, which compress like text.
func writeBulk(t *testing.T, path string, n int) {
	t.Helper()
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%d bulk line of the boot test's splice case\n", i*7919)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b.Bytes()[:n])
}

// runFilter runs argv with in on stdin and returns its stdout.
func runFilter(t *testing.T, in []byte, argv []string) []byte {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GZIP=", "XZ_DEFAULTS=", "XZ_OPT=")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, &stderr)
	}
	return out
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// manifestCompressor is what apply's manifest says wrote the output.
func manifestCompressor(t *testing.T, path string) string {
	t.Helper()
	var m struct {
		Output struct {
			Compressor string `json:"compressor"`
		} `json:"output"`
	}
	if err := json.Unmarshal(readFileBytes(t, path), &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m.Output.Compressor
}
