package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/cmd/rootfs-trim/internal/cli"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// make install puts the binary at $(DESTDIR)$(BINDIR)/rootfs-trim, BINDIR
// being $(PREFIX)/bin and PREFIX /usr/local unless given, as Go and
// Buildroot users expect (there was no install target). The build goes to
// a temporary BIN, not the tree's bin/. make build (and so make demo and
// make install) says what it does before the long build.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: not with -short")
	}
	archivetest.RequireTool(t, "make")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "build", "rootfs-trim")
	for _, tc := range []struct {
		vars []string
		want string // beneath DESTDIR
	}{
		{[]string{"PREFIX=/usr"}, "usr/bin/rootfs-trim"},
		{[]string{"BINDIR=/opt/rt/sbin"}, "opt/rt/sbin/rootfs-trim"},
		{nil, "usr/local/bin/rootfs-trim"},
	} {
		dest := filepath.Join(dir, "dest"+strings.Join(tc.vars, ""))
		out := makeInstall(t, goTool, bin, dest, tc.vars...)
		// The build, silent for a minute on a cold Go cache, says so first.
		if !strings.HasPrefix(string(out), "== build "+bin+" (a minute or two on a cold Go cache") {
			t.Errorf("make install: the build does not say what it does first:\n%s", out)
		}
		installed := filepath.Join(dest, tc.want)
		fi, err := os.Stat(installed)
		if err != nil {
			t.Fatalf("make install %v: %v", tc.vars, err)
		}
		if fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v, want 0755", installed, fi.Mode().Perm())
		}
		out, err = exec.Command(installed, "--version").Output()
		if first, _, _ := strings.Cut(string(out), "\n"); err != nil || first != "rootfs-trim "+cli.Version {
			t.Errorf("%s --version: %q, %v", installed, out, err)
		}
	}
}

func makeInstall(t *testing.T, goTool, bin, dest string, vars ...string) []byte {
	t.Helper()
	args := append([]string{"-s", "-C", filepath.Join("..", ".."), "install", "GO=" + goTool, "BIN=" + bin, "DESTDIR=" + dest}, vars...)
	cmd := exec.Command("make", args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// make install DESTDIR=... PREFIX=/usr installs, as Debian and Buildroot
// users expect, the rules where the binary finds them without --rules, the
// man page and the three shells' completions, and nothing else; the
// installed binary audits the bundled example with the installed rules.
func TestMakeInstallShares(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: not with -short")
	}
	archivetest.RequireTool(t, "make")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	dir := t.TempDir()
	dest := filepath.Join(dir, "dest")
	makeInstall(t, goTool, filepath.Join(dir, "build", "rootfs-trim"), dest, "PREFIX=/usr")
	installed := filepath.Join(dest, "usr", "bin", "rootfs-trim")
	rulesDir := filepath.Join(dest, "usr", "share", "rootfs-trim", "rules")

	// What each file must hold: the rules as in the checkout, the page and
	// the scripts as the installed binary prints them.
	want := map[string][]byte{"usr/bin/rootfs-trim": nil}
	repoRules := filepath.Join("..", "..", "rules")
	err = filepath.WalkDir(repoRules, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(repoRules, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		want[filepath.ToSlash(filepath.Join("usr/share/rootfs-trim/rules", rel))] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for path, args := range map[string][]string{
		"usr/share/man/man1/rootfs-trim.1":                     {"man"},
		"usr/share/bash-completion/completions/rootfs-trim":    {"completion", "bash"},
		"usr/share/zsh/site-functions/_rootfs-trim":            {"completion", "zsh"},
		"usr/share/fish/vendor_completions.d/rootfs-trim.fish": {"completion", "fish"},
	} {
		out, err := exec.Command(installed, args...).Output()
		if err != nil || len(out) == 0 {
			t.Fatalf("%s %v: %v", installed, args, err)
		}
		want[path] = out
	}
	got := map[string]bool{}
	err = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dest, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		got[rel] = true
		fi, err := d.Info()
		if err != nil {
			return err
		}
		wantMode := fs.FileMode(0o644)
		if rel == "usr/bin/rootfs-trim" {
			wantMode = 0o755
		}
		if fi.Mode() != wantMode {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode(), wantMode)
		}
		w, ok := want[rel]
		if !ok {
			t.Errorf("make install installed %s, which it should not", rel)
			return nil
		}
		if w != nil {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if !bytes.Equal(data, w) {
				t.Errorf("%s: not what it should hold (%d bytes, want %d)", rel, len(data), len(w))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range want {
		if !got[rel] {
			t.Errorf("make install did not install %s", rel)
		}
	}

	// The installed binary, given no --rules, takes the installed rules.
	example := filepath.Join("..", "..", "examples", "minikube")
	audit := func(extra ...string) (string, int) {
		args := append([]string{"audit", "--packages-file-list", filepath.Join(example, "packages-file-list.txt")}, extra...)
		cmd := exec.Command(installed, append(args, filepath.Join(example, "target"))...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := audit()
	if code != 1 || !strings.Contains(out, "rule containerd-net (defer)") {
		t.Errorf("installed audit without --rules: exit %d, want 1 with the example's findings:\n%s", code, out)
	}
	if explicit, _ := audit("--rules", rulesDir); out != explicit {
		t.Errorf("installed audit without --rules and with --rules %s differ:\n%s\n%s", rulesDir, out, explicit)
	}
	version, err := exec.Command(installed, "version").Output()
	if err != nil || !regexp.MustCompile(`\nrules `+regexp.QuoteMeta(rulesDir)+` sha256:[0-9a-f]{64}\n$`).Match(version) {
		t.Errorf("installed version: %v; does not name the installed rules:\n%s", err, version)
	}

	// The page renders without a warning, as a user reads it.
	archivetest.RequireTool(t, "man")
	man := exec.Command("man", "-l", filepath.Join(dest, "usr/share/man/man1/rootfs-trim.1"))
	man.Env = append(os.Environ(), "LC_ALL=C", "MANWIDTH=100", "MAN_KEEP_FORMATTING=", "MANPAGER=cat", "PAGER=cat", "MANROFFOPT=-ww")
	var errs strings.Builder
	man.Stderr = &errs
	page, err := man.Output()
	if err != nil || errs.Len() > 0 || !strings.Contains(string(page), "ROOTFS-TRIM(1)") {
		t.Errorf("man -l the installed page: %v: %s\n%.300s", err, errs.String(), page)
	}
}
