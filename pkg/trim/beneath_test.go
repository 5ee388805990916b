package trim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// TestAddedFilesComeFromLoadTime: apply writes the sources the rule set
// loaded (beneath the rules directory), not whatever the path holds later:
// a source swapped for a symlink to a host file after loading must not
// bring that file into the image.
func TestAddedFilesComeFromLoadTime(t *testing.T) {
	rulesDir := t.TempDir()
	files := map[string]string{
		"a.yaml":           "package: p\nrules:\n  - name: r\n    match: [etc/strip-me]\n    action: strip\n    reason: x\nadd:\n  - path: etc/added.conf\n    source: files/added.conf\n    reason: x\n",
		"t.yaml":           "templates:\n  - name: t\n    source: files/t.tmpl\n    dest: etc/t.conf\n    reason: x\n",
		"files/added.conf": "from the rules\n",
		"files/t.tmpl":     "{{ .Runtime }}\n",
	}
	for name, data := range files {
		p := filepath.Join(rulesDir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := rules.Load(rulesDir)
	if err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(host, []byte("root:SECRETHASH:19000::::::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"files/added.conf", "files/t.tmpl"} {
		p := filepath.Join(rulesDir, name)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(host, p); err != nil {
			t.Fatal(err)
		}
	}
	target := t.TempDir()
	if err := os.MkdirAll(filepath.Join(target, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A file of package p, so that p's additions are made.
	if err := os.WriteFile(filepath.Join(target, "etc", "strip-me"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyDir(context.Background(), target, Options{Set: set, Owners: owners.New()}, false); err != nil {
		// Refusing is fine too; copying the host file is not.
		if strings.Contains(err.Error(), "SECRETHASH") {
			t.Fatalf("error quotes the host file: %v", err)
		}
		return
	}
	for name, want := range map[string]string{"etc/added.conf": "from the rules\n", contract.TemplateDir + "/t.tmpl": "{{ .Runtime }}\n"} {
		got, err := os.ReadFile(filepath.Join(target, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s = %q, want %q (what the rules held when loaded)", name, got, want)
		}
	}
}
