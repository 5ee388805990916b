// Command rootfs-trim strips container-runtime configuration that packages
// must not ship from a Buildroot rootfs, and defers it to boot time.
package main

import (
	"os"

	"github.com/rootfs-trim/rootfs-trim/pkg/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
