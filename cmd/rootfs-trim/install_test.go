package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/cli"
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
		args := append([]string{"-s", "-C", filepath.Join("..", ".."), "install", "GO=" + goTool, "BIN=" + bin, "DESTDIR=" + dest}, tc.vars...)
		out, err := exec.Command("make", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
		}
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
		if err != nil || string(out) != "rootfs-trim "+cli.Version+"\n" {
			t.Errorf("%s --version: %q, %v", installed, out, err)
		}
	}
}
