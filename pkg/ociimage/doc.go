// Package ociimage reads and writes container images: an OCI image layout
// directory (image-spec image-layout.md), single- or multi-platform, and a
// `docker save`/`podman save` tarball (its manifest.json, or the OCI layout
// a Docker 25+ or `podman save --format oci-archive` tarball holds).
//
// An Image's layers are seen as the filesystem a container gets
// (image-spec layer.md, "Applying changesets"): each layer in order, its
// whiteouts (.wh.NAME) and opaque directories (.wh..wh..opq) hiding what
// the layers below it hold. Open makes one pass over the layers (scan) to
// learn what each later layer hides, keeping every header and the data of
// the files the caller names (Options.Keep); Reader yields the merged
// filesystem from that, reading a layer again only for data that was not
// kept. Every blob's digest and every layer's diff_id is checked on the
// pass, and again wherever a layer is read again.
//
// Write writes an image: the input's layers kept byte for byte, plus one
// layer of what changed (whiteouts for what is gone, the files added or
// changed), or with Squash one layer of the whole filesystem.
package ociimage
