// Command genrootfs writes a synthetic but realistic Buildroot-style root
// filesystem tree for the benchmarks in bench/: large Go-like binaries,
// ELF executables and shared libraries, kernel modules, Python, many small
// text files several directories deep, relative symlinks, hard-link groups,
// setuid files, the container-runtime files that rootfs-trim is about, and a
// Buildroot packages-file-list.txt beside the tree.
//
// The output is a pure function of the flags: one PRNG seed, fixed mtimes
// (SOURCE_DATE_EPOCH, or 1700000000), per-file seeds fixed at planning time so
// that writing files in parallel does not change a byte.
//
//	go run ./bench/genrootfs -out .bench/rootfs-400mb/target -size-mb 400
package main
