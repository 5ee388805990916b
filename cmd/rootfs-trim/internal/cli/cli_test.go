package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		{"unknown command", []string{"frobnicate"}, ExitError, "rootfs-trim: unknown command \"frobnicate\"\nRun 'rootfs-trim -h' for the commands.\n"},
		{"unknown flag as a command", []string{"-V"}, ExitError, "rootfs-trim: unknown command \"-V\"\nRun 'rootfs-trim -h' for the commands.\n"},
		{"help", []string{"--help"}, ExitOK, ""},
		{"help command", []string{"help", "apply"}, ExitOK, "Usage: rootfs-trim apply"},
		{"help unknown command", []string{"help", "nosuch"}, ExitError, "rootfs-trim: unknown command \"nosuch\"\nRun 'rootfs-trim -h' for the commands.\n"},
		{"command help", []string{"list", "-h"}, ExitOK, "Usage: rootfs-trim list"},
		{"bad flag", []string{"list", "--frob", "x"}, ExitError, "flag provided but not defined: --frob\n"},
		{"bad flag value", []string{"list", "--max-size", "x", "y"}, ExitError, `invalid value "x" for flag --max-size: `},
		{"version flag", []string{"--version"}, ExitOK, "rootfs-trim " + Version + "\n"},
		{"version flag with rules", []string{"--version", "--rules", "../../../../rules"}, ExitOK, "\nrules ../../../../rules sha256:"},
		{"missing argument", []string{"list"}, ExitError, "want exactly one ARCHIVE or DIR"},
		{"missing file", []string{"list", filepath.Join(dir, "nope")}, ExitError, "no such file"},
		{"garbage", []string{"list", garbage}, ExitError, "unknown archive format"},
		{"repack one argument", []string{"repack", garbage}, ExitError, "want IN and OUT"},
		{"apply without rules", []string{"apply", dir}, ExitError, "--rules DIR is required"},
		{"bad SOURCE_DATE_EPOCH", []string{"apply", "--rules", "../../../../rules", dir}, ExitError, "SOURCE_DATE_EPOCH"},
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
			// A mistake is one line and a pointer, never the whole usage.
			if tc.want == ExitError && len(tc.args) > 0 && strings.Contains(stderr, "Commands:") {
				t.Errorf("a mistake printed the whole usage:\n%s", stderr)
			}
		})
	}
}

// Every command's -h names the command and its flags, and the main usage
// lists every command.
func TestHelpIsComplete(t *testing.T) {
	_, usage, _ := run(t, nil, "--help")
	for name, c := range commands {
		if !strings.Contains(usage, "\n  "+name+" ") && !c.hidden {
			t.Errorf("main usage does not list %s", name)
		}
		code, _, stderr := run(t, nil, name, "-h")
		if code != ExitOK || !strings.Contains(stderr, "Usage: rootfs-trim "+name) {
			t.Errorf("%s -h: exit %d:\n%s", name, code, stderr)
		}
		// Flags as the docs write them: --flag (they were -flag).
		_, flags, hasFlags := strings.Cut(stderr, "\nFlags:\n")
		if !hasFlags {
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(flags, "\n"), "\n") {
			if !strings.HasPrefix(line, "  --") && !strings.HasPrefix(line, "    \t") {
				t.Errorf("%s -h: flag line %q, want \"  --flag\" and its usage", name, line)
			}
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
	readme, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, synopsis, ok := strings.Cut(string(readme), "## Commands\n")
	if !ok {
		t.Fatal("README.md has no Commands section")
	}
	synopsis, _, _ = strings.Cut(synopsis, "\n```\n\n")
	for name, c := range commands {
		if c.hidden {
			continue // for packagers (man): not a user's command
		}
		if !strings.Contains(synopsis, "rootfs-trim "+name) {
			t.Errorf("README synopsis lacks the %s command", name)
			continue
		}
		_, _, help := run(t, nil, name, "-h")
		_, flags, _ := strings.Cut(help, "\nFlags:\n")
		for _, line := range strings.Split(flags, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "--") {
				continue
			}
			flag := strings.Fields(line)[0]
			if strings.HasPrefix(strings.TrimSpace(after(flags, line)), "the old spelling of ") {
				continue // docs/commands.md names the old spellings
			}
			if !regexp.MustCompile(regexp.QuoteMeta(flag) + `([^a-z-]|$)`).MatchString(synopsis) {
				t.Errorf("README synopsis lacks %s's %s", name, flag)
			}
		}
	}
}

// A mistake on the command line is reported once, with a one-line pointer
// to -h: not the flag package's message, the whole usage, then the message
// again.
func TestBadFlagIsOneError(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--frob", "x"}, "rootfs-trim list: flag provided but not defined: --frob\nRun 'rootfs-trim list -h' for usage.\n"},
		{[]string{"audit", "--max-size", "lots", "x"}, "rootfs-trim audit: invalid value \"lots\" for flag --max-size: want a positive size such as 512M or 32G\nRun 'rootfs-trim audit -h' for usage.\n"},
	} {
		code, stdout, stderr := run(t, nil, tc.args...)
		if code != ExitError || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q", tc.args, code, stdout)
		}
		if diff := cmp.Diff(tc.want, stderr); diff != "" {
			t.Errorf("%v: stderr (-want +got):\n%s", tc.args, diff)
		}
	}
}

// Errors name what the user gave, not an internal temporary file or a
// consequence of the real problem.
func TestErrorsNameTheUsersPath(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(target, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nonexistent-dir")
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"repack output in a missing directory", []string{"repack", "--format", "newc", target, missing + "/out.cpio"},
			"rootfs-trim repack: create " + missing + "/out.cpio: no such file or directory\n"},
		{"tree output in a missing directory", []string{"repack", "--format", "dir", target, missing + "/tree"},
			"rootfs-trim repack: create " + missing + "/tree: no such file or directory\n"},
		{"manifest in a missing directory", []string{"apply", "--rules", "../../../../rules", "--manifest", missing + "/m.json", target},
			"rootfs-trim apply: create " + missing + "/m.json: no such file or directory\n"},
		{"missing rule directory", []string{"audit", "--rules", missing, target},
			"rootfs-trim audit: rule directory: stat " + missing + ": no such file or directory\n"},
		{"rule directory is a file", []string{"audit", "--rules", notDir, target},
			"rootfs-trim audit: rule directory " + notDir + ": not a directory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, map[string]string{"SOURCE_DATE_EPOCH": "1700000000"}, tc.args...)
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			if diff := cmp.Diff(tc.want, stderr); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// Sizes are shown as they are written on the command line and in the README.
func TestByteSizeString(t *testing.T) {
	for in, want := range map[string]string{"32G": "32G", "34359738368": "32G", "512M": "512M", "1536M": "1536M", "1025": "1025", "2048": "2K", "1t": "1T"} {
		var b byteSize
		if err := b.Set(in); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != want {
			t.Errorf("byteSize(%s).String() = %s, want %s", in, got, want)
		}
	}
	_, _, help := run(t, nil, "list", "-h")
	if !strings.Contains(help, "(default 32G)") {
		t.Errorf("list -h does not show --max-size's default as 32G:\n%s", help)
	}
}

// The top-level help names every command that exits 1, apply included.
func TestHelpExitStatus(t *testing.T) {
	_, usage, _ := run(t, nil, "--help")
	_, status, _ := strings.Cut(usage, "Exit status:")
	for _, name := range []string{"audit", "check", "apply"} {
		if !strings.Contains(status, name+":") {
			t.Errorf("exit status line does not say when %s exits 1:\n%s", name, status)
		}
	}
}

// Aligned columns end at the last cell's text: no trailing spaces, which
// diffs and CI logs would carry.
func TestColumnsHaveNoTrailingSpaces(t *testing.T) {
	var b strings.Builder
	tw := newColumns(&b)
	fmt.Fprintln(tw, "added\tetc/containers/containers.conf\tpodman\t")
	fmt.Fprintln(tw, "template\tusr/share/minikube/templates/crictl.tmpl\trootfs-trim\trule crictl")
	fmt.Fprintln(tw, "a  b\t\t\t")
	tw.Flush()
	want := "added     etc/containers/containers.conf            podman\n" +
		"template  usr/share/minikube/templates/crictl.tmpl  rootfs-trim  rule crictl\n" +
		"a  b\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}

	// And apply's own report, on a target where a change has no rule.
	target := t.TempDir()
	os.MkdirAll(filepath.Join(target, "etc", "cni", "net.d"), 0o755)
	os.WriteFile(filepath.Join(target, "etc", "cni", "net.d", "87-podman-bridge.conflist"), []byte("{}\n"), 0o644)
	list := filepath.Join(t.TempDir(), "packages-file-list.txt")
	os.WriteFile(list, []byte("podman,./etc/cni/net.d/87-podman-bridge.conflist\n"), 0o644)
	code, stdout, stderr := run(t, map[string]string{"SOURCE_DATE_EPOCH": "1700000000"},
		"apply", "--rules", "../../../../rules", "--packages-file-list", list, "--dry-run", target)
	if code != ExitOK {
		t.Fatalf("apply: exit %d:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "\nadded ") {
		t.Fatalf("apply reported no added file, which has no rule column:\n%s", stdout)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing space: %q", line)
		}
	}
}

// --report (audit, check) and --archive-format (apply, repack) name what
// they choose; --format, which meant either, stays the old spelling of each
// command's own, and the two at once are refused.
func TestRenamedFlags(t *testing.T) {
	dir := t.TempDir()
	example := filepath.Join("..", "..", "..", "..", "examples", "minikube")
	audit := []string{"audit", "--rules", "../../../../rules", "--packages-file-list", filepath.Join(example, "packages-file-list.txt")}
	check := []string{"check", "--rules", "../../../../rules", "--lock", filepath.Join(example, "check.lock"), "--packages-file-list", filepath.Join(example, "packages-file-list.txt")}
	target := filepath.Join(example, "target")
	for _, tc := range []struct {
		args       []string // before the flag
		name, old  string
		value      string
		rest       func(n int) []string // after it; n tells the runs apart
		want       int
		wantOutput string
	}{
		{audit, "report", "format", "json", func(int) []string { return []string{target} }, ExitFindings, `"check": "offender"`},
		{check, "report", "format", "github", func(int) []string { return []string{target} }, ExitOK, ""},
		{[]string{"repack"}, "archive-format", "format", "tar", func(n int) []string {
			return []string{target, filepath.Join(dir, fmt.Sprintf("out%d.tar", n))}
		}, ExitOK, ""},
		{[]string{"apply", "--rules", "../../../../rules", "--quiet"}, "archive-format", "format", "dir", func(n int) []string {
			return []string{filepath.Join(dir, "out0.tar"), filepath.Join(dir, fmt.Sprintf("tree%d", n))}
		}, ExitOK, ""},
	} {
		cmd := tc.args[0]
		code, newOut, errOut := run(t, nil, append(append(tc.args, "--"+tc.name, tc.value), tc.rest(0)...)...)
		if code != tc.want || !strings.Contains(newOut, tc.wantOutput) {
			t.Errorf("%s --%s %s: exit %d, stdout %q, stderr %q", cmd, tc.name, tc.value, code, newOut, errOut)
		}
		code, oldOut, errOut := run(t, nil, append(append(tc.args, "--"+tc.old, tc.value), tc.rest(1)...)...)
		if code != tc.want || oldOut != newOut {
			t.Errorf("%s --%s %s: exit %d, stderr %q, stdout differs from --%s's:\n%s", cmd, tc.old, tc.value, code, errOut, tc.name, cmp.Diff(newOut, oldOut))
		}
		code, _, errOut = run(t, nil, append(append(tc.args, "--"+tc.name, tc.value, "--"+tc.old, tc.value), tc.rest(2)...)...)
		if want := fmt.Sprintf("--%s and --%s are one flag (the old and the new spelling): give it once", tc.old, tc.name); code != ExitError || !strings.Contains(errOut, want) {
			t.Errorf("%s with both spellings: exit %d, stderr %q, want %q", cmd, code, errOut, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out0.tar")); err != nil {
		t.Error(err)
	}
}

// after returns the line that follows line in text.
func after(text, line string) string {
	_, rest, _ := strings.Cut(text, line+"\n")
	first, _, _ := strings.Cut(rest, "\n")
	return first
}

// A command that a signal reached but that finished its work (apply goes on
// once it writes a tree) exits 128 plus the signal, as a shell reports it;
// one that no signal reached exits as usual, even with its context ended.
func TestExitAfterSignal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause error
		want  int
	}{
		{"SIGINT", signalled{syscall.SIGINT}, 130},
		{"SIGTERM", signalled{syscall.SIGTERM}, 143},
		{"cancelled, no signal", errors.New("done"), ExitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(tc.cause)
			var stdout, stderr bytes.Buffer
			e := &Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
			if got := Run(ctx, e, []string{"version"}); got != tc.want {
				t.Errorf("exit %d, want %d; stderr: %s", got, tc.want, stderr.String())
			}
		})
	}
}
