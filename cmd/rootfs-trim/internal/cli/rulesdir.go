package cli

import (
	"flag"
	"os"
	"path/filepath"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// installedRules is where make install puts the rules, relative to the
// directory of the binary: $(PREFIX)/share/rootfs-trim/rules beside
// $(PREFIX)/bin/rootfs-trim. Buildroot's host package installs them the
// same way ($(HOST_DIR)/share/rootfs-trim/rules). Relative, so that a
// DESTDIR staging and a relocated PREFIX find them as well.
const installedRules = "../share/rootfs-trim/rules"

// executable is os.Executable, replaceable in tests. On Linux it is
// /proc/self/exe, symlinks resolved: a link to the binary in another
// directory finds the rules beside the binary itself.
var executable = os.Executable

// rulesFlag registers --rules; extra follows "rule directory" in -h.
func rulesFlag(fs *flag.FlagSet, extra string) *string {
	return fs.String("rules", "", "rule `directory`"+extra+"; default: the installed rules, "+installedRules+" from the binary's directory (version prints which)")
}

// defaultRulesDir is the installed rule directory beside the binary, and
// whether it is there.
func defaultRulesDir() (string, bool) {
	exe, err := executable()
	if err != nil {
		return "", false
	}
	dir := filepath.Join(filepath.Dir(exe), installedRules)
	fi, err := os.Stat(dir)
	return dir, err == nil && fi.IsDir()
}

// rulesDirOr is dir, or the installed rules when dir is "" (--rules not
// given): an explicit --rules always wins.
func rulesDirOr(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	def, ok := defaultRulesDir()
	if ok {
		return def, nil
	}
	if def == "" {
		return "", usagef("--rules DIR is required (the binary's own path is unknown, so there are no installed rules to fall back to)")
	}
	return "", usagef("--rules DIR is required: there are no installed rules at %s (%s from the binary)", names.Quote(def), installedRules)
}
