package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secret stands for a host file such as /etc/shadow: no error may quote it
// and no rule set may carry it.
const secret = "root:$6$SECRETHASH$xyz:19000:0:99999:7:::\n"

// outsideDir makes a directory beside the rules directory holding a
// "shadow" file, as /etc would.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hostetc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shadow"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// TestSourcesStayBeneathRulesDir: a symlink anywhere on a source's path that
// leads out of the rules directory is refused at the rule's file:line,
// naming the link; the red team's rules/files/hostetc -> /etc copied the
// host's /etc/shadow into the image.
func TestSourcesStayBeneathRulesDir(t *testing.T) {
	const addDoc = "package: p\nadd:\n  - path: etc/x\n    source: files/hostetc/shadow\n    reason: x\n"
	const tmplDoc = "templates:\n  - name: t\n    source: files/hostetc/shadow\n    dest: etc/x\n    reason: x\n"
	tests := []struct {
		name string
		doc  string
		link func(t *testing.T, rulesDir, outside string)
		want []string
	}{
		{"add, absolute link to a directory", addDoc,
			func(t *testing.T, dir, outside string) { symlink(t, outside, filepath.Join(dir, "files", "hostetc")) },
			[]string{"a.yaml:4: add etc/x: source files/hostetc/shadow: files/hostetc is a symlink leading out of the rules directory"}},
		{"add, relative link to a directory", addDoc,
			func(t *testing.T, dir, outside string) {
				rel, err := filepath.Rel(filepath.Join(dir, "files"), outside)
				if err != nil {
					t.Fatal(err)
				}
				symlink(t, rel, filepath.Join(dir, "files", "hostetc"))
			},
			[]string{"a.yaml:4: add etc/x: source files/hostetc/shadow: files/hostetc is a symlink leading out of the rules directory"}},
		{"add, link on the last component", addDoc,
			func(t *testing.T, dir, outside string) {
				symlink(t, filepath.Join(outside, "shadow"), filepath.Join(dir, "files", "hostetc", "shadow"))
			},
			[]string{"a.yaml:4: add etc/x: source files/hostetc/shadow: files/hostetc/shadow is a symlink leading out of the rules directory"}},
		{"template, link to a directory", tmplDoc,
			func(t *testing.T, dir, outside string) { symlink(t, outside, filepath.Join(dir, "files", "hostetc")) },
			[]string{"a.yaml:3: template t: source files/hostetc/shadow: files/hostetc is a symlink leading out of the rules directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			outside := outsideDir(t)
			dir := writeRules(t, map[string]string{"a.yaml": tc.doc})
			tc.link(t, dir, outside)
			set, err := Load(dir)
			if err == nil {
				for _, a := range set.Additions() {
					t.Errorf("loaded add %s from %s", a.Path, a.Source)
				}
				t.Fatal("Load succeeded")
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", msg, w)
				}
			}
			if strings.Contains(msg, "SECRETHASH") {
				t.Errorf("error quotes the outside file:\n%s", msg)
			}
		})
	}
}

// TestSymlinkedRuleFiles: a *.yaml that leads out of the rules directory is
// refused without being read; one that leads to a non-YAML file inside it
// is refused without quoting that file.
func TestSymlinkedRuleFiles(t *testing.T) {
	t.Run("out of the directory", func(t *testing.T) {
		outside := outsideDir(t)
		dir := writeRules(t, map[string]string{"policy.yaml": okPolicy})
		symlink(t, filepath.Join(outside, "shadow"), filepath.Join(dir, "shadow.yaml"))
		_, err := Load(dir)
		if err == nil {
			t.Fatal("Load succeeded")
		}
		msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		if !strings.Contains(msg, "shadow.yaml:1: a symlink leading out of the rules directory") {
			t.Errorf("error does not name the link:\n%s", msg)
		}
		if strings.Contains(msg, "SECRETHASH") {
			t.Errorf("error quotes the outside file:\n%s", msg)
		}
	})
	t.Run("to a file that is not YAML", func(t *testing.T) {
		dir := writeRules(t, map[string]string{"policy.yaml": okPolicy, "files/blob": secret})
		symlink(t, "files/blob", filepath.Join(dir, "blob.yaml"))
		_, err := Load(dir)
		if err == nil {
			t.Fatal("Load succeeded")
		}
		msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		if !strings.Contains(msg, "blob.yaml:1:") {
			t.Errorf("error does not name the file:\n%s", msg)
		}
		if strings.Contains(msg, "SECRETHASH") {
			t.Errorf("error quotes the file's content:\n%s", msg)
		}
	})
}

// TestSymlinksInsideRulesDir: links that stay inside the rules directory are
// ordinary (a shared file linked from two packages' directories).
func TestSymlinksInsideRulesDir(t *testing.T) {
	dir := writeRules(t, map[string]string{
		"a.yaml":              "package: p\nadd:\n  - path: etc/x\n    source: files/p/x.conf\n    reason: x\n",
		"files/shared/x.conf": "shared\n",
	})
	symlink(t, "shared", filepath.Join(dir, "files", "p"))
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	adds := set.Additions()
	if len(adds) != 1 {
		t.Fatalf("%d additions, want 1", len(adds))
	}
}
