package cli

import (
	"context"
	"fmt"

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
Prints the tool's version and, with --rules, the sha256 digest of the rule set
(the one apply records in its manifest and in the image's index).
`

func runVersion(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "version", "[--rules DIR]", versionHelp)
	rulesDir := fs.String("rules", "", "rule `directory` to digest")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("version takes no arguments")
	}
	fmt.Fprintf(env.Stdout, "rootfs-trim %s\n", Version)
	if *rulesDir != "" {
		set, err := loadRules(*rulesDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "rules %s %s\n", *rulesDir, set.Digest)
	}
	return nil
}
