package buildroot

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Buildroot's utils/check-package is not available in CI, so these tests
// enforce the rules of it that matter for our files (the messages follow
// its wording), and add the checks it cannot make: that the .mk and
// Config.in agree with each other, with go.mod and with the checkout.

// finding is one broken rule, as check-package prints it: file:line: msg.
type finding struct {
	file string
	line int
	msg  string
}

func (f finding) String() string { return fmt.Sprintf("%s:%d: %s", f.file, f.line, f.msg) }

// lintText applies the rules check-package applies to every file type.
func lintText(name, text string) []finding {
	var out []finding
	add := func(line int, msg string) { out = append(out, finding{name, line, msg}) }
	if text == "" {
		return nil
	}
	if !strings.HasSuffix(text, "\n") {
		add(strings.Count(text, "\n")+1, "missing newline at end of file")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		n := i + 1
		if l != strings.TrimRight(l, " \t") {
			add(n, "line contains trailing whitespace")
		}
		if i > 0 && strings.TrimSpace(l) == "" && strings.TrimSpace(lines[i-1]) == "" {
			add(n, "consecutive empty lines")
		}
		for _, r := range l {
			if r > 127 {
				add(n, "line contains UTF-8 characters")
				break
			}
		}
	}
	if strings.TrimSpace(lines[len(lines)-1]) == "" {
		add(len(lines), "empty line at end of file")
	}
	return out
}

// Variables a package .mk may use without defining them: Buildroot's own,
// the configuration's (BR2_*), and those the package infrastructure
// derives from the package's name (checked against its prefix below).
var buildrootVars = []string{
	"BASE_DIR", "BINARIES_DIR", "BUILD_DIR", "GO_BIN", "GO_VERSION", "HOST_DIR",
	"HOST_GO_COMMON_ENV", "INSTALL", "PKG", "STAGING_DIR", "TARGET_DIR",
}

var infraSuffixes = []string{"_DIR", "_DL_ENV", "_OVERRIDE_SRCDIR", "_PKGDIR", "_SRCDIR", "_VERSION"}

// Steps the package infrastructure runs by name; any other define must be
// registered in a hook list, or it is dead code.
var stepSuffixes = []string{
	"_CMDS", "_INSTALL_INIT_SYSTEMD", "_INSTALL_INIT_SYSV", "_INSTALL_INIT_OPENRC",
	"_USERS", "_PERMISSIONS", "_DEVICES", "_LINUX_CONFIG_FIXUPS",
}

var (
	mkVarLine      = regexp.MustCompile(`^(define\s+)?([A-Z0-9_]+_[A-Z0-9_]+)`)
	mkAssign       = regexp.MustCompile(`^([A-Z0-9_]+)\s*(\+=|:=|\?=|=)\s*(.*)$`)
	mkRef          = regexp.MustCompile(`\$\(([A-Z][A-Za-z0-9_-]*)\)`)
	mkIfdef        = regexp.MustCompile(`^\s*(else\s+)?(ifdef|ifndef)\s`)
	mkIf           = regexp.MustCompile(`^\s*(ifdef|ifndef|ifeq|ifneq)\b`)
	mkEndif        = regexp.MustCompile(`^\s*endif\b`)
	mkSpaceSlash   = regexp.MustCompile(`(  |\t ?)\\$`)
	mkBraces       = regexp.MustCompile(`[^$]\$\{\w+\}`)
	mkUselessFlags = regexp.MustCompile(`_(INSTALL_TARGET\s*=\s*YES|INSTALL_STAGING\s*=\s*NO|INSTALL_IMAGES\s*=\s*NO|REDISTRIBUTE\s*=\s*YES)`)
)

// lintMk applies check-package's .mk rules (lib_mk.py) to a package .mk,
// plus the ending of a package with a target and a host variant.
func lintMk(name, text string) []finding {
	out := lintText(name, text)
	add := func(line int, msg string) { out = append(out, finding{name, line, msg}) }
	pkg := strings.TrimSuffix(filepath.Base(name), ".mk")
	prefix := strings.ToUpper(strings.ReplaceAll(pkg, "-", "_")) + "_"
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")

	// The header block: the manual's "writing-rules-mk".
	header := []string{strings.Repeat("#", 80), "#", "# " + pkg, "#", strings.Repeat("#", 80), ""}
	for i, want := range header {
		if i >= len(lines) || strings.TrimRight(lines[i], " ") != want {
			add(i+1, fmt.Sprintf("header line should be %q", want))
		}
	}

	defined := map[string]bool{}
	assigned := map[string]bool{}
	var defines []struct {
		name string
		line int
	}
	inDefine, continued, depth := false, false, 0
	for i, l := range lines {
		n := i + 1
		wasContinued := continued
		continued = strings.HasSuffix(l, "\\") && !strings.HasPrefix(l, "#")
		if strings.HasPrefix(l, "#") {
			continue
		}
		// Indentation: tabs inside define...endef and on continuation
		// lines, none elsewhere.
		switch {
		case strings.HasPrefix(l, "define "):
			inDefine = true
		case strings.TrimSpace(l) == "endef":
			inDefine = false
		case strings.TrimSpace(l) == "":
		case (inDefine || wasContinued) && !strings.HasPrefix(l, "\t") && !strings.HasPrefix(strings.TrimSpace(l), "#"):
			add(n, "expected indent with tabs")
		case !inDefine && !wasContinued && strings.HasPrefix(l, "\t"):
			add(n, "unexpected indent with tabs")
		}
		if wasContinued && strings.TrimSpace(l) == "" {
			add(n-1, "remove trailing backslash")
		}
		if mkSpaceSlash.MatchString(l) {
			add(n, "use only one space before backslash")
		}
		if m := mkIfdef.FindStringSubmatch(l); m != nil {
			add(n, "use ifeq ($(SYMBOL),y) instead of "+m[2]+" SYMBOL")
		}
		if mkBraces.MatchString(l) {
			add(n, "use $() to delimit variables, not ${}")
		}
		if strings.Contains(l, "$(HOST_DIR)/usr") {
			add(n, "install files to $(HOST_DIR)/ instead of $(HOST_DIR)/usr/")
		}
		if mkUselessFlags.MatchString(l) {
			add(n, "useless default value")
		}
		// A define line, or an assignment outside one: the variable must
		// carry the package's prefix, or Buildroot never reads it.
		if m := mkVarLine.FindStringSubmatch(l); m != nil && (m[1] != "" || !inDefine) {
			v := m[2]
			if !strings.HasPrefix(v, prefix) && !strings.HasPrefix(v, "HOST_"+prefix) {
				add(n, fmt.Sprintf("possible typo, variable not properly prefixed: %s -> *%sXXXX*", v, prefix))
			}
			if m[1] != "" {
				defined[v] = true
				defines = append(defines, struct {
					name string
					line int
				}{v, n})
			}
		}
		switch {
		case inDefine || wasContinued:
		case mkIf.MatchString(l):
			depth++
		case mkEndif.MatchString(l):
			depth--
		}
		// Setting a variable twice outside conditionals loses the first
		// value; inside one, overriding is the point.
		if m := mkAssign.FindStringSubmatch(l); m != nil && !inDefine && !wasContinued {
			v, op := m[1], m[2]
			defined[v] = true
			if depth == 0 {
				if (op == "=" || op == ":=") && assigned[v] {
					add(n, "unconditional override of variable "+v)
				}
				assigned[v] = true
			}
		}
	}

	// Every variable used is defined here or provided by Buildroot; a
	// typo such as $(TARGET-DIR) expands to nothing and installs into /.
	for i, l := range lines {
		if strings.HasPrefix(l, "#") {
			continue
		}
		for _, m := range mkRef.FindAllStringSubmatch(l, -1) {
			v := m[1]
			switch {
			case strings.Contains(v, "-"):
				add(i+1, fmt.Sprintf("$(%s): make variables have no '-', typo for $(%s)?", v, strings.ReplaceAll(v, "-", "_")))
			case defined[v], slices.Contains(buildrootVars, v), strings.HasPrefix(v, "BR2_"):
			case (strings.HasPrefix(v, prefix) || strings.HasPrefix(v, "HOST_"+prefix)) &&
				slices.ContainsFunc(infraSuffixes, func(s string) bool { return strings.HasSuffix(v, s) }):
			default:
				add(i+1, fmt.Sprintf("$(%s) is neither defined here nor a Buildroot variable", v))
			}
		}
	}

	for _, d := range defines {
		if slices.ContainsFunc(stepSuffixes, func(s string) bool { return strings.HasSuffix(d.name, s) }) {
			continue
		}
		hook := regexp.MustCompile(`(?m)^[A-Z0-9_]+_HOOKS\s*\+=.*\b` + regexp.QuoteMeta(d.name) + `\b`)
		if !hook.MatchString(text) {
			add(d.line, d.name+" is defined but in no hook list: never run")
		}
	}

	// A package with both variants ends with the two evals, target first.
	var last []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			last = append(last, l)
		}
	}
	want := []string{"$(eval $(golang-package))", "$(eval $(host-golang-package))"}
	if len(last) < 2 || !slices.Equal(last[len(last)-2:], want) {
		add(len(lines), fmt.Sprintf("should end with %q", want))
	}
	return out
}

// lintConfig applies check-package's Config.in rules (lib_config.py).
func lintConfig(name, text string) []finding {
	out := lintText(name, text)
	add := func(line int, msg string) { out = append(out, finding{name, line, msg}) }
	entries := []string{"choice", "comment", "config", "endchoice", "endif", "endmenu", "if", "menu", "menuconfig", "source"}
	attributes := map[string]int{"bool": 1, "prompt": 1, "string": 1, "default": 2, "depends": 3, "select": 4, "help": 5}
	helpLine := regexp.MustCompile(`^\t  .{0,62}$`)
	helpFirst := regexp.MustCompile(`^\t  \S.{0,61}$`)
	urlOnly := regexp.MustCompile(`^(http|https|git)://\S*$`)
	configs := map[string]int{}

	state, inHelp, firstHelp, continued := 0, false, false, false
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		n := i + 1
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continued = false
			continue
		}
		wasContinued := continued
		continued = strings.HasSuffix(l, "\\")
		if wasContinued {
			if !strings.HasPrefix(l, "\t") {
				add(n, "continuation line should be indented using tabs")
			}
			continue
		}
		word := strings.Fields(l)[0]
		// Until the next entry, every line is help text.
		if inHelp && !slices.Contains(entries, word) {
			ok := helpLine.MatchString(l)
			if firstHelp {
				ok = helpFirst.MatchString(l)
				firstHelp = false
			}
			if !ok && !urlOnly.MatchString(trimmed) {
				add(n, "help text: <tab><2 spaces><62 chars>")
			}
			continue
		}
		inHelp = false
		if slices.Contains(entries, word) {
			state = 0
			if l != strings.TrimLeft(l, " \t") {
				add(n, "should not be indented")
			}
			if word == "config" || word == "menuconfig" {
				sym := strings.Fields(l)[1]
				if prev, ok := configs[sym]; ok {
					add(n, fmt.Sprintf("config %s redeclared (previous line: %d)", sym, prev))
				}
				configs[sym] = n
			}
			continue
		}
		if order, ok := attributes[word]; ok {
			if !strings.HasPrefix(l, "\t"+word) {
				add(n, "should be indented with one tab")
			}
			if state > order {
				add(n, "attributes order: type, default, depends on, select, help")
			}
			state = order
			if strings.TrimSpace(strings.Split(l, "#")[0]) == "default n" {
				add(n, "boolean symbols default to 'n', so 'default n' is redundant")
			}
			if word == "help" {
				inHelp, firstHelp = true, true
			}
		}
	}
	return out
}

func checkNotExecutable(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&0o111 != 0 {
		t.Errorf("%s: This file does not need to be executable", path)
	}
}

// TestCheckPackage runs the rules on the br2-external tree's files.
func TestCheckPackage(t *testing.T) {
	br := filepath.Join(repoRoot(t), "buildroot")
	var files []string
	err := filepath.WalkDir(br, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var mks, configs int
	for _, path := range files {
		rel, _ := filepath.Rel(br, path)
		text := readFile(t, path)
		var found []finding
		switch {
		case strings.HasPrefix(rel, "package/") && strings.HasSuffix(rel, ".mk"):
			found = lintMk(rel, text)
			checkNotExecutable(t, path)
			mks++
		case strings.HasPrefix(filepath.Base(rel), "Config.in"):
			found = lintConfig(rel, text)
			checkNotExecutable(t, path)
			configs++
		default:
			// external.mk, external.desc, the preset, the script:
			// check-package only applies its generic rules to those.
			found = lintText(rel, text)
		}
		for _, f := range found {
			t.Error(f)
		}
	}
	if mks == 0 || configs < 3 {
		t.Errorf("checked %d .mk and %d Config.in files; the tree has more", mks, configs)
	}
	if fi, err := os.Stat(filepath.Join(br, "scripts", "post-build.sh")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("scripts/post-build.sh must be executable: Buildroot runs it directly (%v)", err)
	}
	if out, err := exec.Command("bash", "-n", filepath.Join(br, "scripts", "post-build.sh")).CombinedOutput(); err != nil {
		t.Errorf("bash -n scripts/post-build.sh: %v\n%s", err, out)
	}
}

// TestCheckPackageDetects feeds each rule a broken file: rules that never
// fire would pass anything.
func TestCheckPackageDetects(t *testing.T) {
	good := readFile(t, filepath.Join(repoRoot(t), "buildroot", "package", "rootfs-trim", "rootfs-trim.mk"))
	if f := lintMk("rootfs-trim.mk", good); len(f) != 0 {
		t.Fatalf("the real .mk does not pass: %v", f)
	}
	mk := func(body string) string {
		return "################################################################################\n#\n# rootfs-trim\n#\n################################################################################\n\n" +
			body + "\n$(eval $(golang-package))\n$(eval $(host-golang-package))\n"
	}
	for _, c := range []struct{ name, text, want string }{
		{"header", strings.Replace(good, "# rootfs-trim\n", "# rootfs_trim\n", 1), `header line should be "# rootfs-trim"`},
		{"prefix", mk("ROOTFS_TRM_GOMOD = x\n"), "variable not properly prefixed: ROOTFS_TRM_GOMOD"},
		{"define-prefix", mk("define ROOTFSTRIM_FOO\n\ttrue\nendef\nROOTFS_TRIM_POST_BUILD_HOOKS += ROOTFSTRIM_FOO\n"), "not properly prefixed: ROOTFSTRIM_FOO"},
		{"trailing-space", mk("ROOTFS_TRIM_GOMOD = x \n"), "trailing whitespace"},
		{"empty-lines", mk("ROOTFS_TRIM_GOMOD = x\n\n\nROOTFS_TRIM_TAGS = y\n"), "consecutive empty lines"},
		{"target-dir-typo", mk("define ROOTFS_TRIM_INSTALL_INIT_SYSTEMD\n\ttouch $(TARGET-DIR)/x\nendef\n"), "typo for $(TARGET_DIR)"},
		{"unknown-var", mk("define ROOTFS_TRIM_INSTALL_INIT_SYSTEMD\n\ttouch $(TARGETDIR)/x\nendef\n"), "$(TARGETDIR) is neither defined"},
		{"ifdef", mk("ifdef BR2_INIT_SYSTEMD\nROOTFS_TRIM_TAGS = x\nendif\n"), "instead of ifdef"},
		{"define-indent", mk("define ROOTFS_TRIM_INSTALL_INIT_SYSTEMD\n    true\nendef\n"), "expected indent with tabs"},
		{"top-indent", mk("\tROOTFS_TRIM_TAGS = x\n"), "unexpected indent with tabs"},
		{"continuation", mk("ROOTFS_TRIM_TAGS = \\\n    x\n"), "expected indent with tabs"},
		{"backslash-space", mk("ROOTFS_TRIM_TAGS =  \\\n\tx\n"), "one space before backslash"},
		{"braces", mk("ROOTFS_TRIM_TAGS = ${ROOTFS_TRIM_GOMOD}\n"), "use $() to delimit"},
		{"host-usr", mk("define HOST_ROOTFS_TRIM_X\n\ttouch $(HOST_DIR)/usr/x\nendef\nHOST_ROOTFS_TRIM_POST_INSTALL_HOOKS += HOST_ROOTFS_TRIM_X\n"), "instead of $(HOST_DIR)/usr/"},
		{"override", mk("ROOTFS_TRIM_TAGS = x\nROOTFS_TRIM_TAGS = y\n"), "unconditional override of variable ROOTFS_TRIM_TAGS"},
		{"override-after-if", mk("ifeq ($(BR2_INIT_SYSTEMD),y)\nROOTFS_TRIM_TAGS = x\nendif\nROOTFS_TRIM_TAGS = y\nROOTFS_TRIM_TAGS = z\n"), "unconditional override"},
		{"dead-hook", mk("define ROOTFS_TRIM_FIX\n\ttrue\nendef\n"), "ROOTFS_TRIM_FIX is defined but in no hook list"},
		{"useless", mk("ROOTFS_TRIM_INSTALL_TARGET = YES\n"), "useless default value"},
		{"no-host-eval", strings.Replace(good, "$(eval $(host-golang-package))\n", "", 1), "should end with"},
		{"evals-swapped", strings.Replace(strings.Replace(good, "$(eval $(golang-package))", "X", 1), "$(eval $(host-golang-package))\n", "$(eval $(golang-package))\n", 1), "should end with"},
		{"no-newline", strings.TrimSuffix(good, "\n"), "missing newline at end of file"},
		{"utf8", mk("# caf\u00e9\n"), "UTF-8"},
	} {
		t.Run("mk/"+c.name, func(t *testing.T) { expectFinding(t, lintMk("rootfs-trim.mk", c.text), c.want) })
	}

	cfg := "config BR2_PACKAGE_FOO\n\tbool \"foo\"\n\tdepends on BR2_PACKAGE_HOST_GO_TARGET_ARCH_SUPPORTS\n\tselect BR2_PACKAGE_HOST_GO\n\thelp\n\t  Foo.\n\n\t  https://example.org/foo\n"
	if f := lintConfig("Config.in", cfg); len(f) != 0 {
		t.Fatalf("a good Config.in does not pass: %v", f)
	}
	for _, c := range []struct{ name, text, want string }{
		{"help-width", strings.Replace(cfg, "Foo.", strings.Repeat("x", 63), 1), "help text"},
		{"help-spaces", strings.Replace(cfg, "\t  Foo.", "\t   Foo.", 1), "help text"},
		{"help-indent", strings.Replace(cfg, "\t  Foo.", "        Foo.", 1), "help text"},
		{"attr-indent", strings.Replace(cfg, "\tbool", "    bool", 1), "should be indented with one tab"},
		{"entry-indent", "\t" + cfg, "should not be indented"},
		{"order", strings.Replace(cfg, "\tselect BR2_PACKAGE_HOST_GO\n", "\tselect BR2_PACKAGE_HOST_GO\n\tdepends on BR2_USE_MMU\n", 1), "attributes order"},
		{"default-n", strings.Replace(cfg, "\tdepends", "\tdefault n\n\tdepends", 1), "'default n' is redundant"},
		{"redeclared", cfg + "\n" + cfg, "redeclared"},
		{"continuation", strings.Replace(cfg, "ARCH_SUPPORTS\n", "ARCH_SUPPORTS && \\\nBR2_USE_MMU\n", 1), "continuation line"},
	} {
		t.Run("config/"+c.name, func(t *testing.T) { expectFinding(t, lintConfig("Config.in", c.text), c.want) })
	}
}

func expectFinding(t *testing.T, found []finding, want string) {
	t.Helper()
	for _, f := range found {
		if strings.Contains(f.msg, want) {
			return
		}
	}
	t.Errorf("no finding %q; got %v", want, found)
}

// mkVars reads the top-level assignments of a .mk (continuation lines
// joined, defines skipped), expanding references to each other.
func mkVars(t *testing.T, text string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	text = strings.ReplaceAll(text, "\\\n", " ")
	inDefine := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "define "):
			inDefine = true
		case l == "endef":
			inDefine = false
		case inDefine:
		default:
			if m := mkAssign.FindStringSubmatch(l); m != nil {
				v := strings.Join(strings.Fields(m[3]), " ")
				if m[2] == "+=" && vars[m[1]] != "" {
					v = vars[m[1]] + " " + v
				}
				vars[m[1]] = v
			}
		}
	}
	for k, v := range vars {
		vars[k] = mkRef.ReplaceAllStringFunc(v, func(ref string) string {
			if x, ok := vars[ref[2:len(ref)-1]]; ok {
				return x
			}
			return ref
		})
	}
	return vars
}

// TestPackageMatchesRepo checks what check-package cannot: the .mk and
// Config.in files against each other, go.mod, the checkout, and the
// post-build script.
func TestPackageMatchesRepo(t *testing.T) {
	repo := repoRoot(t)
	br := filepath.Join(repo, "buildroot")
	pkgDir := filepath.Join(br, "package", "rootfs-trim")
	mkText := readFile(t, filepath.Join(pkgDir, "rootfs-trim.mk"))
	vars := mkVars(t, mkText)

	if desc := readFile(t, filepath.Join(br, "external.desc")); !regexp.MustCompile(`(?m)^name: ROOTFS_TRIM$`).MatchString(desc) {
		t.Errorf("external.desc does not say name: ROOTFS_TRIM:\n%s", desc)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(br, "external.mk"))); got != "include $(sort $(wildcard $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/package/*/*.mk))" {
		t.Errorf("external.mk does not include the packages' .mk: %q", got)
	}
	top := readFile(t, filepath.Join(br, "Config.in"))
	for _, f := range []string{"Config.in", "Config.in.host"} {
		if !strings.Contains(top, `source "$BR2_EXTERNAL_ROOTFS_TRIM_PATH/package/rootfs-trim/`+f+`"`) {
			t.Errorf("Config.in does not source package/rootfs-trim/%s", f)
		}
	}

	// The package builds this module: $(GOMOD)/$(BUILD_TARGETS) must be
	// its main package, for the target and the host alike.
	goMod := readFile(t, filepath.Join(repo, "go.mod"))
	mod := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindStringSubmatch(goMod)
	goLine := regexp.MustCompile(`(?m)^go\s+([0-9]+\.[0-9]+)`).FindStringSubmatch(goMod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	goMinor := goLine[1]
	for _, p := range []string{"ROOTFS_TRIM_", "HOST_ROOTFS_TRIM_"} {
		if mod == nil || vars[p+"GOMOD"] != mod[1] {
			t.Errorf("%sGOMOD = %q, go.mod says module %v", p, vars[p+"GOMOD"], mod)
		}
		for _, target := range strings.Fields(vars[p+"BUILD_TARGETS"]) {
			main := filepath.Join(repo, target, "main.go")
			if !strings.Contains(readFile(t, main), "package main") {
				t.Errorf("%sBUILD_TARGETS: %s is not a main package", p, target)
			}
		}
		if vars[p+"GO_ENV"] != "CGO_ENABLED=0" {
			t.Errorf("%sGO_ENV = %q: the binary must be static", p, vars[p+"GO_ENV"])
		}
		if vars[p+"OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS"] == "" {
			t.Errorf("%sOVERRIDE_SRCDIR_RSYNC_EXCLUSIONS is empty: a checkout's .bench would be copied", p)
		}
	}
	if got := vars["ROOTFS_TRIM_SITE"]; got != "$(abspath $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/..)" || vars["ROOTFS_TRIM_SITE_METHOD"] != "local" {
		t.Errorf("ROOTFS_TRIM_SITE = %q, SITE_METHOD = %q: the package builds the checkout it is in", got, vars["ROOTFS_TRIM_SITE_METHOD"])
	}

	// Files the recipes read from the build directory ($(@D), a copy of
	// the checkout) and from the package directory.
	for _, m := range regexp.MustCompile(`\$\(@D\)/([A-Za-z0-9_./-]+)`).FindAllStringSubmatch(mkText, -1) {
		if _, err := os.Stat(filepath.Join(repo, m[1])); err != nil {
			t.Errorf("the .mk reads $(@D)/%s, which the checkout lacks: %v", m[1], err)
		}
	}
	for _, m := range regexp.MustCompile(`\$\(ROOTFS_TRIM_PKGDIR\)/([A-Za-z0-9_./-]+)`).FindAllStringSubmatch(mkText, -1) {
		if _, err := os.Stat(filepath.Join(pkgDir, m[1])); err != nil {
			t.Errorf("the .mk reads $(ROOTFS_TRIM_PKGDIR)/%s, which is missing: %v", m[1], err)
		}
	}
	// The host package installs the rules where the script looks first.
	script := readFile(t, filepath.Join(br, "scripts", "post-build.sh"))
	if !strings.Contains(mkText, "$(HOST_DIR)/share/rootfs-trim/rules") || !strings.Contains(script, "$host_dir/share/rootfs-trim/rules") {
		t.Errorf("the .mk and post-build.sh disagree on where host-rootfs-trim's rules are")
	}
	if !strings.Contains(script, `"$host_dir/bin/rootfs-trim"`) {
		t.Errorf("post-build.sh does not look for the binary where host-golang-package installs it ($(HOST_DIR)/bin)")
	}

	// Offline from the checkout: vendor/ is committed, and the .mk
	// neither vendors nor reaches for a proxy.
	if out, err := exec.Command("git", "-C", repo, "ls-files", "--error-unmatch", "vendor/modules.txt").CombinedOutput(); err != nil {
		t.Errorf("vendor/modules.txt is not tracked by git: a clean checkout cannot build offline (%v: %s)", err, out)
	}
	mkCode := regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(mkText, "")
	for _, bad := range []string{"mod vendor", "GOPROXY", "mod download"} {
		if strings.Contains(mkCode, bad) {
			t.Errorf("the .mk mentions %q: it must build from the committed vendor/, offline", bad)
		}
	}
	if vars["ROOTFS_TRIM_VERSION"] != "$(shell cat $(abspath $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/..)/VERSION)" {
		t.Errorf("ROOTFS_TRIM_VERSION = %q: the version is the checkout's VERSION file, which the binary embeds", vars["ROOTFS_TRIM_VERSION"])
	}
	if vars["ROOTFS_TRIM_LICENSE"] == "" || vars["ROOTFS_TRIM_LICENSE_FILES"] == "" {
		t.Errorf("ROOTFS_TRIM_LICENSE %q, ROOTFS_TRIM_LICENSE_FILES %q: both are needed", vars["ROOTFS_TRIM_LICENSE"], vars["ROOTFS_TRIM_LICENSE_FILES"])
	}

	// Symbols named as Buildroot derives them from the directory name,
	// depending on Go's architecture support as Buildroot's Go packages do.
	for _, c := range []struct{ file, symbol, arch string }{
		{"Config.in", "BR2_PACKAGE_ROOTFS_TRIM", "BR2_PACKAGE_HOST_GO_TARGET_ARCH_SUPPORTS"},
		{"Config.in.host", "BR2_PACKAGE_HOST_ROOTFS_TRIM", "BR2_PACKAGE_HOST_GO_HOST_ARCH_SUPPORTS"},
	} {
		text := readFile(t, filepath.Join(pkgDir, c.file))
		for _, want := range []string{"config " + c.symbol + "\n", "\tdepends on " + c.arch + "\n"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", c.file, strings.TrimSpace(want))
			}
		}
		// Selecting BR2_PACKAGE_HOST_GO makes host-go-src the provider
		// (package/go/Config.in.host's choice) unless
		// BR2_PACKAGE_HOST_GO_BIN=y: minikube builds with host-go-bin
		// and its GO_VERSION; host-go-src cannot build Go 1.26 in
		// 2025.02.x. The golang infrastructure adds host-go anyway.
		if m := regexp.MustCompile(`(?m)^\s*select\s+BR2_PACKAGE_HOST_GO\w*`).FindString(text); m != "" {
			t.Errorf("%s: %q changes the host-go provider of the configuration it joins", c.file, strings.TrimSpace(m))
		}
		if !strings.Contains(text, "Go "+goMinor+" or later") {
			t.Errorf("%s: the help text does not say the package needs Go %s or later (go.mod's go line)", c.file, goMinor)
		}
		lines := strings.Split(strings.TrimSpace(text), "\n")
		if last := strings.TrimSpace(lines[len(lines)-1]); !strings.HasPrefix(last, "https://") {
			t.Errorf("%s: the help text should end with the upstream URL, not %q", c.file, last)
		}
	}
}

// TestBuildCommands runs, on a clean copy of the checkout, what Buildroot
// runs for the package: `go build` as pkg-golang.mk does, with the
// environment of package/go/go.mk (GOFLAGS=-mod=vendor GOPROXY=off
// GOTOOLCHAIN=local) and an empty module cache, so only the committed
// vendor/ can serve the modules; without a network too where the machine
// allows one to be taken away (unshare -n). It builds for the host and for
// both minikube architectures. The binary must be static, free of the
// build directory's path, the same bytes from any build directory, and
// carry the .mk's version: in `rootfs-trim version` and in a manifest.
func TestBuildCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rootfs-trim four times")
	}
	repo := repoRoot(t)
	vars := mkVars(t, readFile(t, filepath.Join(repo, "buildroot", "package", "rootfs-trim", "rootfs-trim.mk")))
	gomod, targets, goEnv := vars["ROOTFS_TRIM_GOMOD"], strings.Fields(vars["ROOTFS_TRIM_BUILD_TARGETS"]), strings.Fields(vars["ROOTFS_TRIM_GO_ENV"])
	if gomod == "" || len(targets) != 1 {
		t.Fatalf("GOMOD %q, BUILD_TARGETS %q", gomod, targets)
	}
	offline := offlineCommand(t)

	build := func(src, goarch string) string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "rootfs-trim")
		// HOST_GO_COMMON_ENV and HOST_GO_TARGET_ENV, then <PKG>_GO_ENV,
		// which wins. GOFLAGS and GOPROXY as Buildroot sets them; an
		// empty module cache and GOPATH prove vendor/ is enough.
		gopath := t.TempDir()
		env := append(os.Environ(),
			"GO111MODULE=on", "GOFLAGS=-mod=vendor", "GOPROXY=off", "GOTOOLCHAIN=local",
			"GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"), "GOBIN=",
			"CGO_ENABLED=1", "GOOS=linux", "GOARCH="+goarch)
		env = append(env, goEnv...)
		// pkg-golang.mk links with BFD on aarch64 (BR2_aarch64).
		ldflags := ""
		if goarch == "arm64" && goarch != runtime.GOARCH {
			ldflags = "-extldflags '-fuse-ld=bfd'"
		}
		args := append(offline, "go", "build", "-v", "-ldflags", ldflags, "-modcacherw", "-tags", "",
			"-trimpath", "-p", "2", "-buildvcs=false", "-o", out, gomod+"/"+targets[0])
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = src
		cmd.Env = env
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("GOARCH=%s %s: %v\n%s", goarch, strings.Join(args, " "), err, b)
		}
		if entries, _ := os.ReadDir(filepath.Join(gopath, "pkg", "mod")); len(entries) != 0 {
			t.Errorf("GOARCH=%s: the build put modules in the empty module cache: %v", goarch, entries)
		}
		return out
	}

	srcA := cleanCopy(t, repo)
	srcB := cleanCopy(t, repo)
	// The version the .mk gives Buildroot (show-info, legal-info).
	mkVersion := newMkHarness(t, srcA).values("ROOTFS_TRIM_VERSION")["ROOTFS_TRIM_VERSION"]
	if mkVersion == "" {
		t.Fatal("the .mk's ROOTFS_TRIM_VERSION is empty")
	}
	// minikube's two ISOs, and the build host for the host package.
	arches := []string{runtime.GOARCH}
	for _, a := range []string{"amd64", "arm64"} {
		if !slices.Contains(arches, a) {
			arches = append(arches, a)
		}
	}
	for _, arch := range arches {
		bin := build(srcA, arch)
		checkStatic(t, bin)
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(srcA)) {
			t.Errorf("GOARCH=%s: the binary holds the build directory's path %s: -trimpath lost", arch, srcA)
		}
		if arch != runtime.GOARCH {
			continue
		}
		out, err := exec.Command(bin, "version").CombinedOutput()
		if want := "rootfs-trim " + mkVersion + "\n"; err != nil || string(out) != want {
			t.Errorf("%s version: %v, printed %q; the .mk says version %q", bin, err, out, mkVersion)
		}
		checkManifestTool(t, bin, srcA, "rootfs-trim "+mkVersion)
		other, err := os.ReadFile(build(srcB, arch))
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(data) != sha256.Sum256(other) {
			t.Errorf("two build directories give two different binaries: the build is not reproducible")
		}
	}
}

// offlineCommand is the command prefix that runs a command without a
// network: unshare -n (as root) or unshare -rn (a user namespace), if
// either works here; else nothing, and GOPROXY=off with an empty module
// cache still stop Go from fetching anything.
func offlineCommand(t *testing.T) []string {
	t.Helper()
	for _, prefix := range [][]string{{"unshare", "-n"}, {"unshare", "-rn"}} {
		if err := exec.Command(prefix[0], append(prefix[1:], "true")...).Run(); err == nil {
			t.Logf("building under %s: no network", strings.Join(prefix, " "))
			return prefix
		}
	}
	t.Logf("unshare -n is not available here: building with GOPROXY=off and an empty module cache only")
	return nil
}

// checkManifestTool runs bin's apply on an empty target with the
// checkout's rules, as the post-build script does, and checks the
// manifest's "tool".
func checkManifestTool(t *testing.T, bin, src, want string) {
	t.Helper()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(target, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "rootfs-trim-manifest.json")
	cmd := exec.Command(bin, "apply", "--rules", filepath.Join(src, "rules"), "--manifest", manifest, target)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "SOURCE_DATE_EPOCH=1735689600")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s apply: %v\n%s", bin, err, out)
	}
	var m struct {
		Tool string `json:"tool"`
	}
	if err := json.Unmarshal([]byte(readFile(t, manifest)), &m); err != nil {
		t.Fatal(err)
	}
	if m.Tool != want {
		t.Errorf("the manifest's tool is %q, want %q", m.Tool, want)
	}
}

// cleanCopy copies the files a clean clone of the checkout would have:
// what git tracks (vendor/ included), plus new files not ignored (so that
// work not yet committed is built as it will be; in CI, a fresh clone,
// there are none). Build products (bin/, out/) stay behind, and so does a
// go.work, which a developer may have and a clone would not.
func cleanCopy(t *testing.T, repo string) string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", repo, err)
	}
	dst := t.TempDir()
	for _, rel := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if strings.HasPrefix(rel, "go.work") {
			continue
		}
		src := filepath.Join(repo, rel)
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in git
		}
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(link, to); err != nil {
				t.Fatal(err)
			}
		case fi.Mode().IsRegular():
			if err := copyFile(src, to, fi.Mode()); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dst
}

// checkStatic fails unless bin is an ELF with no interpreter and no shared
// library: the boot step must run whatever libc the image has.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s (%s) has an ELF interpreter: not static", bin, f.Machine)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) != 0 {
		t.Errorf("%s (%s) needs shared libraries %v (%v)", bin, f.Machine, libs, err)
	}
}
