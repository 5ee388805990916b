package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The version comes from the repository's VERSION file and nowhere else:
// `version` and the manifest print it, never a placeholder.
func TestVersionIsTheVERSIONFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(data))
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`).MatchString(want) {
		t.Errorf("VERSION holds %q: want MAJOR.MINOR.PATCH[-PRERELEASE], no leading v", want)
	}
	if string(data) != want+"\n" {
		t.Errorf("VERSION is %q: want the version and one newline", data)
	}
	code, stdout, stderr := run(t, nil, "version")
	if code != ExitOK || stdout != "rootfs-trim "+want+"\n" {
		t.Errorf("version: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, "rootfs-trim "+want+"\n")
	}
}

// A manifest names the tool with the same version.
func TestManifestToolVersion(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(target, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifestPath := filepath.Join(dir, "manifest.json")
	code, _, stderr := run(t, nil, "apply", "--rules", filepath.Join("..", "..", "..", "..", "rules"), "--manifest", manifestPath, target)
	if code != ExitOK {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"tool": "rootfs-trim ` + Version + `"`; !strings.Contains(string(data), want) {
		t.Errorf("manifest lacks %s:\n%s", want, data)
	}
}
