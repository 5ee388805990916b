// Package cli is the rootfs-trim command line: flag parsing, output and exit
// codes. The work itself lives in the other packages.
package cli
