package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rootfs-trim/rootfs-trim/cmd/rootfs-trim/internal/cli"
	"github.com/rootfs-trim/rootfs-trim/internal/docblock"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script from the actual")

func TestMain(m *testing.M) {
	// The scripts set their own; the tests in Go run tools directly.
	archivetest.SetToolEnv()
	testscript.Main(m, map[string]func(){
		"rootfs-trim": func() { os.Exit(cli.Main(os.Args[1:])) },
	})
}

// TestScripts runs the command-line scenarios in testdata/script: each
// .txtar file runs the real binary and compares its output and files.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			// Every script gets the shipped rules as ./rules, so messages
			// name rule files as a user in a checkout sees them.
			if err := os.CopyFS(filepath.Join(env.WorkDir, "rules"), os.DirFS(filepath.Join("..", "..", "rules"))); err != nil {
				return err
			}
			env.Setenv("ROOTFS_TRIM_REQUIRE_TOOLS", os.Getenv(archivetest.RequireToolsEnv))
			example, err := filepath.Abs(filepath.Join("..", "..", "examples", "minikube"))
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLE", example)
			packages, err := filepath.Abs(filepath.Join("..", "..", "testdata", "packages"))
			if err != nil {
				return err
			}
			env.Setenv("PACKAGES", packages)
			env.Setenv("TZ", "UTC")
			env.Setenv("LC_ALL", "C.UTF-8")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// readme NAME FILE: the code block that follows the marker
			// <!-- block: NAME --> in README.md or another of
			// docblock.Docs, so the docs' commands are the ones the tests
			// run (TestDocBlocksRun: every block is run by a test).
			"readme": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: readme NAME FILE")
				}
				block, err := docblock.Block(filepath.Join("..", ".."), args[0])
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(block), 0o755))
			},
			"mkarchive": mkarchive,
			"mkiso":     mkiso,
			"mkgrubiso": mkgrubiso,
			"mkimage":   mkimage,
			"mkgobin":   mkgobin,
			// mkrootfs DIR: the shared fixture tree (devices only as root).
			"mkrootfs": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: mkrootfs DIR")
				}
				ts.Check(archivetest.MakeRootfsTree(ts.MkAbs(args[0])))
			},
			// mkhostiletar: a tar whose name sources disagree.
			"mkhostiletar": mkhostiletar,
			// ghstep FILE NAME [RUN]: a step of a GitHub Actions workflow.
			"ghstep": ghstep,
		},
		// [tool:NAME] holds when NAME is installed; under CI
		// (ROOTFS_TRIM_REQUIRE_TOOLS=1) a missing tool is an error, so
		// `[!tool:cpio] skip` can never hide an interoperability test there.
		// [root] holds when running as root (device nodes, ownership).
		Condition: func(cond string) (bool, error) {
			if tool, ok := strings.CutPrefix(cond, "tool:"); ok {
				missing, err := archivetest.ToolMissing(tool)
				return !missing, err
			}
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}
