package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/docblock"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// A README example is a ```console block: "$ " lines are commands (a line
// ending in a backslash continues on the next), the lines after a command
// are what it prints (stdout and stderr). An expected line may hold "…",
// which stands for any run of non-blank characters (a digest that changes
// with every rule edit).
type readmeCommand struct {
	line   int    // of the "$ " line in README.md, for messages
	cmd    string // as sh reads it
	output []string
	// first and end delimit the output's lines in the README, for -update
	first, end int
}

// readmeExamples returns the commands of every ```console block of lines.
func readmeExamples(lines []string) []*readmeCommand {
	var cmds []*readmeCommand
	var cur *readmeCommand
	inBlock := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case !inBlock && strings.TrimSpace(l) == "```console":
			inBlock = true
		case inBlock && strings.TrimSpace(l) == "```":
			inBlock, cur = false, nil
		case inBlock && strings.HasPrefix(l, "$ "):
			cur = &readmeCommand{line: i + 1, cmd: l[2:]}
			for strings.HasSuffix(cur.cmd, "\\") && i+1 < len(lines) {
				i++
				cur.cmd += "\n" + lines[i]
			}
			cur.first, cur.end = i+1, i+1
			cmds = append(cmds, cur)
		case inBlock && cur != nil:
			cur.output = append(cur.output, l)
			cur.end = i + 1
		}
	}
	return cmds
}

// matches reports whether got is want, "…" in want matching any non-blank
// run.
func matches(want, got []string) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if want[i] == got[i] {
			continue
		}
		if !strings.Contains(want[i], "…") {
			return false
		}
		re := "^" + strings.ReplaceAll(regexp.QuoteMeta(want[i]), "…", `\S*`) + "$"
		if !regexp.MustCompile(re).MatchString(got[i]) {
			return false
		}
	}
	return true
}

// TestREADMEExamples runs every example of README.md as a newcomer would:
// in a fresh clone, after `make demo`, from the top of the tree, and
// requires each command to print exactly what the README shows. With
// -update, the README's outputs are rewritten from what the commands print.
func TestREADMEExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo and every README example: not with -short")
	}
	// The demo archives the target with GNU cpio, as Buildroot does, so
	// that owners are 0:0 whoever runs it.
	archivetest.RequireTool(t, "cpio")
	readmePath := filepath.Join("..", "..", "README.md")
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	cmds := readmeExamples(lines)
	if len(cmds) < 8 {
		t.Fatalf("README.md has %d example commands in ```console blocks; the commands section alone has eight", len(cmds))
	}

	// A fresh clone, as far as the examples can tell: the example, the
	// rules and the demo, and bin/rootfs-trim as make builds it.
	work := t.TempDir()
	for _, dir := range []string{"examples", "rules"} {
		if err := archivetest.CopyTree(filepath.Join("..", "..", dir), filepath.Join(work, dir)); err != nil {
			t.Fatal(err)
		}
	}
	tool, err := exec.LookPath("rootfs-trim") // installed by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tool, filepath.Join(work, "bin", "rootfs-trim")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "LC_ALL=C.UTF-8", "TZ=UTC"}

	demo := exec.Command("bash", "examples/demo.sh")
	demo.Dir, demo.Env = work, env
	out, err := demo.CombinedOutput()
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("\x1b")) {
		t.Errorf("the demo writes terminal escapes into a pipe:\n%q", out)
	}
	// Each command the demo runs is shown as a user would type it, to be
	// copied (it once showed only the outputs).
	for _, want := range []string{"etc/crictl.yaml", "deferred ", "relocated ", "removed ", "0 offending file(s), 0 error(s), 0 warning(s), 3 note(s)",
		"\n$ bin/rootfs-trim audit --rules rules --packages-file-list examples/minikube/packages-file-list.txt out/demo/rootfs.cpio.gz\n",
		"\n$ bin/rootfs-trim apply --rules rules --packages-file-list examples/minikube/packages-file-list.txt --manifest out/demo/manifest.json out/demo/rootfs.cpio.gz out/demo/rootfs-trimmed.cpio.gz | grep -v \"^created \"\n",
		"\n$ bin/rootfs-trim render --root out/demo/root --runtime containerd --cni kindnet\n"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the demo does not show %q:\n%s", want, out)
		}
	}

	changed := false
	for _, c := range cmds {
		sh := exec.Command("sh", "-c", c.cmd)
		sh.Dir, sh.Env = work, env
		out, err := sh.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			err = nil // findings: audit, check
		}
		if err != nil {
			t.Errorf("README.md:%d: %s: %v\n%s", c.line, c.cmd, err, out)
			continue
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(out) == 0 {
			got = nil
		}
		if matches(c.output, got) {
			continue
		}
		if *update {
			c.output, changed = got, true
			continue
		}
		t.Errorf("README.md:%d: %s\nthe README shows:\n%s\nthe command prints:\n%s\n(go test ./cmd/rootfs-trim -run TestREADMEExamples -update rewrites the README)",
			c.line, c.cmd, strings.Join(c.output, "\n"), strings.Join(got, "\n"))
	}
	if changed {
		var b []string
		prev := 0
		for _, c := range cmds {
			b = append(b, lines[prev:c.first]...)
			b = append(b, c.output...)
			prev = c.end
		}
		b = append(b, lines[prev:]...)
		if err := os.WriteFile(readmePath, []byte(strings.Join(b, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadmeExamplesParse(t *testing.T) {
	lines := strings.Split("text\n```console\n$ a \\\n    b\nout 1\nout 2\n$ c\n```\n$ not a command\n```sh\n$ nor this\n```\n", "\n")
	cmds := readmeExamples(lines)
	if len(cmds) != 2 {
		t.Fatalf("got %d commands, want 2", len(cmds))
	}
	if cmds[0].cmd != "a \\\n    b" || strings.Join(cmds[0].output, "|") != "out 1|out 2" || cmds[0].first != 4 || cmds[0].end != 6 {
		t.Errorf("first command: %+v", cmds[0])
	}
	if cmds[1].cmd != "c" || len(cmds[1].output) != 0 {
		t.Errorf("second command: %+v", cmds[1])
	}
	if !matches([]string{"rules rules sha256:…"}, []string{"rules rules sha256:fd23"}) || matches([]string{"a…"}, []string{"a b"}) {
		t.Error("… does not match a non-blank run, and only that")
	}
}

// The README's apt-get line works on a fresh Debian (apt-get update first:
// a fresh image has no lists), pulls in no GUI (--no-install-recommends:
// qemu-system-x86 recommends GTK), and installs every package .ci/run does.
// npm is not among them: where a NodeSource nodejs is installed, Debian's
// npm conflicts with it and apt would refuse the whole line; it is on a
// line of its own, for the SARIF tests alone, as .ci/run installs it. The
// set-up says that an installed Go may do before it says how to install
// one.
func TestREADMESetUp(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^sudo apt-get ((?:.*\\\n)*.*)$`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no sudo apt-get line")
	}
	words := strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " "))
	line := strings.Join(words, " ")
	if !strings.HasPrefix(line, "update && sudo apt-get install --no-install-recommends ") {
		t.Errorf("README's apt-get line %q: want sudo apt-get update && sudo apt-get install --no-install-recommends ...", line)
	}
	if slices.Contains(words, "npm") {
		t.Errorf("README's apt-get line installs npm, which conflicts with a NodeSource nodejs: give it a line of its own")
	}
	if !regexp.MustCompile(`(?m)^command -v npm \|\| sudo apt-get install --no-install-recommends npm `).Match(readme) {
		t.Errorf("README has no line of its own installing npm when there is none")
	}
	if v, tarball := bytes.Index(readme, []byte("`go version`")), bytes.Index(readme, []byte("curl -LO https://go.dev/dl/")); v < 0 || v > tarball {
		t.Errorf("README's set-up does not say that an installed Go (go version) may do before the tarball")
	}
	pm := regexp.MustCompile(`(?m)^packages=\(([^)]*)\)`).FindSubmatch(ci)
	if pm == nil {
		t.Fatal(".ci/run has no packages=(...) line")
	}
	for _, p := range strings.Fields(string(pm[1])) {
		if !slices.Contains(words, p) {
			t.Errorf("README's apt-get line lacks %s, which .ci/run installs", p)
		}
	}
}

// The README is a front door: what does not fit in a screenful or five
// belongs in docs/ (issue 24 set the bound).
func TestREADMEIsShort(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const most = 250
	if n := bytes.Count(readme, []byte("\n")); n > most {
		t.Errorf("README.md has %d lines, want at most %d: link the details from docs/", n, most)
	}
}

// TestDocBlocksRun: every marked block of the user docs (docblock.Docs),
// and every block of those whose blocks are all to be run (recipes), is
// run by a test, either a scenario's `readme NAME FILE` or a Go test's
// docblock.Block(root, "NAME"), so that a recipe cannot be added, or a
// scenario dropped, without a test running what a user copies.
func TestDocBlocksRun(t *testing.T) {
	root := filepath.Join("..", "..")
	names, err := docblock.Names(root)
	if err != nil {
		t.Fatal(err)
	}
	run := map[string]bool{}
	readme := regexp.MustCompile(`(?m)^readme (\S+) `)
	scripts, err := filepath.Glob(filepath.Join(root, "testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range readme.FindAllSubmatch(data, -1) {
			run[string(m[1])] = true
		}
	}
	goBlock := regexp.MustCompile(`docblock\.Block\([^,()]+, "([^"]+)"\)`)
	for _, dir := range []string{"cmd", "internal", "pkg", "test"} {
		err = filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
				return err
			}
			data, err := os.ReadFile(p)
			for _, m := range goBlock.FindAllSubmatch(data, -1) {
				run[string(m[1])] = true
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(names) < 2 {
		t.Fatalf("the docs have %d marked blocks; README.md alone has one", len(names))
	}
	for _, d := range docblock.Docs {
		if !d.AllMarked {
			continue
		}
		unmarked, err := docblock.Unmarked(root, d.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range unmarked {
			t.Errorf("%s:%d: a code block with no <!-- block: NAME --> line before it, which no test can run", d.Path, line)
		}
	}
	for name, doc := range names {
		if !run[name] {
			t.Errorf("%s: block %q is run by no test (testdata/script: readme %s FILE)", doc, name, name)
		}
	}
}
