// Package bigbuf lends the buffers of many MiB that the stream codecs
// work in (a legacy lz4 block and its output, a splicer's pending bytes)
// from memory mapped outside the Go heap, and takes them back for the
// next user.
//
// On the Go heap they cost twice. Allocating them starts collections,
// and a collection must stop every goroutine to scan its stack: one
// inside pierrec's assembly decoder, or inside a memmove of megabytes,
// cannot be preempted, and the collector spins until it comes out. And
// each fresh 4 KiB page faults on first touch, inside that same memmove:
// on a virtual machine a fault costs microseconds, so a 16 MiB copy into
// new memory kept the collector spinning for tens of milliseconds. Mapped,
// with huge pages where the kernel offers them (MADV_HUGEPAGE), a buffer
// costs a few dozen faults once, and nothing that a collection waits for.
// make bench (apply-lz4, list-lz4) measures both.
package bigbuf
