package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// installedBinary makes a prefix with bin/rootfs-trim and, when rules is
// true, a copy of the repository's rules at share/rootfs-trim/rules, and
// makes the binary seem to run from there.
func installedBinary(t *testing.T, rules bool) string {
	t.Helper()
	prefix := t.TempDir()
	if err := os.MkdirAll(filepath.Join(prefix, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if rules {
		src, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "rules"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(filepath.Join(prefix, "share", "rootfs-trim", "rules"), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	old := executable
	executable = func() (string, error) { return filepath.Join(prefix, "bin", "rootfs-trim"), nil }
	t.Cleanup(func() { executable = old })
	return prefix
}

// Without --rules, the commands take the installed rules beside the
// binary, and version says which; an explicit --rules wins; with none
// installed, --rules is required and the error says where it looked.
func TestRulesFallBackToInstalled(t *testing.T) {
	target := filepath.Join("..", "..", "..", "..", "examples", "minikube", "target")
	fileList := filepath.Join("..", "..", "..", "..", "examples", "minikube", "packages-file-list.txt")
	t.Run("installed", func(t *testing.T) {
		prefix := installedBinary(t, true)
		installed := filepath.Join(prefix, "share", "rootfs-trim", "rules")
		code, stdout, stderr := run(t, nil, "audit", "--packages-file-list", fileList, target)
		if code != ExitFindings || !strings.Contains(stdout, "rule containerd-net (defer)") {
			t.Errorf("audit without --rules: exit %d, %s%s", code, stdout, stderr)
		}
		_, explicit, _ := run(t, nil, "audit", "--rules", installed, "--packages-file-list", fileList, target)
		if stdout != explicit {
			t.Errorf("audit without --rules and with --rules %s differ:\n%s\n%s", installed, stdout, explicit)
		}
		code, stdout, stderr = run(t, nil, "version")
		if code != ExitOK || !strings.HasSuffix(stdout, "\nrules "+installed+" "+digest(t, installed)+"\n") {
			t.Errorf("version: exit %d, %q %s; want the installed rules' line", code, stdout, stderr)
		}
		// check --update-lock does not write into the installed rules.
		code, _, stderr = run(t, nil, "check", "--update-lock", target)
		if code != ExitError || !strings.Contains(stderr, "--update-lock would write the installed rules' "+filepath.Join(installed, "check.lock")) {
			t.Errorf("check --update-lock without --rules or --lock: exit %d, %s", code, stderr)
		}
		// An explicit --rules wins over the installed rules.
		code, _, stderr = run(t, nil, "audit", "--rules", filepath.Join(prefix, "nosuch"), target)
		if code != ExitError || !strings.Contains(stderr, "nosuch") {
			t.Errorf("audit --rules nosuch: exit %d, %s", code, stderr)
		}
	})
	t.Run("none", func(t *testing.T) {
		prefix := installedBinary(t, false)
		want := "--rules DIR is required: there are no installed rules at " + filepath.Join(prefix, "share", "rootfs-trim", "rules")
		for _, args := range [][]string{{"audit", target}, {"apply", "--dry-run", target}, {"check", target}, {"export", "buildroot"}, {"diff", target, target}} {
			code, _, stderr := run(t, nil, args...)
			if code != ExitError || !strings.Contains(stderr, want) {
				t.Errorf("%v: exit %d, %s; want %q", args, code, stderr, want)
			}
		}
		if code, stdout, stderr := run(t, nil, "version"); code != ExitOK || stdout != "rootfs-trim "+Version+"\n" {
			t.Errorf("version with no rules installed: exit %d, %q %s", code, stdout, stderr)
		}
	})
}

func digest(t *testing.T, dir string) string {
	t.Helper()
	set, err := loadRules(dir)
	if err != nil {
		t.Fatal(err)
	}
	return set.Digest
}
