// Package gobintest builds real Go binaries for tests, with the build
// information each way of building records: a module installed at a
// version (go install MODULE@VERSION from a local module proxy), a
// module built from its directory ("(devel)") and a GOPATH build (no
// module, only the main package's path).
package gobintest

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

const mainGo = "package main\n\nfunc main() {}\n"

// Builder runs the go command with an environment of its own: a
// private cache, GOPATH and GOBIN, no network, no toolchain switch, and
// none of the caller's GOFLAGS (this machine sets -buildvcs=false); a
// module cache its temporary directory can remove (-modcacherw).
type Builder struct {
	dir string
	env []string
	t   T
}

// T is what a Builder needs of a test: testing.TB has it, and a CLI
// scenario's adapter (testscript's TestScript has no TempDir).
type T interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	TempDir() string
}

// New returns a Builder whose files live in a test's temporary directory.
// A Go toolchain is what runs the tests, so a missing go command fails.
func New(t T) *Builder {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("no go command on PATH to build the fixtures with")
	}
	dir := t.TempDir()
	b := &Builder{dir: dir, t: t}
	b.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C",
		"GOCACHE=" + filepath.Join(dir, "cache"), "GOPATH=" + filepath.Join(dir, "gopath"),
		"GOBIN=" + filepath.Join(dir, "bin"), "GOTOOLCHAIN=local", "GOENV=off",
		"GOPROXY=file://" + filepath.Join(dir, "proxy"), "GOSUMDB=off",
		"GOFLAGS=-mod=mod -buildvcs=false -modcacherw", "CGO_ENABLED=0", "TMPDIR=" + dir,
	}
	return b
}

// Module builds module at version with go install MODULE@VERSION, the
// module served from the Builder's own proxy, and returns the binary.
func (b *Builder) Module(module, version string) string {
	b.t.Helper()
	b.serve(module, version)
	b.run("", nil, "install", module+"@"+version)
	return b.moved(filepath.Join(b.dir, "bin", path.Base(module)), module+"@"+version)
}

// Devel builds module from a directory, as from a checkout without VCS
// stamping: its version is "(devel)".
func (b *Builder) Devel(module string) string {
	b.t.Helper()
	src := filepath.Join(b.dir, "devel", path.Base(module))
	b.write(filepath.Join(src, "go.mod"), "module "+module+"\n\ngo 1.21\n")
	b.write(filepath.Join(src, "main.go"), mainGo)
	out := filepath.Join(b.dir, "out", "devel-"+path.Base(module))
	b.run(src, nil, "build", "-o", out, ".")
	return out
}

// GOPATH builds pkg in GOPATH mode (GO111MODULE=off): no module, only
// the main package's path, as Debian builds its Go packages.
func (b *Builder) GOPATH(pkg string) string {
	b.t.Helper()
	src := filepath.Join(b.dir, "gopath", "src", filepath.FromSlash(pkg))
	b.write(filepath.Join(src, "main.go"), mainGo)
	b.run(src, []string{"GO111MODULE=off", "GOFLAGS="}, "install", pkg)
	return b.moved(filepath.Join(b.dir, "bin", path.Base(pkg)), pkg)
}

// VersionM is what go version -m prints of bin: the oracle.
func (b *Builder) VersionM(bin string) string {
	b.t.Helper()
	return b.run("", nil, "version", "-m", bin)
}

// serve writes module at version into the proxy's directory, in the
// layout go mod download serves: @v/list, .info, .mod and .zip.
func (b *Builder) serve(module, version string) {
	b.t.Helper()
	at := filepath.Join(b.dir, "proxy", filepath.FromSlash(module), "@v")
	gomod := "module " + module + "\n\ngo 1.21\n"
	b.write(filepath.Join(at, version+".info"), fmt.Sprintf("{\"Version\":%q,\"Time\":\"2025-01-02T03:04:05Z\"}\n", version))
	b.write(filepath.Join(at, version+".mod"), gomod)
	list, _ := os.ReadFile(filepath.Join(at, "list"))
	b.write(filepath.Join(at, "list"), string(list)+version+"\n")
	f, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		b.t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, data := range map[string]string{"go.mod": gomod, "main.go": mainGo} {
		w, err := zw.Create(module + "@" + version + "/" + name)
		if err == nil {
			_, err = w.Write([]byte(data))
		}
		if err != nil {
			b.t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		b.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.t.Fatal(err)
	}
}

// moved renames what go install wrote out of GOBIN, so that the next
// build of the same name does not overwrite it.
func (b *Builder) moved(bin, what string) string {
	b.t.Helper()
	out := filepath.Join(b.dir, "out", strings.NewReplacer("/", "_", "@", "_").Replace(what))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.Rename(bin, out); err != nil {
		b.t.Fatal(err)
	}
	return out
}

func (b *Builder) write(name, data string) {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func (b *Builder) run(dir string, env []string, args ...string) string {
	b.t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, b.env...), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
