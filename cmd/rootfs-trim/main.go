package main

import (
	"os"

	"github.com/rootfs-trim/rootfs-trim/cmd/rootfs-trim/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
