// Package rootfstrim is the module's root: it holds the one version of
// rootfs-trim, the VERSION file beside it.
//
// The binary embeds that file, and the Buildroot package reads it for
// ROOTFS_TRIM_VERSION (buildroot/package/rootfs-trim/rootfs-trim.mk), so
// `rootfs-trim version`, each manifest's "tool", Buildroot's show-info and
// legal-info all carry the same version, however the binary was built (go
// build, go install, go test, Buildroot): no -ldflags to forget.
package rootfstrim

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var versionFile string

// Version is the release this tree is or is working towards, from VERSION.
var Version = strings.TrimSpace(versionFile)
