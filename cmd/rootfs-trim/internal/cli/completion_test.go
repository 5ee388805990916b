package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// helpFlags is what -h prints, independently of commandTable: every
// visible command and its flags, from each command's "Flags:" block.
func helpFlags(t *testing.T) map[string][]string {
	t.Helper()
	_, usage, _ := run(t, nil, "help")
	out := map[string][]string{}
	_, list, _ := strings.Cut(usage, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	for _, line := range strings.Split(list, "\n") {
		name := strings.Fields(line)[0]
		_, _, help := run(t, nil, name, "-h")
		_, flags, _ := strings.Cut(help, "\nFlags:\n")
		out[name] = []string{}
		for _, l := range strings.Split(flags, "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "-") {
				out[name] = append(out[name], strings.TrimLeft(strings.Fields(l)[0], "-"))
			}
		}
	}
	if len(out) < 10 || out["diff"] == nil || out["completion"] == nil {
		t.Fatalf("the usage lists too few commands: %v", out)
	}
	return out
}

func script(t *testing.T, shell string) string {
	t.Helper()
	code, stdout, stderr := run(t, nil, "completion", shell)
	if code != ExitOK || stderr != "" {
		t.Fatalf("completion %s: exit %d, %s", shell, code, stderr)
	}
	return stdout
}

// Every command and every flag of each is in each shell's script, where
// that shell looks for it.
func TestCompletionNamesEveryCommandAndFlag(t *testing.T) {
	want := helpFlags(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		s := script(t, shell)
		got := map[string][]string{}
		switch shell {
		case "bash":
			for _, m := range regexp.MustCompile(`(?m)^\t([a-z]+)\)\n\t\tflags='([^']*)'`).FindAllStringSubmatch(s, -1) {
				got[m[1]] = fieldsWithout(m[2], "--")
			}
			words := regexp.MustCompile(`compgen -W '([^']*)' -- "\$cur"`).FindStringSubmatch(s)
			if words == nil || len(strings.Fields(words[1])) != len(want) {
				t.Errorf("bash: the command words %v are not the %d commands", words, len(want))
			}
		case "zsh":
			for _, block := range regexp.MustCompile(`(?ms)^\t([a-z]+)\)\n\t\t_arguments(.*?);;`).FindAllStringSubmatch(s, -1) {
				got[block[1]] = []string{}
				for _, m := range regexp.MustCompile(`'--([a-z-]+)[=\[]`).FindAllStringSubmatch(block[2], -1) {
					got[block[1]] = append(got[block[1]], m[1])
				}
				if !strings.Contains(s, "\t\t'"+block[1]+":") {
					t.Errorf("zsh: command %s is not in the commands list", block[1])
				}
			}
		case "fish":
			for _, m := range regexp.MustCompile(`(?m)^complete -c rootfs-trim -f -n __fish_use_subcommand -a ([a-z]+) `).FindAllStringSubmatch(s, -1) {
				got[m[1]] = []string{}
			}
			for _, m := range regexp.MustCompile(`(?m)^complete -c rootfs-trim -n '__fish_seen_subcommand_from ([a-z]+)' -l ([a-z-]+)`).FindAllStringSubmatch(s, -1) {
				got[m[1]] = append(got[m[1]], m[2])
			}
		}
		for _, fl := range got {
			sort.Strings(fl)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: commands and flags (-from -h +in the script):\n%s", shell, d)
		}
	}
}

func fieldsWithout(s, prefix string) []string {
	out := []string{}
	for _, f := range strings.Fields(s) {
		out = append(out, strings.TrimPrefix(f, prefix))
	}
	return out
}

// Each script is valid for its shell (bash -n, zsh -n, fish -n).
func TestCompletionScriptsParse(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			archivetest.RequireTool(t, shell)
			p := filepath.Join(t.TempDir(), "rootfs-trim."+shell)
			if err := os.WriteFile(p, []byte(script(t, shell)), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(shell, "-n", p).CombinedOutput(); err != nil || len(out) > 0 {
				t.Fatalf("%s -n: %v: %s", shell, err, out)
			}
		})
	}
}

// completionCases are lines a user types and the words each shell must
// offer: commands, flags, the words of export and completion, and flag
// values (flagValues; for --cni, files too, and the directory each shell
// runs in is empty).
var completionCases = []struct{ line, want string }{
	{"rootfs-trim di", "diff"},
	{"rootfs-trim diff --rep", "--report"},
	{"rootfs-trim check --update", "--update-lock"},
	{"rootfs-trim completion ", "bash fish zsh"},
	{"rootfs-trim export b", "buildroot"},
	{"rootfs-trim render --runtime ", "containerd crio docker"},
	{"rootfs-trim render --cni ", "bridge calico cilium false flannel kindnet true"},
	{"rootfs-trim render --dry-run --cni ca", "calico"},
	{"rootfs-trim audit --report ", "github json sarif text"},
	{"rootfs-trim check --format j", "json"},
	{"rootfs-trim diff --report s", "sarif"},
	{"rootfs-trim apply --archive-format ", "crc dir docker-archive newc oci tar"},
	{"rootfs-trim repack --format d", "dir docker-archive"},
	{"rootfs-trim repack --compress lz", "lz4 lz4-legacy"},
	{"rootfs-trim apply --recompress ", "auto full"},
}

// The bash and fish scripts complete what a user types.
func TestCompletionCompletes(t *testing.T) {
	cases := completionCases
	t.Run("bash", func(t *testing.T) {
		archivetest.RequireTool(t, "bash")
		p := filepath.Join(t.TempDir(), "c.bash")
		if err := os.WriteFile(p, []byte(script(t, "bash")), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			words := strings.Split(tc.line, " ")
			prog := `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rootfs_trim; printf '%s\n' "${COMPREPLY[@]}"`
			out, err := exec.Command("bash", append([]string{"-c", prog, "bash", p}, words...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("%q: %v: %s", tc.line, err, out)
			}
			if got := sortedFields(string(out)); got != tc.want {
				t.Errorf("%q completes to %q, want %q", tc.line, got, tc.want)
			}
		}
	})
	t.Run("fish", func(t *testing.T) {
		archivetest.RequireTool(t, "fish")
		p := filepath.Join(t.TempDir(), "c.fish")
		if err := os.WriteFile(p, []byte(script(t, "fish")), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			fish := exec.Command("fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", p, tc.line)
			fish.Dir = t.TempDir() // no file names among the values
			out, err := fish.CombinedOutput()
			if err != nil {
				t.Fatalf("%q: %v: %s", tc.line, err, out)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				got = append(got, strings.Split(l, "\t")[0])
			}
			if g := sortedFields(strings.Join(got, " ")); g != tc.want {
				t.Errorf("%q completes to %q, want %q", tc.line, g, tc.want)
			}
		}
	})
}

// zsh's completion runs only in its line editor: testdata/zsh-complete.zsh
// types each line and a tab into an interactive zsh on a pseudo-terminal
// (zsh/zpty), with compinit and the script loaded, and lists what the
// completion functions offered.
func TestCompletionCompletesZsh(t *testing.T) {
	archivetest.RequireTool(t, "zsh")
	if err := exec.Command("zsh", "-fc", "zmodload zsh/zpty").Run(); err != nil {
		if os.Getenv(archivetest.RequireToolsEnv) == "1" {
			t.Fatalf("zsh has no zpty module (%v), and %s=1 forbids skipping", err, archivetest.RequireToolsEnv)
		}
		t.Skipf("zsh has no zpty module: %v", err)
	}
	harness, err := filepath.Abs(filepath.Join("testdata", "zsh-complete.zsh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "_rootfs-trim")
	if err := os.WriteFile(p, []byte(script(t, "zsh")), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-f", harness, p, dir}
	for _, tc := range completionCases {
		args = append(args, tc.line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	zsh := exec.CommandContext(ctx, "zsh", args...)
	zsh.Dir = t.TempDir() // no file names among the values
	zsh.Env = append(os.Environ(), "LC_ALL=C", "HOME="+zsh.Dir, "ZDOTDIR="+zsh.Dir, "TERM=dumb")
	if msg, err := zsh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", harness, err, msg)
	}
	for i, tc := range completionCases {
		offered, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Fields(string(offered))
		sort.Strings(got)
		if g := strings.Join(slices.Compact(got), " "); g != tc.want {
			t.Errorf("%q completes to %q, want %q", tc.line, g, tc.want)
		}
	}
}

func sortedFields(s string) string {
	f := strings.Fields(s)
	sort.Strings(f)
	return strings.Join(f, " ")
}

// The man page renders without a warning (groff -ww, and man -l as a user
// reads it) and shows every command and every flag.
func TestManPageRenders(t *testing.T) {
	archivetest.RequireTool(t, "groff")
	archivetest.RequireTool(t, "man")
	code, page, stderr := run(t, nil, "man")
	if code != ExitOK || stderr != "" {
		t.Fatalf("man: exit %d, %s", code, stderr)
	}
	p := filepath.Join(t.TempDir(), "rootfs-trim.1")
	if err := os.WriteFile(p, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	groff := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z", p)
	if out, err := groff.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("groff -man -Tutf8 -ww: %v: %s", err, out)
	}
	man := exec.Command("man", "-l", p)
	man.Env = append(os.Environ(), "MANWIDTH=100", "MAN_KEEP_FORMATTING=", "MANPAGER=cat", "PAGER=cat", "MANROFFOPT=-ww")
	var errs strings.Builder
	man.Stderr = &errs
	out, err := man.Output()
	if err != nil || errs.Len() > 0 {
		t.Fatalf("man -l: %v: %s", err, errs.String())
	}
	text := string(out)
	for name, flags := range helpFlags(t) {
		if !strings.Contains(text, "rootfs-trim "+name) {
			t.Errorf("the page lacks rootfs-trim %s", name)
		}
		for _, f := range flags {
			if !strings.Contains(text, "--"+f) {
				t.Errorf("the page lacks %s's --%s", name, f)
			}
		}
	}
	for _, want := range []string{"ROOTFS-TRIM(1)", "EXIT STATUS", "Exit status: 0", "FILES", "../share/rootfs-trim/rules"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// man is for packagers: not in the usage, not completed.
func TestManIsHidden(t *testing.T) {
	_, usage, _ := run(t, nil, "help")
	if strings.Contains(usage, "\n  man ") {
		t.Errorf("the usage lists the hidden man command:\n%s", usage)
	}
	if strings.Contains(script(t, "bash"), "\tman)") {
		t.Error("bash completes the hidden man command")
	}
}
