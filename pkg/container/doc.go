// Package container is the file around the archive: a container of a root
// filesystem, which holds one or more parts, each a stream of entries that
// pkg/archive reads and writes.
//
// A container is a single stream: one archive (cpio newc/crc or tar), raw
// or compressed (pkg/compress); a directory tree; or an ISO 9660 image
// whose part is the initrd its boot configuration names (iso.go; written
// back by xorriso, isowrite.go). Later ones hold several parts: an initrd
// of segments (an early microcode cpio, then a compressed one), an OCI
// image or a `docker save` tarball of layers. The name says what all of them are to
// this tool: what holds a root filesystem, whatever its layout, as opposed
// to an archive (the entries) or a compression (one codec's bytes).
//
// Each container is one type behind one interface (Container,
// containers.go), and the table of them is the order in which Open asks
// them whether an input is theirs. Each opens a source (Input: the
// entries, the digest, what was consumed, a description for list),
// decides what an output written from it is, as the user asked (Output,
// want.go), and creates a sink that writes one beside its final name and
// renames it into place once checked (output.go). It reuses the input's
// compressed bytes where the content is the same (reuse.go,
// copyahead.go, with the splicers of pkg/splice), and reads a legacy lz4
// input in place (inplace.go). Rewrite is the one rewrite of a container
// that apply and repack share: open, output, create, transform, digest,
// commit; the caller gives only the per-entry transform (Copy, or
// pkg/trim's streaming applier) and its messages.
//
// It imports pkg/archive, never the reverse: what concerns entries (the
// codecs, Entry, Copy, the Resolver, the initramfs check of a newc stream)
// stays there.
package container
