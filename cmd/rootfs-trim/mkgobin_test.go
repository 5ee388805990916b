package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rootfs-trim/rootfs-trim/pkg/owners/gobintest"
)

// mkgobin OUT MODULE@VERSION | OUT devel MODULE | OUT gopath PACKAGE: a
// real Go binary at OUT, built in module mode at VERSION (go install from
// a local module proxy), from a directory ("(devel)") or in GOPATH mode
// (no module); its go version -m is written beside it, at OUT.version-m.
func mkgobin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: mkgobin OUT MODULE@VERSION | OUT devel MODULE | OUT gopath PACKAGE")
	}
	b := builderOf(ts)
	var bin string
	switch {
	case len(args) == 2 && strings.Contains(args[1], "@"):
		module, version, _ := strings.Cut(args[1], "@")
		bin = b.Module(module, version)
	case len(args) == 3 && args[1] == "devel":
		bin = b.Devel(args[2])
	case len(args) == 3 && args[1] == "gopath":
		bin = b.GOPATH(args[2])
	default:
		ts.Fatalf("usage: mkgobin OUT MODULE@VERSION | OUT devel MODULE | OUT gopath PACKAGE")
	}
	data, err := os.ReadFile(bin)
	ts.Check(err)
	out := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(out), 0o755))
	ts.Check(os.WriteFile(out, data, 0o755))
	ts.Check(os.WriteFile(out+".version-m", []byte(b.VersionM(bin)), 0o644))
}

// builders are the scenarios' Builders, one a scenario: the first build
// fills its cache, the next ones reuse it.
var builders sync.Map // *testscript.TestScript -> *gobintest.Builder

func builderOf(ts *testscript.TestScript) *gobintest.Builder {
	if b, ok := builders.Load(ts); ok {
		return b.(*gobintest.Builder)
	}
	b := gobintest.New(scriptT{ts})
	builders.Store(ts, b)
	ts.Defer(func() { builders.Delete(ts) })
	return b
}

// scriptT is the gobintest.T of a scenario: its files under the
// scenario's work directory, removed with it.
type scriptT struct{ ts *testscript.TestScript }

func (s scriptT) Helper()                           {}
func (s scriptT) Fatal(args ...any)                 { s.ts.Fatalf("%s", fmt.Sprint(args...)) }
func (s scriptT) Fatalf(format string, args ...any) { s.ts.Fatalf(format, args...) }
func (s scriptT) TempDir() string {
	dir, err := os.MkdirTemp(s.ts.MkAbs("."), ".gobuild-")
	s.ts.Check(err)
	return dir
}
