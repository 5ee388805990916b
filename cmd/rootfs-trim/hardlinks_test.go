package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// linkGroups are the hard-link groups of the test tree, with their data.
var linkGroups = []struct {
	names []string
	data  string
	fifo  bool
}{
	{names: []string{"f", "h"}, data: "hi\n"},
	{names: []string{"d/g", "d/g2", "k"}, data: strings.Repeat("three names, one file\n", 100)},
	{names: []string{"d/p", "p2"}, fifo: true},
}

func makeLinkTree(t *testing.T, root string) {
	t.Helper()
	mustOK(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	for _, g := range linkGroups {
		first := filepath.Join(root, g.names[0])
		if g.fifo {
			mustOK(t, syscall.Mkfifo(first, 0o600))
		} else {
			mustOK(t, os.WriteFile(first, []byte(g.data), 0o640))
		}
		for _, n := range g.names[1:] {
			mustOK(t, os.Link(first, filepath.Join(root, n)))
		}
	}
	mustOK(t, os.WriteFile(filepath.Join(root, "plain"), []byte("alone\n"), 0o644))
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkLinkTree checks that every group of the test tree is one file with
// its data in the tree at root. GNU tar archives hard-linked fifos as
// separate fifos: fifoLinks says whether the input kept them linked.
func checkLinkTree(t *testing.T, root, what string, fifoLinks bool) {
	t.Helper()
	for _, g := range linkGroups {
		var first os.FileInfo
		for _, n := range g.names {
			fi, err := os.Lstat(filepath.Join(root, n))
			if err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			if g.fifo != (fi.Mode().Type() == os.ModeNamedPipe) || (!g.fifo && !fi.Mode().IsRegular()) {
				t.Errorf("%s: %s is %v", what, n, fi.Mode())
			}
			if first == nil {
				first = fi
			} else if !os.SameFile(first, fi) && (fifoLinks || !g.fifo) {
				t.Errorf("%s: %s and %s are not one file", what, g.names[0], n)
			}
			if !g.fifo {
				if data, _ := os.ReadFile(filepath.Join(root, n)); string(data) != g.data {
					t.Errorf("%s: %s holds %.40q, want %.40q", what, n, data, g.data)
				}
			}
		}
	}
}

// toolEnv is the environment of the archivers the tests run.
func toolEnv() []string {
	return append(os.Environ(), "LC_ALL=C", "TZ=UTC")
}

// extract unpacks archive with tool into a new directory and returns it;
// the tool must say nothing on stderr.
func extract(t *testing.T, tool, archive string) string {
	t.Helper()
	dir := t.TempDir()
	var cmd *exec.Cmd
	switch tool {
	case "tar":
		cmd = exec.Command("tar", "-xpf", archive)
	case "bsdtar":
		cmd = exec.Command("bsdtar", "-xpf", archive)
	case "cpio":
		cmd = exec.Command("sh", "-c", `exec cpio -idm --quiet < "$1"`, "sh", archive)
	}
	cmd.Dir, cmd.Env = dir, toolEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("%s extracting %s: %v: %s", tool, filepath.Base(archive), err, stderr.String())
	}
	return dir
}

// Hard links survive every conversion between tar (GNU tar's and
// bsdtar's), newc and a tree, through repack and apply: each result is
// extracted by GNU tar, bsdtar and GNU cpio, and every group is one file
// with its data.
func TestHardLinkRoundTrips(t *testing.T) {
	for _, tool := range []string{"tar", "bsdtar", "cpio"} {
		archivetest.RequireTool(t, tool)
	}
	bin := binary(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	makeLinkTree(t, src)
	members := []string{"d", "d/g", "d/g2", "d/p", "f", "h", "k", "p2", "plain"}
	inputs := map[string]*exec.Cmd{
		"gnu.tar": exec.Command("tar", append([]string{"--format=gnu", "--no-recursion", "-cf", filepath.Join(dir, "gnu.tar"), "-C", src}, members...)...),
		"bsd.tar": exec.Command("bsdtar", append([]string{"-n", "-cf", filepath.Join(dir, "bsd.tar"), "-C", src}, members...)...),
	}
	for _, cmd := range inputs {
		cmd.Env = toolEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", cmd.Args, err, out)
		}
	}
	// The tools themselves keep the links: the check is sound.
	checkLinkTree(t, extract(t, "tar", filepath.Join(dir, "gnu.tar")), "GNU tar's own archive", false)
	checkLinkTree(t, extract(t, "bsdtar", filepath.Join(dir, "bsd.tar")), "bsdtar's own archive", true)

	run := func(t *testing.T, args ...string) {
		t.Helper()
		r := runBinary(t, exec.Command(bin, args...))
		if r.code != 0 {
			t.Fatalf("rootfs-trim %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	// checkOut checks an output, whatever its format.
	checkOut := func(t *testing.T, out, what string, fifoLinks bool) {
		t.Helper()
		fi, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		if fi.IsDir() {
			checkLinkTree(t, out, what, fifoLinks)
			return
		}
		tools := []string{"tar", "bsdtar"}
		if strings.HasSuffix(out, ".cpio") {
			tools = []string{"cpio", "bsdtar"}
		}
		for _, tool := range tools {
			checkLinkTree(t, extract(t, tool, out), what+", extracted by "+tool, fifoLinks)
		}
		if !strings.HasSuffix(out, ".cpio") {
			for _, tool := range []string{"tar", "bsdtar"} {
				list, err := exec.Command(tool, "-tvf", out).CombinedOutput()
				if err != nil || !bytes.Contains(list, []byte(" link to ")) {
					t.Errorf("%s: %s -tvf lists no hard link: %v\n%s", what, tool, err, list)
				}
			}
		}
	}
	for in := range inputs {
		t.Run(in, func(t *testing.T) {
			fifoLinks := in == "bsd.tar"
			in = filepath.Join(dir, in)
			work := t.TempDir()
			out := func(name string) string { return filepath.Join(work, name) }
			steps := []struct {
				args []string
				out  string
			}{
				{[]string{"repack", in}, out("o.tar")},
				{[]string{"repack", "--format", "newc", in}, out("o.cpio")},
				{[]string{"repack", "--format", "dir", in}, out("o.dir")},
				{[]string{"repack", "--format", "tar", out("o.cpio")}, out("back.tar")},
				{[]string{"repack", "--format", "dir", out("o.cpio")}, out("back.dir")},
				{[]string{"repack", "--format", "tar", out("o.dir")}, out("dir.tar")},
				{[]string{"repack", "--format", "newc", out("o.dir")}, out("dir.cpio")},
				{[]string{"repack", "--format", "newc", out("back.tar")}, out("again.cpio")},
				{[]string{"apply", "--quiet", "--rules", "../../rules", in}, out("applied.tar")},
				{[]string{"apply", "--quiet", "--rules", "../../rules", "--format", "newc", in}, out("applied.cpio")},
				{[]string{"apply", "--quiet", "--rules", "../../rules", "--format", "dir", in}, out("applied.dir")},
				{[]string{"apply", "--quiet", "--rules", "../../rules", "--format", "tar", out("o.cpio")}, out("applied-cpio.tar")},
			}
			for _, s := range steps {
				run(t, append(s.args, s.out)...)
				checkOut(t, s.out, strings.Join(append(s.args[:len(s.args)-1:len(s.args)-1], filepath.Base(s.args[len(s.args)-1]), "->", filepath.Base(s.out)), " "), fifoLinks)
			}
		})
	}
}
