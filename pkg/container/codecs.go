package container

import "github.com/rootfs-trim/rootfs-trim/pkg/compress"

// splicers are what this package adds to a codec's row in pkg/compress's
// table (compress.Spec): the start of the reuse of an input's compressed
// bytes at the output's first difference (reuse.go, with pkg/splice). A
// codec without one is compressed whole from there (reuseWriter.startFull).
// TestEveryCodecHandled checks them against docs/formats.md.
var splicers = map[compress.Codec]func(r *reuseWriter) error{
	compress.Gzip:      (*reuseWriter).startGzip,
	compress.Xz:        (*reuseWriter).startXz,
	compress.Lz4Legacy: (*reuseWriter).startLz4,
}
