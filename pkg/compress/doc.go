// Package compress detects and handles the compression around a Buildroot
// rootfs archive (rootfs.cpio.gz, rootfs.tar.xz, ...).
//
// The codec is always detected from the leading bytes of the data, never
// from a file name: Buildroot post-image scripts rename images freely and a
// wrong guess would either corrupt the output or hide the real error.
//
// Everything streams. Readers and writers hold codec-sized buffers (8 MiB
// lz4 legacy blocks, the xz dictionary the stream header announces, a zstd
// window of at most ZstdMaxWindow), never the whole archive.
package compress
