package buildroot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sourceDateEpoch is what Buildroot exports with BR2_REPRODUCIBLE=y (the
// Buildroot commit's date); rootfs-trim stamps what it creates with it.
const sourceDateEpoch = 1735689600

// fakeBuildroot is a Buildroot source tree and output directory laid out
// the way Buildroot lays them out, holding what a post-build script can
// see when target-finalize calls it: the target directory after every
// package and overlay was installed, packages-file-list.txt, the host
// directory with host-rootfs-trim installed, and .config.
type fakeBuildroot struct {
	t    *testing.T
	repo string
	top  string // the Buildroot tree: make runs post-build scripts from here
	out  string // O= and BASE_DIR

	target, host, build, images, staging string
	config                               string // BR2_CONFIG

	// externals maps each br2-external tree's name to its path
	// (BR2_EXTERNAL_<NAME>_PATH).
	externals map[string]string

	// userPath is the PATH make was started with; Buildroot puts
	// $(HOST_DIR)/bin and sbin in front of it.
	userPath string
	// userEnv is more of the environment make was started with
	// (NAME=value), such as ROOTFS_TRIM.
	userEnv []string
}

// defaultConfig is the part of minikube's x86_64 .config that matters
// here: it has no post-build script, so ours is the only one, with no
// argument.
var defaultConfig = map[string]string{
	"BR2_x86_64":                        "y",
	"BR2_INIT_SYSTEMD":                  "y",
	"BR2_REPRODUCIBLE":                  "y",
	"BR2_TARGET_ROOTFS_CPIO":            "y",
	"BR2_TARGET_ROOTFS_CPIO_GZIP":       "y",
	"BR2_PACKAGE_ROOTFS_TRIM":           "y",
	"BR2_PACKAGE_HOST_ROOTFS_TRIM":      "y",
	"BR2_ROOTFS_POST_BUILD_SCRIPT":      `"$(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/scripts/post-build.sh"`,
	"BR2_ROOTFS_POST_SCRIPT_ARGS":       `""`,
	"BR2_ROOTFS_POST_BUILD_SCRIPT_ARGS": `""`,
}

func newFakeBuildroot(t *testing.T, config map[string]string) *fakeBuildroot {
	t.Helper()
	dir := t.TempDir()
	repo := repoRoot(t)
	f := &fakeBuildroot{
		t:    t,
		repo: repo,
		top:  filepath.Join(dir, "buildroot"),
		externals: map[string]string{
			"ROOTFS_TRIM": filepath.Join(repo, "buildroot"),
			"MINIKUBE":    filepath.Join(dir, "minikube", "deploy", "iso", "minikube-iso"),
		},
		userPath: os.Getenv("PATH"),
	}
	// Buildroot's default output directory.
	f.out = filepath.Join(f.top, "output")
	f.target = filepath.Join(f.out, "target")
	f.host = filepath.Join(f.out, "host")
	f.build = filepath.Join(f.out, "build")
	f.images = filepath.Join(f.out, "images")
	f.staging = filepath.Join(f.host, "x86_64-buildroot-linux-gnu", "sysroot")
	f.config = filepath.Join(f.out, ".config")
	for _, d := range []string{f.top, f.build, f.images, f.staging, filepath.Join(f.host, "bin"), filepath.Join(f.host, "sbin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.writeMinikubeExternal()
	f.installHostPackage()
	f.writeTarget()
	f.writeConfig(config)
	return f
}

// writeMinikubeExternal makes the parts of minikube's br2-external tree
// the aarch64 configuration points at: a post-build script that copies
// grub.cfg (as minikube's does), and the genimage.cfg that
// BR2_ROOTFS_POST_SCRIPT_ARGS passes to every script.
func (f *fakeBuildroot) writeMinikubeExternal() {
	board := filepath.Join(f.externals["MINIKUBE"], "board", "minikube", "aarch64")
	writeFile(f.t, filepath.Join(board, "post-build.sh"), `#!/bin/sh
set -e
BOARD_DIR=$(dirname "$0")
# Records how it was called, for the test.
printf '%s\n' "$@" > "$BINARIES_DIR/grub-post-build.args"
mkdir -p "$BINARIES_DIR/efi-part/EFI/BOOT"
cp -f "$BOARD_DIR/grub.cfg" "$BINARIES_DIR/efi-part/EFI/BOOT/grub.cfg"
`, 0o755)
	writeFile(f.t, filepath.Join(board, "grub.cfg"), "set default=\"0\"\nset timeout=\"0\"\n", 0o644)
	writeFile(f.t, filepath.Join(board, "genimage.cfg"), "image efi-part.vfat {\n}\n", 0o644)
}

// installHostPackage puts into HOST_DIR what host-rootfs-trim installs:
// the binary in bin/ and the shipped rules in share/rootfs-trim/rules.
func (f *fakeBuildroot) installHostPackage() {
	if err := copyFile(toolBin, filepath.Join(f.host, "bin", "rootfs-trim"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	copyTree(f.t, filepath.Join(f.repo, "rules"), filepath.Join(f.host, "share", "rootfs-trim", "rules"))
}

// writeTarget makes TARGET_DIR and packages-file-list.txt: the example
// minikube target (runtime packages, and the overlay's etc/cni/net.d/.keep,
// which no package owns), plus what the rootfs-trim target package
// installs (binary, buildroot-overlay/, preset), listed as rootfs-trim's.
func (f *fakeBuildroot) writeTarget() {
	ex := filepath.Join(f.repo, "examples", "minikube")
	copyTree(f.t, filepath.Join(ex, "target"), f.target)
	list := readFile(f.t, filepath.Join(ex, "packages-file-list.txt"))

	var owned []string
	install := func(src, rel string, mode fs.FileMode) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(f.target, rel)), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := copyFile(src, filepath.Join(f.target, rel), mode); err != nil {
			f.t.Fatal(err)
		}
		owned = append(owned, rel)
	}
	install(toolBin, "usr/bin/rootfs-trim", 0o755)
	overlay := filepath.Join(f.repo, "buildroot-overlay")
	copyTree(f.t, overlay, f.target)
	err := filepath.WalkDir(overlay, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(overlay, path)
		owned = append(owned, rel)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	install(filepath.Join(f.externals["ROOTFS_TRIM"], "package", "rootfs-trim", "50-rootfs-trim.preset"),
		"usr/lib/systemd/system-preset/50-rootfs-trim.preset", 0o644)
	for _, rel := range owned {
		list += "rootfs-trim,./" + filepath.ToSlash(rel) + "\n"
	}
	writeFile(f.t, filepath.Join(f.build, "packages-file-list.txt"), list, 0o644)
}

// writeConfig writes .config the way Kconfig does, from defaultConfig
// with changes: a value "" removes the option ("# ... is not set").
func (f *fakeBuildroot) writeConfig(changes map[string]string) {
	cfg := map[string]string{}
	for k, v := range defaultConfig {
		cfg[k] = v
	}
	for k, v := range changes {
		cfg[k] = v
	}
	var names []string
	for k := range cfg {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		if cfg[k] == "" {
			fmt.Fprintf(&b, "# %s is not set\n", k)
		} else {
			fmt.Fprintf(&b, "%s=%s\n", k, cfg[k])
		}
	}
	writeFile(f.t, f.config, b.String(), 0o644)
}

// readConfig reads .config back: the values make sees.
func (f *fakeBuildroot) readConfig() map[string]string {
	cfg := map[string]string{}
	for _, line := range strings.Split(readFile(f.t, f.config), "\n") {
		name, value, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if uq, err := strconv.Unquote(value); err == nil {
			value = uq // make's qstrip
		}
		cfg[name] = value
	}
	return cfg
}

var makeVar = regexp.MustCompile(`\$\(([A-Za-z0-9_]+)\)`)

// expand does make's expansion of the variable references a .config value
// may hold, such as $(BR2_EXTERNAL_MINIKUBE_PATH).
func (f *fakeBuildroot) expand(s string) string {
	vars := map[string]string{
		"TOPDIR":       f.top,
		"BASE_DIR":     f.out,
		"TARGET_DIR":   f.target,
		"HOST_DIR":     f.host,
		"BUILD_DIR":    f.build,
		"BINARIES_DIR": f.images,
	}
	for name, path := range f.externals {
		vars["BR2_EXTERNAL_"+name+"_PATH"] = path
	}
	return makeVar.ReplaceAllStringFunc(s, func(ref string) string {
		name := makeVar.FindStringSubmatch(ref)[1]
		v, ok := vars[name]
		if !ok {
			f.t.Fatalf("the fake Buildroot cannot expand %s", ref)
		}
		return v
	})
}

// env is the environment make gives recipes: the user's, plus what
// Buildroot's Makefile exports.
func (f *fakeBuildroot) env(cfg map[string]string) []string {
	env := []string{
		"PATH=" + f.userPath,
		"HOME=" + os.Getenv("HOME"),
		"BR2_CONFIG=" + f.config,
		"BR2_REPRODUCIBLE=" + cfg["BR2_REPRODUCIBLE"],
		"BR2_VERSION=2026.08",
		"BR2_VERSION_FULL=2026.08",
		"TARGET_DIR=" + f.target,
		"STAGING_DIR=" + f.staging,
		"HOST_DIR=" + f.host,
		"BINARIES_DIR=" + f.images,
		"BASE_DIR=" + f.out,
	}
	for name, path := range f.externals {
		env = append(env, "BR2_EXTERNAL_"+name+"_PATH="+path)
	}
	if cfg["BR2_REPRODUCIBLE"] == "y" {
		env = append(env, "TZ=UTC", "LANG=C", "LC_ALL=C", fmt.Sprintf("SOURCE_DATE_EPOCH=%d", sourceDateEpoch))
	}
	return append(env, f.userEnv...)
}

// postBuild is one run of the post-build scripts; err is nil when they
// all succeeded.
type postBuild struct {
	err error
	log string
}

// runPostBuild does what target-finalize does after writing
// packages-file-list.txt: each script of BR2_ROOTFS_POST_BUILD_SCRIPT in
// turn, through the shell, from the Buildroot tree, with EXTRA_ENV in
// front, TARGET_DIR as first argument and then the post-script arguments;
// the first failure stops the build.
func (f *fakeBuildroot) runPostBuild() postBuild {
	f.t.Helper()
	cfg := f.readConfig()
	extraEnv := strings.Join([]string{
		"PATH=" + f.host + "/bin:" + f.host + "/sbin:" + f.userPath,
		"BR2_DL_DIR=" + filepath.Join(f.top, "dl"),
		"BUILD_DIR=" + f.build,
		"CONFIG_DIR=" + f.out,
		"O=" + f.out,
		"PARALLEL_JOBS=2",
	}, " ")
	args := strings.TrimSpace(f.expand(cfg["BR2_ROOTFS_POST_SCRIPT_ARGS"]) + " " + f.expand(cfg["BR2_ROOTFS_POST_BUILD_SCRIPT_ARGS"]))
	var log strings.Builder
	for _, script := range strings.Fields(f.expand(cfg["BR2_ROOTFS_POST_BUILD_SCRIPT"])) {
		fmt.Fprintf(&log, ">>>   Executing post-build script %s\n", script)
		line := strings.Join([]string{extraEnv, script, f.target, args}, " ")
		cmd := exec.Command("/bin/sh", "-c", line)
		cmd.Dir = f.top
		cmd.Env = f.env(cfg)
		out, err := cmd.CombinedOutput()
		log.Write(out)
		if err != nil {
			return postBuild{err: fmt.Errorf("%s: %w", script, err), log: log.String()}
		}
	}
	return postBuild{log: log.String()}
}

// touchUsr is what target-finalize does after the post-build scripts
// (`touch $(TARGET_DIR)/usr`): a second make runs the script on a target
// whose usr is newer than anything the first run wrote.
func (f *fakeBuildroot) touchUsr() {
	now := time.Now()
	if err := os.Chtimes(filepath.Join(f.target, "usr"), now, now); err != nil {
		f.t.Fatal(err)
	}
}

func (r postBuild) exitCode() int {
	var exit *exec.ExitError
	if errors.As(r.err, &exit) {
		return exit.ExitCode()
	}
	if r.err != nil {
		return -1
	}
	return 0
}

type manifestFile struct {
	Input   manifestTree `json:"input"`
	Output  manifestTree `json:"output"`
	Rules   struct{ Dir, Digest string }
	Changes []struct {
		Kind, Path, To, Package, Rule string
	}
}

type manifestTree struct {
	Path, Digest string
	Entries      int
}

func (f *fakeBuildroot) manifestPath() string {
	return filepath.Join(f.images, "rootfs-trim-manifest.json")
}

func (f *fakeBuildroot) readManifest() manifestFile {
	f.t.Helper()
	var m manifestFile
	if err := json.Unmarshal([]byte(readFile(f.t, f.manifestPath())), &m); err != nil {
		f.t.Fatalf("%s: %v", f.manifestPath(), err)
	}
	return m
}

func mustSucceed(t *testing.T, r postBuild) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("post-build failed: %v\n%s", r.err, r.log)
	}
	t.Logf("post-build log:\n%s", r.log)
}

func checkFileSum(t *testing.T, path, want string) {
	t.Helper()
	got, err := sha256File(path)
	if err != nil {
		t.Error(err)
		return
	}
	if got != want {
		t.Errorf("%s changed", path)
	}
}

// TestPostBuildTwice is the x86_64 case: the script alone in
// BR2_ROOTFS_POST_BUILD_SCRIPT, rules and binary from host-rootfs-trim;
// then a second make, which runs it again on the trimmed target.
func TestPostBuildTwice(t *testing.T) {
	f := newFakeBuildroot(t, nil)
	podman := "etc/cni/net.d/87-podman-bridge.conflist"
	podmanSum, err := sha256File(filepath.Join(f.target, podman))
	if err != nil {
		t.Fatal(err)
	}
	untouched := map[string]string{}
	for _, p := range []string{
		"etc/containers/policy.json", "etc/containers/registries.conf",
		"etc/crio/crio.conf.d/02-crio.conf", "etc/containerd/config.toml",
		"etc/buildkit/buildkitd.toml", "etc/cni/net.d/.keep",
		"usr/bin/rootfs-trim", "usr/lib/systemd/system/rootfs-trim-render.service",
	} {
		if untouched[p], err = sha256File(filepath.Join(f.target, p)); err != nil {
			t.Fatal(err)
		}
	}

	first := f.runPostBuild()
	mustSucceed(t, first)

	// podman keeps its network in a directory of its own.
	if _, err := os.Lstat(filepath.Join(f.target, podman)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still in the target (err %v)", podman, err)
	}
	checkFileSum(t, filepath.Join(f.target, "etc/containers/net.d/87-podman-bridge.conflist"), podmanSum)
	for p, sum := range untouched {
		checkFileSum(t, filepath.Join(f.target, p), sum)
	}
	// The overlay's placeholder keeps etc/cni/net.d in the image.
	if fi, err := os.Stat(filepath.Join(f.target, "etc/cni/net.d")); err != nil || !fi.IsDir() {
		t.Errorf("etc/cni/net.d: %v", err)
	}
	// The templates and index for the boot step, stamped with
	// SOURCE_DATE_EPOCH: the environment reached rootfs-trim.
	for _, p := range []string{
		"usr/share/minikube/templates/crictl.tmpl",
		"usr/share/minikube/templates/bridge-cni.tmpl",
		"usr/share/minikube/rootfs-trim/index.json",
	} {
		fi, err := os.Lstat(filepath.Join(f.target, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if got := fi.ModTime().Unix(); got != sourceDateEpoch {
			t.Errorf("%s: mtime %d, want SOURCE_DATE_EPOCH %d", p, got, sourceDateEpoch)
		}
	}

	m := f.readManifest()
	if m.Input.Path != f.target {
		t.Errorf("manifest input path %q, want %q", m.Input.Path, f.target)
	}
	if want := filepath.Join(f.host, "share", "rootfs-trim", "rules"); m.Rules.Dir != want {
		t.Errorf("manifest rules dir %q, want host-rootfs-trim's %q", m.Rules.Dir, want)
	}
	found := false
	for _, c := range m.Changes {
		if c.Kind == "relocated" && c.Path == podman && c.Package == "podman" {
			found = true
		}
	}
	if !found {
		t.Errorf("manifest does not record %s relocated from package podman: %+v", podman, m.Changes)
	}
	checkImages(t, f, "rootfs-trim-manifest.json")

	// Buildroot's next make runs the script again on the tree it trimmed.
	f.touchUsr()
	before := treeListing(t, f.target)
	second := f.runPostBuild()
	mustSucceed(t, second)
	if !strings.Contains(second.log, "nothing to change") {
		t.Errorf("second run does not say \"nothing to change\":\n%s", second.log)
	}
	if d := diffListings(before, treeListing(t, f.target)); d != "" {
		t.Errorf("the second run changed the target:\n%s", d)
	}
	m = f.readManifest()
	if len(m.Changes) != 0 {
		t.Errorf("second manifest lists changes: %+v", m.Changes)
	}
	if m.Input.Digest != m.Output.Digest || m.Input.Digest == "" {
		t.Errorf("second manifest: input digest %q, output digest %q", m.Input.Digest, m.Output.Digest)
	}
	checkImages(t, f, "rootfs-trim-manifest.json")
}

// checkImages checks that BINARIES_DIR holds exactly the given names: no
// temporary file is left behind.
func checkImages(t *testing.T, f *fakeBuildroot, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(f.images)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("BINARIES_DIR holds %q, want %q", got, want)
	}
}

// TestPostBuildPolicyViolation: an overlay adds /etc/crictl.yaml, which
// no package owns and the policy forbids. The build must stop, naming the
// file, and leave the target exactly as it was; the manifest of an
// earlier build must not survive to describe this one.
func TestPostBuildPolicyViolation(t *testing.T) {
	f := newFakeBuildroot(t, nil)
	// An overlay installs a unit file in /etc/systemd/system: no package
	// owns it and no rule, not even the shipped fallback (which only
	// covers /etc/cni/net.d and /etc/crictl.yaml), handles it.
	writeFile(t, filepath.Join(f.target, "etc", "systemd", "system", "rogue.service"), "[Service]\nExecStart=/bin/true\n", 0o644)
	writeFile(t, f.manifestPath(), "{\"changes\": []}\n", 0o644)
	before := treeListing(t, f.target)

	r := f.runPostBuild()
	t.Logf("post-build log:\n%s", r.log)
	if r.exitCode() != 1 {
		t.Fatalf("exit status %d (%v), want 1 (policy violation)", r.exitCode(), r.err)
	}
	for _, want := range []string{"etc/systemd/system/rogue.service", "units-in-etc", "overlay or script", "Nothing was changed"} {
		if !strings.Contains(r.log, want) {
			t.Errorf("the build log does not say %q", want)
		}
	}
	if d := diffListings(before, treeListing(t, f.target)); d != "" {
		t.Errorf("a refused run changed the target:\n%s", d)
	}
	checkImages(t, f)
}

// TestPostBuildAfterAnotherScript is minikube's aarch64 configuration:
// its grub.cfg script first, ours appended, and the genimage.cfg of
// BR2_ROOTFS_POST_SCRIPT_ARGS given to both. Our rules come from the
// checkout through BR2_ROOTFS_POST_BUILD_SCRIPT_ARGS, which the grub
// script gets too.
func TestPostBuildAfterAnotherScript(t *testing.T) {
	f := newFakeBuildroot(t, map[string]string{
		"BR2_x86_64":                        "",
		"BR2_aarch64":                       "y",
		"BR2_TARGET_ROOTFS_CPIO_GZIP":       "",
		"BR2_TARGET_ROOTFS_CPIO_LZ4":        "y",
		"BR2_ROOTFS_POST_BUILD_SCRIPT":      `"$(BR2_EXTERNAL_MINIKUBE_PATH)/board/minikube/aarch64/post-build.sh $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/scripts/post-build.sh"`,
		"BR2_ROOTFS_POST_SCRIPT_ARGS":       `"$(BR2_EXTERNAL_MINIKUBE_PATH)/board/minikube/aarch64/genimage.cfg"`,
		"BR2_ROOTFS_POST_BUILD_SCRIPT_ARGS": `"--rules $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/../rules"`,
	})
	// Only --rules can tell the script where the rules are.
	if err := os.RemoveAll(filepath.Join(f.host, "share", "rootfs-trim")); err != nil {
		t.Fatal(err)
	}
	genimage := filepath.Join(f.externals["MINIKUBE"], "board/minikube/aarch64/genimage.cfg")
	// As make passes it, unclean; the manifest has it clean.
	rulesArg := f.externals["ROOTFS_TRIM"] + "/../rules"
	rules := filepath.Join(f.repo, "rules")

	for run := 1; run <= 2; run++ {
		before := treeListing(t, f.target)
		r := f.runPostBuild()
		mustSucceed(t, r)
		// Both scripts ran, with the same arguments.
		wantArgs := strings.Join([]string{f.target, genimage, "--rules", rulesArg}, "\n") + "\n"
		if got := readFile(t, filepath.Join(f.images, "grub-post-build.args")); got != wantArgs {
			t.Errorf("run %d: the grub script got %q, want %q", run, got, wantArgs)
		}
		if _, err := os.Stat(filepath.Join(f.images, "efi-part/EFI/BOOT/grub.cfg")); err != nil {
			t.Errorf("run %d: the grub script did not run: %v", run, err)
		}
		if !strings.Contains(r.log, "ignoring arguments meant for other scripts: "+genimage) {
			t.Errorf("run %d: the log does not name the ignored genimage.cfg", run)
		}
		m := f.readManifest()
		if m.Rules.Dir != rules {
			t.Errorf("run %d: manifest rules dir %q, want %q", run, m.Rules.Dir, rules)
		}
		switch run {
		case 1:
			if len(m.Changes) == 0 {
				t.Errorf("run 1 changed nothing")
			}
			if _, err := os.Lstat(filepath.Join(f.target, "etc/cni/net.d/87-podman-bridge.conflist")); err == nil {
				t.Errorf("run 1 left podman's conflist in etc/cni/net.d")
			}
		case 2:
			if len(m.Changes) != 0 {
				t.Errorf("run 2 manifest lists changes: %+v", m.Changes)
			}
			if d := diffListings(before, treeListing(t, f.target)); d != "" {
				t.Errorf("run 2 changed the target:\n%s", d)
			}
		}
		f.touchUsr()
	}
}

// TestPostBuildArguments covers how the script finds the binary and the
// rules, and that a mistake stops the build (exit 2) before the target is
// touched.
func TestPostBuildArguments(t *testing.T) {
	type tc struct {
		name   string
		config map[string]string
		status int
		want   string // in the build log
		// setup changes the fake Buildroot; it may return more to find
		// in the log.
		setup func(t *testing.T, f *fakeBuildroot) string
	}
	buildArgs := func(args string) map[string]string {
		return map[string]string{"BR2_ROOTFS_POST_BUILD_SCRIPT_ARGS": strconv.Quote(args)}
	}
	removeHostBin := func(t *testing.T, f *fakeBuildroot) {
		t.Helper()
		if err := os.Remove(filepath.Join(f.host, "bin", "rootfs-trim")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []tc{
		{
			name:   "typo-of-rules",
			config: buildArgs("--rule $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/../rules"),
			status: 2, want: "unknown option --rule ",
		},
		{
			name:   "rules-without-directory",
			config: buildArgs("--rules"),
			status: 2, want: "--rules needs a directory",
		},
		{
			name:   "rules-twice",
			config: buildArgs("--rules=a --rules b"),
			status: 2, want: "--rules given twice",
		},
		{
			name:   "rules-missing",
			config: buildArgs("--rules /nonexistent/rules"),
			status: 2, want: "rules directory /nonexistent/rules does not exist",
		},
		{
			name: "rules-not-installed",
			setup: func(t *testing.T, f *fakeBuildroot) string {
				os.RemoveAll(filepath.Join(f.host, "share", "rootfs-trim"))
				return ""
			},
			status: 2, want: "enable BR2_PACKAGE_HOST_ROOTFS_TRIM",
		},
		{
			name: "no-binary",
			setup: func(t *testing.T, f *fakeBuildroot) string {
				removeHostBin(t, f)
				f.userPath = "/usr/bin:/bin"
				return ""
			},
			status: 2, want: "nor on PATH: enable BR2_PACKAGE_HOST_ROOTFS_TRIM",
		},
		{
			name: "no-file-list",
			setup: func(t *testing.T, f *fakeBuildroot) string {
				os.Remove(filepath.Join(f.build, "packages-file-list.txt"))
				return ""
			},
			status: 2, want: "packages-file-list.txt does not exist",
		},
		{
			// Relative to the Buildroot tree, like every path in .config.
			name:   "relative-rules",
			config: buildArgs("--rules=rootfs-trim-rules"),
			setup: func(t *testing.T, f *fakeBuildroot) string {
				copyTree(t, filepath.Join(f.repo, "rules"), filepath.Join(f.top, "rootfs-trim-rules"))
				return "--rules " + filepath.Join(f.top, "rootfs-trim-rules") + " "
			},
		},
		{
			// ROOTFS_TRIM wins over HOST_DIR/bin.
			name: "ROOTFS_TRIM",
			setup: func(t *testing.T, f *fakeBuildroot) string {
				writeFile(t, filepath.Join(f.host, "bin", "rootfs-trim"), "#!/bin/sh\necho wrong binary >&2\nexit 3\n", 0o755)
				f.userEnv = append(f.userEnv, "ROOTFS_TRIM="+toolBin)
				return ""
			},
			want: ": " + toolBin + " apply",
		},
		{
			name: "ROOTFS_TRIM-not-executable",
			setup: func(t *testing.T, f *fakeBuildroot) string {
				f.userEnv = append(f.userEnv, "ROOTFS_TRIM=/nonexistent/rootfs-trim")
				return ""
			},
			status: 2, want: "ROOTFS_TRIM=/nonexistent/rootfs-trim is not an executable",
		},
		{
			name: "binary-on-PATH",
			setup: func(t *testing.T, f *fakeBuildroot) string {
				removeHostBin(t, f)
				dir := t.TempDir()
				if err := copyFile(toolBin, filepath.Join(dir, "rootfs-trim"), 0o755); err != nil {
					t.Fatal(err)
				}
				f.userPath = dir + ":" + f.userPath
				return ": " + filepath.Join(dir, "rootfs-trim") + " apply"
			},
		},
		{
			// Without the target package the image still builds; the
			// log says what is missing.
			name: "no-boot-step",
			setup: func(t *testing.T, f *fakeBuildroot) string {
				os.Remove(filepath.Join(f.target, "usr/bin/rootfs-trim"))
				return ""
			},
			want: "warning: /usr/bin/rootfs-trim is not in the target",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeBuildroot(t, c.config)
			want := []string{c.want}
			if c.setup != nil {
				want = append(want, c.setup(t, f))
			}
			before := treeListing(t, f.target)
			r := f.runPostBuild()
			t.Logf("post-build log:\n%s", r.log)
			if got := r.exitCode(); got != c.status {
				t.Fatalf("exit status %d (%v), want %d", got, r.err, c.status)
			}
			for _, w := range want {
				if !strings.Contains(r.log, w) {
					t.Errorf("the build log does not say %q", w)
				}
			}
			if c.status != 0 {
				if d := diffListings(before, treeListing(t, f.target)); d != "" {
					t.Errorf("a failed run changed the target:\n%s", d)
				}
				checkImages(t, f)
				return
			}
			if _, err := os.Stat(f.manifestPath()); err != nil {
				t.Errorf("no manifest: %v", err)
			}
		})
	}
}

// TestPostBuildHelp: run by hand, the script explains itself.
func TestPostBuildHelp(t *testing.T) {
	script := filepath.Join(repoRoot(t), "buildroot", "scripts", "post-build.sh")
	out, err := exec.Command(script, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "TARGET_DIR [--rules DIR]") {
		t.Errorf("%s --help: %v\n%s", script, err, out)
	}
	out, err = exec.Command(script).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("%s with no argument: %v, want exit status 2\n%s", script, err, out)
	}
}

// TestPostBuildPerPackageDirectories: with BR2_PER_PACKAGE_DIRECTORIES,
// target-finalize copies every package's files into the target again on
// each make, before the post-build scripts, so podman's conflist is back
// in etc/cni/net.d for the second run. It must end as the first did.
func TestPostBuildPerPackageDirectories(t *testing.T) {
	f := newFakeBuildroot(t, map[string]string{"BR2_PER_PACKAGE_DIRECTORIES": "y"})
	podman := "etc/cni/net.d/87-podman-bridge.conflist"
	// The copy in per-package/podman/target, with its mtime.
	perPackage := filepath.Join(f.out, "per-package", "podman", "target", podman)
	if err := os.MkdirAll(filepath.Dir(perPackage), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(filepath.Join(f.target, podman), perPackage, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(f.target, podman))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(perPackage, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}

	mustSucceed(t, f.runPostBuild())
	f.touchUsr()
	first := treeListing(t, f.target)

	if err := copyFile(perPackage, filepath.Join(f.target, podman), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(f.target, podman), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	indexPath := filepath.Join(f.target, "usr/share/minikube/rootfs-trim/index.json")
	firstIndex := readFile(t, indexPath)
	mustSucceed(t, f.runPostBuild())
	// etc/cni/net.d's mtime is the re-copy's doing; the index is checked
	// below.
	skip := func(lines []string) []string {
		return slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
			return strings.HasPrefix(l, "etc/cni/net.d d") || strings.HasPrefix(l, "usr/share/minikube/rootfs-trim/index.json ")
		})
	}
	if d := diffListings(skip(first), skip(treeListing(t, f.target))); d != "" {
		t.Errorf("the second run did not end where the first did:\n%s", d)
	}
	checkIndexUnchanged(t, firstIndex, readFile(t, indexPath))
	m := f.readManifest()
	if len(m.Changes) == 0 || m.Changes[0].Path != podman {
		t.Errorf("second manifest does not record %s relocated again: %+v", podman, m.Changes)
	}
}

// checkIndexUnchanged compares the boot index of two runs. rootfs-trim
// apply currently appends a second copy of a relocation it redoes (the
// index grows by one entry per make with per-package directories, so two
// incremental builds give two images): that is logged, not failed, until
// apply is fixed; any other difference fails.
func checkIndexUnchanged(t *testing.T, first, second string) {
	t.Helper()
	if first == second {
		return
	}
	distinct := func(index string) string {
		var doc map[string]any
		if err := json.Unmarshal([]byte(index), &doc); err != nil {
			t.Fatal(err)
		}
		files, _ := doc["files"].([]any)
		var seen []any
		for _, f := range files {
			if !slices.ContainsFunc(seen, func(s any) bool { return reflect.DeepEqual(s, f) }) {
				seen = append(seen, f)
			}
		}
		doc["files"] = seen
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if distinct(first) != distinct(second) {
		t.Errorf("the boot index changed:\nfirst run:\n%s\nsecond run:\n%s", first, second)
		return
	}
	t.Errorf("the boot index gained duplicate entries on a re-run:\n%s", second)
}

// TestPostBuildPackageRebuild is `make containerd-bin-rebuild` then `make`
// after a build whose containerd installed its example bridge config (the
// cri-containerd-cni tarball does): the rebuild installs the conflist into
// the target again, with a new mtime, and the next post-build run must
// defer it again, the copy now the reinstalled file, rather than stop the
// build.
func TestPostBuildPackageRebuild(t *testing.T) {
	f := newFakeBuildroot(t, nil)
	conflist := "etc/cni/net.d/10-containerd-net.conflist"
	deferred := "usr/share/minikube/deferred/containerd+none/" + conflist
	data := `{"cniVersion":"1.0.0","name":"containerd-net","plugins":[{"type":"bridge","bridge":"cni0"}]}` + "\n"
	writeFile(t, filepath.Join(f.target, conflist), data, 0o644)
	list := filepath.Join(f.build, "packages-file-list.txt")
	writeFile(t, list, readFile(t, list)+"containerd-bin,./"+conflist+"\n", 0o644)

	mustSucceed(t, f.runPostBuild())
	if _, err := os.Lstat(filepath.Join(f.target, conflist)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s still in the target after the first build (err %v)", conflist, err)
	}
	sum, err := sha256File(filepath.Join(f.target, deferred))
	if err != nil {
		t.Fatal(err)
	}

	// containerd-bin-rebuild: install -D -m 0644 into the target again.
	writeFile(t, filepath.Join(f.target, conflist), data, 0o644)
	reinstalled := time.Now().Add(-time.Minute).Truncate(time.Second)
	if err := os.Chtimes(filepath.Join(f.target, conflist), reinstalled, reinstalled); err != nil {
		t.Fatal(err)
	}
	f.touchUsr()
	second := f.runPostBuild()
	mustSucceed(t, second)
	if _, err := os.Lstat(filepath.Join(f.target, conflist)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still in the target after the rebuild (err %v)", conflist, err)
	}
	checkFileSum(t, filepath.Join(f.target, deferred), sum)
	if fi, err := os.Lstat(filepath.Join(f.target, deferred)); err != nil || !fi.ModTime().Equal(reinstalled) {
		t.Errorf("%s: %v, want the reinstalled file's mtime %v", deferred, err, reinstalled)
	}
	m := f.readManifest()
	if len(m.Changes) != 1 || m.Changes[0].Kind != "deferred" || m.Changes[0].Path != conflist {
		t.Errorf("second manifest: %+v, want %s deferred again", m.Changes, conflist)
	}
	if _, err := os.Lstat(filepath.Join(f.out, ".target.rootfs-trim-journal")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the journal is left beside the target (err %v)", err)
	}
	checkImages(t, f, "rootfs-trim-manifest.json")
}
