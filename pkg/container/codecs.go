package container

import "github.com/rootfs-trim/rootfs-trim/pkg/compress"

// codecRow is one compression, end to end: what adding one takes, and
// where. The codec code itself (its sniffing in compress/sniff.go, its
// reader in compress/reader.go and external.go, its writer in
// compress/writer.go and external.go, its name in compress/codec.go) stays
// in pkg/compress, which a library user may import alone; its splicer, if
// any, is in pkg/splice. This table is the one place that names them all,
// because this package is the one that uses all of them: it reads the
// codec (Open), writes it (Create) and splices it (reuse.go).
// TestEveryCodecHandled fails while a codec of compress.Codecs has no row,
// or a row disagrees with pkg/compress, with the codec's own tool or with
// its row in docs/formats.md ("Compressions").
type codecRow struct {
	Codec compress.Codec
	// Name is its --compress name (compress.ParseCodec, Codec.String).
	Name string
	// Suffix is what an output's name ends with when it says this codec
	// (compress.NamedCodec, checked against OUT); "" when none does.
	Suffix string
	// Tool is the codec's own command, making a stream of it from stdin
	// to stdout (at its default level: the test's data is small); nil for
	// none. The test sniffs and reads what it
	// writes, and has it read back what compress writes.
	Tool []string
	// Sniffed: compress.Sniff recognises its signature (none is the
	// absence of one).
	Sniffed bool
	// Write: compress.NewWriter writes it (Codec.CanWrite).
	Write bool
	// Splice starts the reuse of an input's compressed bytes at the
	// output's first difference (reuse.go, with pkg/splice); nil: the
	// output is compressed whole from there (reuseWriter.startFull).
	Splice func(r *reuseWriter) error
}

// codecs has a row for every codec of compress.Codecs, in its order.
var codecs = []codecRow{
	{Codec: compress.None, Name: "none", Write: true},
	{Codec: compress.Gzip, Name: "gzip", Suffix: ".gz", Tool: []string{"gzip", "-9", "-n", "-c"}, Sniffed: true, Write: true,
		Splice: (*reuseWriter).startGzip},
	{Codec: compress.Xz, Name: "xz", Suffix: ".xz", Tool: []string{"xz", "-C", "crc32", "-c"}, Sniffed: true, Write: true,
		Splice: (*reuseWriter).startXz},
	{Codec: compress.Lz4Legacy, Name: "lz4-legacy", Suffix: ".lz4", Tool: []string{"lz4", "-l", "-q", "-c"}, Sniffed: true, Write: true,
		Splice: (*reuseWriter).startLz4},
	{Codec: compress.Lz4Frame, Name: "lz4", Tool: []string{"lz4", "-q", "-c"}, Sniffed: true, Write: true},
	{Codec: compress.Zstd, Name: "zstd", Suffix: ".zst", Tool: []string{"zstd", "-q", "-c"}, Sniffed: true, Write: true},
	{Codec: compress.Bzip2, Name: "bzip2", Suffix: ".bz2", Tool: []string{"bzip2", "-9", "-c"}, Sniffed: true},
}

// codecOf returns c's row; a codec without one has none of the reuse paths.
func codecOf(c compress.Codec) codecRow {
	for _, row := range codecs {
		if row.Codec == c {
			return row
		}
	}
	return codecRow{Codec: c}
}
