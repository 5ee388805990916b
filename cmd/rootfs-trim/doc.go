// Command rootfs-trim strips container-runtime configuration that packages
// must not ship from a Buildroot rootfs, and defers it to boot time.
package main
