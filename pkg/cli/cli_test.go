package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	code := Run(context.Background(), e, args)
	return code, stdout.String(), stderr.String()
}

// Exit codes are part of the interface: 0 success, 1 findings, 2 anything
// that stopped the tool from doing its job.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	os.WriteFile(garbage, []byte("not an archive at all, not even close"), 0o644)
	tests := []struct {
		name string
		args []string
		want int
		err  string
	}{
		{"no command", nil, ExitError, "Usage:"},
		{"unknown command", []string{"frobnicate"}, ExitError, `unknown command "frobnicate"`},
		{"help", []string{"--help"}, ExitOK, ""},
		{"command help", []string{"list", "-h"}, ExitOK, "Usage: rootfs-trim list"},
		{"bad flag", []string{"list", "--frob", "x"}, ExitError, "flag provided but not defined: -frob"},
		{"missing argument", []string{"list"}, ExitError, "want exactly one ARCHIVE or DIR"},
		{"missing file", []string{"list", filepath.Join(dir, "nope")}, ExitError, "no such file"},
		{"garbage", []string{"list", garbage}, ExitError, "unknown archive format"},
		{"repack one argument", []string{"repack", garbage}, ExitError, "want IN and OUT"},
		{"apply without rules", []string{"apply", dir}, ExitError, "--rules DIR is required"},
		{"bad SOURCE_DATE_EPOCH", []string{"apply", "--rules", "../../rules", dir}, ExitError, "SOURCE_DATE_EPOCH"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, map[string]string{"SOURCE_DATE_EPOCH": "yesterday"}, tc.args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
			if !strings.Contains(stdout+stderr, tc.err) {
				t.Errorf("output does not mention %q:\n%s%s", tc.err, stdout, stderr)
			}
		})
	}
}

// Every command's -h names the command and its flags, and the main usage
// lists every command.
func TestHelpIsComplete(t *testing.T) {
	_, usage, _ := run(t, nil, "--help")
	for name := range commands {
		if !strings.Contains(usage, "\n  "+name+" ") {
			t.Errorf("main usage does not list %s", name)
		}
		code, _, stderr := run(t, nil, name, "-h")
		if code != ExitOK || !strings.Contains(stderr, "Usage: rootfs-trim "+name) {
			t.Errorf("%s -h: exit %d:\n%s", name, code, stderr)
		}
	}
}

func TestVersionFromName(t *testing.T) {
	for name, want := range map[string]string{
		"podman-v3.4.7.tar.gz":                        "3.4.7",
		"cri-o.amd64.v1.29.1.tar.gz":                  "1.29.1",
		"cri-containerd-cni-1.7.0-linux-amd64.tar.gz": "1.7.0",
		"containerd_1.6.20~ds1-1_amd64.deb":           "1.6.20~ds1-1",
		"target":                                      "",
		"rootfs.cpio.gz":                              "",
	} {
		if got := versionFromName(name); got != want {
			t.Errorf("versionFromName(%q) = %q, want %q", name, got, want)
		}
	}
}

// Every flag of every command appears in README.md's command synopsis, so
// the README cannot fall behind the tool.
func TestREADMEListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, synopsis, ok := strings.Cut(string(readme), "## Commands\n")
	if !ok {
		t.Fatal("README.md has no Commands section")
	}
	synopsis, _, _ = strings.Cut(synopsis, "\n```\n\n")
	for name := range commands {
		if !strings.Contains(synopsis, "rootfs-trim "+name) {
			t.Errorf("README synopsis lacks the %s command", name)
			continue
		}
		_, _, help := run(t, nil, name, "-h")
		_, flags, _ := strings.Cut(help, "\nFlags:\n")
		for _, line := range strings.Split(flags, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "-") {
				continue
			}
			flag := strings.Fields(line)[0]
			if !strings.Contains(synopsis, "-"+flag) {
				t.Errorf("README synopsis lacks %s's -%s", name, flag)
			}
		}
	}
}
