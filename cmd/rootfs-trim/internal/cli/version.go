package cli

import (
	"context"
	"fmt"

	"github.com/rootfs-trim/rootfs-trim/internal/names"

	rootfstrim "github.com/rootfs-trim/rootfs-trim"
)

// Version is the tool's version: the repository's VERSION file, embedded
// at build time (see the module's root package), the same one the
// Buildroot package reports.
var Version = rootfstrim.Version

func init() {
	register(&command{name: "version", summary: "print the version, and the digest of a rule set", run: runVersion})
}

const versionHelp = `
Prints the tool's version and the rule set's directory and sha256 digest (the
one apply records in its manifest and in the image's index): the --rules given,
else the installed rules the other commands fall back to, if there are any
(` + installedRules + ` from the binary's directory, where make install puts
them).
`

func runVersion(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "version", "[--rules DIR]", versionHelp)
	rulesDir := fs.String("rules", "", "rule `directory` to digest (default: the installed rules, if any)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("version takes no arguments")
	}
	fmt.Fprintf(env.Stdout, "rootfs-trim %s\n", Version)
	dir := *rulesDir
	if dir == "" {
		// Which rules the other commands take without --rules; none
		// installed (a binary run from a checkout): the version alone.
		var ok bool
		if dir, ok = defaultRulesDir(); !ok {
			return nil
		}
	}
	set, err := loadRules(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "rules %s %s\n", names.Quote(set.Dir), set.Digest)
	return nil
}
