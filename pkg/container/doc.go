// Package container is the file around the archive: what holds a root
// filesystem (a stream, raw or compressed; a directory tree; an ISO 9660
// image around an initrd; an initrd of segments; an OCI image or a `docker
// save` tarball), as opposed to an archive (the entries, pkg/archive) or a
// compression (one codec's bytes, pkg/compress).
//
// Each container is one type behind one interface (Container), asked in
// the order of the table in containers.go; docs/architecture.md follows a
// rewrite through them. Rewrite is the one open, output, create,
// transform, digest and commit that apply and repack share: the caller
// gives only the per-entry transform. Outputs are written beside their
// final name and renamed into place once checked, reusing the input's
// compressed bytes where the content is the same (reuse.go).
//
// It imports pkg/archive, never the reverse: what concerns entries stays
// there.
package container
