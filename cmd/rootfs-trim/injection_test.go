package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// TestNoWorkflowCommandInOutput: strings an input controls (an image
// config's os and architecture, a docker-archive layer's name, an ISO's
// file and directory names, the lines of a deferred file) reach stdout
// and stderr, in listings, reports and error messages. Shown raw, a
// newline then "::error ..." or "::stop-commands::TOKEN", or the old form
// "##[error]" anywhere in a line, is a workflow command to the GitHub
// Actions runner that runs rootfs-trim in CI (actions/runner
// ActionCommand.TryParseV2 and TryParse). No line of any run may be one,
// but for rootfs-trim's own annotations (--report github).
func TestNoWorkflowCommandInOutput(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	rulesDir, err := filepath.Abs(filepath.Join("..", "..", "rules"))
	if err != nil {
		t.Fatal(err)
	}
	packages, err := filepath.Abs(filepath.Join("..", "..", "testdata", "packages"))
	if err != nil {
		t.Fatal(err)
	}

	layout := filepath.Join(dir, "layout")
	ocitest.WriteLayout(layout, ocitest.Image(ocitest.Kicbase(packages), "linux/amd64"), "kicbase")
	ocitest.RewriteConfig(layout, func(cfg map[string]any) {
		cfg["os"] = "linux\n::error::from the config's os"
		cfg["architecture"] = "amd64 ##[error]from the config's architecture"
	})

	docker := filepath.Join(dir, "docker.tar")
	hostileLayerArchive(t, docker, "0123\n::error::from a layer name ##[error]again/layer.tar")

	kernel, initrd := filepath.Join(dir, "kernel"), filepath.Join(dir, "initrd")
	writeFile(t, kernel, "a kernel")
	writeFile(t, initrd, string(newcOf(t, "etc/motd")))
	named := filepath.Join(dir, "named.iso")
	isotest.Build(t, isotest.BIOS, kernel, initrd, named, map[string]string{
		"boot/##[error]from an ISO file name": "x",
		"::stop-commands::tok1/f":             "x",
	})
	// A directory 64 deep under a hostile name: the reader's error names it.
	deep := filepath.Join(dir, "deep.iso")
	isotest.Build(t, isotest.BIOS, kernel, initrd, deep, map[string]string{
		"x\n::stop-commands::tok2/" + strings.Repeat("d/", 64) + "f": "x",
	})

	// A deferred file whose unchanged lines, in the diff check shows, are
	// indented commands; the runner trims that indent.
	conf := "etc/cni/net.d/10-containerd-net.conflist"
	v1, v2 := filepath.Join(dir, "v1"), filepath.Join(dir, "v2")
	writeFile(t, filepath.Join(v1, conf), "{\n::error::from a deferred file's line\n  ::stop-commands::tok3\n\"cniVersion\": \"1.0.0\"\n}\n")
	writeFile(t, filepath.Join(v2, conf), "{\n::error::from a deferred file's line\n  ::stop-commands::tok3\n\"cniVersion\": \"1.1.0\"\n}\n")
	lock := filepath.Join(dir, "check.lock")
	if r := runIn(t, dir, bin, "check", "--rules", rulesDir, "--lock", lock, "--update-lock", "containerd-bin="+v1); r.code != 0 {
		t.Fatalf("check --update-lock: exit %d\n%s", r.code, r.stderr)
	}

	runs := []struct {
		args []string
		// want is a piece of the output that shows the hostile string
		// reached it (escaped), so that the run cannot pass by failing
		// early.
		want string
	}{
		{[]string{"list", layout}, `# image "linux\n::error::from the config's os/amd64 ##\x5berror]from the config's architecture"`},
		{[]string{"audit", "--rules", rulesDir, layout}, "warning"},
		{[]string{"audit", "--rules", rulesDir, "--report", "github", layout}, "::warning "},
		{[]string{"list", "--json", layout}, `"platform":"linux\n::error::from the config's os/amd64 ##\u005berror]from the config's architecture"`},
		{[]string{"list", docker}, `\n::error::from a layer name ##\x5berror]again/layer.tar`},
		{[]string{"audit", "--rules", rulesDir, docker}, `\n::error::from a layer name ##\x5berror]again/layer.tar`},
		{[]string{"list", named}, `##\x5berror]from an ISO file name`},
		{[]string{"list", "--json", named}, `"path":"/boot/##\u005berror]from an ISO file name"`},
		{[]string{"list", deep}, `x\n::stop-commands::tok2/d/d/`},
		{[]string{"audit", "--rules", rulesDir, deep}, `x\n::stop-commands::tok2/d/d/`},
		{[]string{"check", "--rules", rulesDir, "--lock", lock, "containerd-bin=" + v2}, `\x3a:error::from a deferred file's line`},
		{[]string{"check", "--rules", rulesDir, "--lock", lock, "--format", "github", "containerd-bin=" + v2}, "::error "},
	}
	for _, run := range runs {
		r := runIn(t, dir, bin, run.args...)
		out := r.stdout + r.stderr
		if !strings.Contains(out, run.want) {
			t.Errorf("%s: exit %d, output holds no %q:\n%s", run.args, r.code, run.want, firstLines(out, 20))
		}
		github := slices.Contains(run.args, "github")
		for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
			own := strings.HasPrefix(line, "::error ") || strings.HasPrefix(line, "::warning ") || strings.HasPrefix(line, "::notice ")
			if github && own && !strings.Contains(line, "##[") {
				continue // rootfs-trim's own annotation (the notice: check's summary)
			}
			if names.Command(line) {
				t.Errorf("%s: a workflow command in the output: %q", run.args, line)
			}
		}
	}
}

func runIn(t *testing.T, dir, bin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	return runBinary(t, cmd)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newcOf(t *testing.T, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := archive.NewCpioWriter(&buf, archive.Newc)
	for _, name := range files {
		if err := w.WriteHeader(&archive.Entry{Name: name, Type: archive.TypeRegular, Mode: 0o644, Size: 2}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("x\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hostileLayerArchive writes a docker save tarball whose manifest.json
// names a layer layer, which the tarball does not hold.
func hostileLayerArchive(t *testing.T, path, layer string) {
	t.Helper()
	cfg := `{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:` + strings.Repeat("0", 64) + `"]}}`
	// Named as docker save names a config (its sha256), so that the
	// tarball is an image, not a plain archive that holds a manifest.json.
	sum := sha256.Sum256([]byte(cfg))
	cfgName := hex.EncodeToString(sum[:]) + ".json"
	manifest, err := json.Marshal([]map[string]any{{"Config": cfgName, "RepoTags": []string{"x:1"}, "Layers": []string{layer}}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range []struct{ name, data string }{{cfgName, cfg}, {"manifest.json", string(manifest)}} {
		if err := tw.WriteHeader(&tar.Header{Name: m.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(m.data))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(m.data))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, buf.String())
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}
