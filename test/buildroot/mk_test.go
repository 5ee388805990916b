package buildroot

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// These tests run the package's .mk with GNU make, as Buildroot includes
// it: its variables evaluated, its hooks run as recipes with the
// variables Buildroot gives them. Buildroot itself is not in CI (it must
// be downloaded); the macros the .mk ends with ($(eval $(golang-package))
// and the host one) are defined empty here, so what is checked is the
// .mk's own text, the input Buildroot's infrastructure works from.

// mkHarness is a makefile that includes the package's .mk.
type mkHarness struct {
	t    *testing.T
	repo string
	// vars are Buildroot's variables the .mk reads (NAME=value, passed
	// on make's command line).
	vars map[string]string
}

func newMkHarness(t *testing.T, repo string) *mkHarness {
	t.Helper()
	archivetest.RequireTool(t, "make")
	return &mkHarness{t: t, repo: repo, vars: map[string]string{
		"BR2_EXTERNAL_ROOTFS_TRIM_PATH": filepath.Join(repo, "buildroot"),
		"BASE_DIR":                      filepath.Join(t.TempDir(), "output"),
		"INSTALL":                       "install",
		"GO_BIN":                        "go",
		"GO_VERSION":                    "1.23.12",
		"ROOTFS_TRIM_PKGDIR":            filepath.Join(repo, "buildroot", "package", "rootfs-trim") + "/",
	}}
}

// run runs make with the .mk included, extra makefile text after it, and
// goals; it returns make's output and error.
func (h *mkHarness) run(extra string, goals ...string) (string, error) {
	h.t.Helper()
	dir := h.t.TempDir()
	text := "golang-package :=\nhost-golang-package :=\n" +
		"include " + filepath.Join(h.repo, "buildroot", "package", "rootfs-trim", "rootfs-trim.mk") + "\n" + extra
	mf := filepath.Join(dir, "Makefile")
	if err := os.WriteFile(mf, []byte(text), 0o644); err != nil {
		h.t.Fatal(err)
	}
	args := []string{"--no-print-directory", "-f", mf}
	for k, v := range h.vars {
		args = append(args, k+"="+v)
	}
	cmd := exec.Command("make", append(args, goals...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "MAKEFLAGS=", "MAKELEVEL=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// values evaluates the named variables after the .mk.
func (h *mkHarness) values(names ...string) map[string]string {
	h.t.Helper()
	var extra strings.Builder
	for _, n := range names {
		fmt.Fprintf(&extra, "$(info %s=$(strip $(%s)))\n", n, n)
	}
	extra.WriteString("all: ;\n")
	out, err := h.run(extra.String(), "all")
	if err != nil {
		h.t.Fatalf("make: %v\n%s", err, out)
	}
	vals := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && slices.Contains(names, k) {
			vals[k] = v
		}
	}
	return vals
}

// hook runs the make variable define as Buildroot runs a step or a hook:
// as the recipe of a stamp file in dir, so that $(@D) is dir.
func (h *mkHarness) hook(define, dir string) (string, error) {
	h.t.Helper()
	stamp := filepath.Join(dir, ".stamp_test")
	return h.run(fmt.Sprintf("%s:\n\t$(%s)\n", stamp, define), stamp)
}

// TestMkVersionAndLicense: the version is the VERSION file the binary
// embeds, and the license files are the project's plus those of every
// vendored module linked into the binary, so legal-info carries them all.
func TestMkVersionAndLicense(t *testing.T) {
	repo := repoRoot(t)
	h := newMkHarness(t, repo)
	v := h.values("ROOTFS_TRIM_VERSION", "HOST_ROOTFS_TRIM_VERSION", "ROOTFS_TRIM_LICENSE",
		"HOST_ROOTFS_TRIM_LICENSE", "ROOTFS_TRIM_LICENSE_FILES", "HOST_ROOTFS_TRIM_LICENSE_FILES")
	want := strings.TrimSpace(readFile(t, filepath.Join(repo, "VERSION")))
	if v["ROOTFS_TRIM_VERSION"] != want || want == "" {
		t.Errorf("ROOTFS_TRIM_VERSION = %q, VERSION says %q", v["ROOTFS_TRIM_VERSION"], want)
	}
	// The host package takes the target's version and license files
	// (pkg-generic.mk); its license is its own, or the golang
	// infrastructure's remark on vendored licenses comes twice.
	if v["HOST_ROOTFS_TRIM_VERSION"] != "" || v["HOST_ROOTFS_TRIM_LICENSE_FILES"] != "" {
		t.Errorf("HOST_ROOTFS_TRIM_VERSION %q, _LICENSE_FILES %q: leave them to the target package's", v["HOST_ROOTFS_TRIM_VERSION"], v["HOST_ROOTFS_TRIM_LICENSE_FILES"])
	}
	if v["HOST_ROOTFS_TRIM_LICENSE"] != v["ROOTFS_TRIM_LICENSE"] {
		t.Errorf("HOST_ROOTFS_TRIM_LICENSE %q != ROOTFS_TRIM_LICENSE %q", v["HOST_ROOTFS_TRIM_LICENSE"], v["ROOTFS_TRIM_LICENSE"])
	}
	files := strings.Fields(v["ROOTFS_TRIM_LICENSE_FILES"])
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(repo, f)); err != nil {
			t.Errorf("ROOTFS_TRIM_LICENSE_FILES: %v", err)
		}
	}
	if diff := cmp.Diff(linkedLicenseFiles(t, repo), files); diff != "" {
		t.Errorf("ROOTFS_TRIM_LICENSE_FILES against LICENSE and the linked modules' license files in vendor/ (-want +got):\n%s", diff)
	}
	// Each file's license is named (SPDX ids as Buildroot uses them).
	licenses := strings.Split(v["ROOTFS_TRIM_LICENSE"], ", ")
	for id, marker := range map[string]string{
		"Apache-2.0":   "Apache License",
		"BSD-3-Clause": "Neither the name of",
		"MIT":          "Permission is hereby granted, free of charge",
	} {
		found := false
		for _, f := range files {
			found = found || strings.Contains(readFile(t, filepath.Join(repo, f)), marker)
		}
		if found != slices.Contains(licenses, id) {
			t.Errorf("ROOTFS_TRIM_LICENSE = %q; a license file with %q: %v", v["ROOTFS_TRIM_LICENSE"], marker, found)
		}
	}
	if !strings.HasPrefix(readFile(t, filepath.Join(repo, "LICENSE")), "\n                                 Apache License\n                           Version 2.0, January 2004\n") {
		t.Errorf("LICENSE is not the Apache License 2.0 text")
	}
}

// linkedLicenseFiles lists LICENSE and the license, notice and patents
// files of each vendored module cmd/rootfs-trim links, sorted as in the .mk.
func linkedLicenseFiles(t *testing.T, repo string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-mod=vendor", "-deps", "-f", "{{if not .Standard}}{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}{{end}}", "./cmd/rootfs-trim")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=vendor", "GOPROXY=off", "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var files []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		mod := sc.Text()
		if mod == "" || seen[mod] {
			continue
		}
		seen[mod] = true
		root := filepath.Join(repo, "vendor", filepath.FromSlash(mod))
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != root {
				// A nested module has its own entry in go list.
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			if !d.IsDir() && regexp.MustCompile(`^(?i)(LICENSE|LICENCE|COPYING|NOTICE|PATENTS)(\..*)?$`).MatchString(d.Name()) {
				rel, _ := filepath.Rel(repo, path)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) == 0 {
		t.Fatal("go list found no vendored module in cmd/rootfs-trim")
	}
	sort.Strings(files)
	return append([]string{"LICENSE"}, files...)
}

// TestMkCheckGoVersion: an older host-go stops the build with a message
// naming the Go rootfs-trim needs and the Go it got, not a compiler error.
func TestMkCheckGoVersion(t *testing.T) {
	repo := repoRoot(t)
	need := regexp.MustCompile(`(?m)^go\s+(\S+)`).FindStringSubmatch(readFile(t, filepath.Join(repo, "go.mod")))
	if need == nil {
		t.Fatal("go.mod has no go line")
	}
	for _, c := range []struct {
		have string
		ok   bool
	}{
		{"go1.23.12", false}, // Buildroot 2025.02.14
		{"go1.25.7", false},  // Buildroot 2026.02
		{"go1.21.8", false},
		{"go" + need[1], true},
		{"go1.26.5", true}, // minikube's GO_VERSION
		{"go1.27.1", true},
	} {
		t.Run(c.have, func(t *testing.T) {
			h := newMkHarness(t, repo)
			// A go that reports c.have, and says how it was asked.
			fake := filepath.Join(t.TempDir(), "go")
			writeFile(t, fake, "#!/bin/sh\n[ \"$*\" = \"env GOVERSION\" ] || exit 3\n[ \"$GOTOOLCHAIN\" = local ] || exit 4\necho "+c.have+"\n", 0o755)
			h.vars["GO_BIN"] = fake
			h.vars["HOST_GO_COMMON_ENV"] = "GOTOOLCHAIN=local GOFLAGS=-mod=vendor GOPROXY=off"
			src := t.TempDir()
			if err := copyFile(filepath.Join(repo, "go.mod"), filepath.Join(src, "go.mod"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := h.hook("ROOTFS_TRIM_CHECK_GO_VERSION", src)
			if c.ok != (err == nil) {
				t.Fatalf("with %s: err %v, want ok=%v\n%s", c.have, err, c.ok, out)
			}
			if !c.ok {
				for _, want := range []string{"rootfs-trim needs Go " + need[1] + " or later", "host-go is Go " + strings.TrimPrefix(c.have, "go"), "GO_VERSION"} {
					if !strings.Contains(out, want) {
						t.Errorf("message lacks %q:\n%s", want, out)
					}
				}
			}
		})
	}
	// The real go, which builds these tests, passes.
	h := newMkHarness(t, repo)
	h.vars["HOST_GO_COMMON_ENV"] = "GOTOOLCHAIN=local"
	if out, err := h.hook("ROOTFS_TRIM_CHECK_GO_VERSION", repo); err != nil {
		t.Errorf("with this machine's go: %v\n%s", err, out)
	}
}

// TestMkRebuildAndInstall runs what Buildroot runs for a local package on
// a rebuild: the pre-rsync hook, its rsync of the checkout (no --delete),
// then the install steps. A rule or a unit deleted from the checkout must
// not come back, and the unit must be enabled the way Buildroot enables
// units: systemctl preset-all, with the preset the package installs.
func TestMkRebuildAndInstall(t *testing.T) {
	archivetest.RequireTool(t, "rsync")
	archivetest.RequireTool(t, "systemctl")
	repo := repoRoot(t)
	h := newMkHarness(t, repo)
	src := cleanCopy(t, repo)
	h.vars["BR2_EXTERNAL_ROOTFS_TRIM_PATH"] = filepath.Join(src, "buildroot")
	excl := strings.Fields(h.values("ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS")["ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS"])

	build := filepath.Join(t.TempDir(), "build", "host-rootfs-trim-0.1.0")
	rsyncStep := func() {
		t.Helper()
		if out, err := h.hook("ROOTFS_TRIM_RSYNC_FROM_EMPTY", build); err != nil {
			t.Fatalf("pre-rsync hook: %v\n%s", err, out)
		}
		// pkg-generic.mk's .stamp_rsynced recipe.
		args := append([]string{"-au", "--chmod=u=rwX,go=rX"}, excl...)
		args = append(args, "--exclude", ".git", src+"/", build)
		if out, err := exec.Command("rsync", args...).CombinedOutput(); err != nil {
			t.Fatalf("rsync: %v\n%s", err, out)
		}
	}
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(build, ".stamp_configured"), "", 0o644)
	rsyncStep()

	rules, _ := filepath.Glob(filepath.Join(src, "rules", "*.yaml"))
	if len(rules) < 2 {
		t.Fatalf("want two rule files to delete one, have %v", rules)
	}
	gone := filepath.Base(rules[0])
	if err := os.Remove(rules[0]); err != nil {
		t.Fatal(err)
	}
	// <pkg>-rebuild: the rsync stamp goes, the rsync runs again.
	rsyncStep()
	if _, err := os.Stat(filepath.Join(build, "rules", gone)); err == nil {
		t.Errorf("rules/%s, deleted from the checkout, is still in the build directory after a rebuild", gone)
	}
	if _, err := os.Stat(filepath.Join(build, ".stamp_configured")); err != nil {
		t.Errorf("the pre-rsync hook removed Buildroot's stamp: %v", err)
	}

	hostDir := filepath.Join(t.TempDir(), "host")
	writeFile(t, filepath.Join(hostDir, "share", "rootfs-trim", "rules", gone), "stale\n", 0o644)
	h.vars["HOST_DIR"] = hostDir
	if out, err := h.hook("HOST_ROOTFS_TRIM_INSTALL_RULES", build); err != nil {
		t.Fatalf("HOST_ROOTFS_TRIM_INSTALL_RULES: %v\n%s", err, out)
	}
	installed := filepath.Join(hostDir, "share", "rootfs-trim", "rules")
	if diff := cmp.Diff(treeListingNoTimes(t, filepath.Join(src, "rules")), treeListingNoTimes(t, installed)); diff != "" {
		t.Errorf("installed rules differ from the checkout's (-checkout +installed):\n%s", diff)
	}
	// The host binary, where the golang infrastructure installs it, finds
	// them without --rules.
	data, err := os.ReadFile(toolBin)
	if err != nil {
		t.Fatal(err)
	}
	hostBin := filepath.Join(hostDir, "bin", "rootfs-trim")
	writeFile(t, hostBin, string(data), 0o755)
	version, err := exec.Command(hostBin, "version").Output()
	if err != nil || !strings.Contains(string(version), "\nrules "+installed+" sha256:") {
		t.Errorf("$(HOST_DIR)/bin/rootfs-trim version: %v; does not name the installed rules:\n%s", err, version)
	}

	target := filepath.Join(t.TempDir(), "target")
	h.vars["TARGET_DIR"] = target
	h.vars["ROOTFS_TRIM_PKGDIR"] = filepath.Join(src, "buildroot", "package", "rootfs-trim") + "/"
	if out, err := h.hook("ROOTFS_TRIM_INSTALL_INIT_SYSTEMD", build); err != nil {
		t.Fatalf("ROOTFS_TRIM_INSTALL_INIT_SYSTEMD: %v\n%s", err, out)
	}
	wants, _ := filepath.Glob(filepath.Join(target, "etc", "systemd", "system", "*.wants", "*"))
	if len(wants) != 0 {
		t.Errorf("the package installs enablement links %v: the preset makes them", wants)
	}
	// SYSTEMD_PRESET_ALL in Buildroot's package/systemd/systemd.mk, run
	// on every filesystem image.
	if out, err := exec.Command("systemctl", "--root="+target, "preset-all").CombinedOutput(); err != nil {
		t.Fatalf("systemctl preset-all: %v\n%s", err, out)
	}
	out, err := exec.Command("systemctl", "--root="+target, "is-enabled", "rootfs-trim-render.service").CombinedOutput()
	if got := strings.TrimSpace(string(out)); err != nil || got != "enabled" {
		t.Errorf("after preset-all, rootfs-trim-render.service is %q (%v), want enabled", got, err)
	}
	link, err := os.Readlink(filepath.Join(target, "etc", "systemd", "system", "multi-user.target.wants", "rootfs-trim-render.service"))
	if err != nil || link != "/usr/lib/systemd/system/rootfs-trim-render.service" {
		t.Errorf("preset-all made no multi-user.target.wants link to the unit: %q, %v", link, err)
	}
}

// treeListingNoTimes is treeListing without mtimes (cp does not keep them).
func treeListingNoTimes(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, l := range treeListing(t, root) {
		f := strings.Fields(l)
		out = append(out, strings.Join(append(f[:2:2], f[3:]...), " "))
	}
	return out
}

// TestMkOutputInsideCheckout: with O= inside the checkout (out/, or any
// other directory), neither the build's rsync nor legal-info's copies the
// output directory into itself, and legal-info's extra exclusions stay on
// the package's own legal-info targets.
func TestMkOutputInsideCheckout(t *testing.T) {
	repo := repoRoot(t)
	for _, c := range []struct{ base, want string }{
		{filepath.Join(repo, "out", "x86_64"), "--exclude=/out/x86_64"},
		{filepath.Join(repo, "build-aarch64"), "--exclude=/build-aarch64"},
		{filepath.Join(t.TempDir(), "output"), ""},
	} {
		h := newMkHarness(t, repo)
		h.vars["BASE_DIR"] = c.base
		excl := h.values("ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS")["ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS"]
		for _, want := range []string{"--exclude=/out", "--exclude=/bin", "--exclude=/.bench", c.want} {
			if !slices.Contains(strings.Fields(excl), want) && want != "" {
				t.Errorf("O=%s: exclusions %q lack %s", c.base, excl, want)
			}
		}
		if c.want == "" && len(strings.Fields(excl)) != 3 {
			t.Errorf("O=%s outside the checkout: exclusions %q", c.base, excl)
		}
		// Buildroot's Makefile sets it (not make's command line, which
		// would override the .mk's); the recipes print what
		// pkg-generic.mk's legal-info rsync gets.
		out, err := h.run("RSYNC_VCS_EXCLUSIONS = --exclude .git\nrootfs-trim-legal-info host-rootfs-trim-legal-info other-legal-info:\n\t@echo $@: $(RSYNC_VCS_EXCLUSIONS)\n",
			"rootfs-trim-legal-info", "host-rootfs-trim-legal-info", "other-legal-info")
		if err != nil {
			t.Fatalf("make: %v\n%s", err, out)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			name, got, _ := strings.Cut(l, ": ")
			want := "--exclude .git"
			if name != "other-legal-info" {
				want += " " + strings.Join(strings.Fields(excl), " ")
			}
			if strings.Join(strings.Fields(got), " ") != want {
				t.Errorf("O=%s: %s rsyncs with %q, want %q", c.base, name, got, want)
			}
		}
	}
}
