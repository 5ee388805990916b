package compress

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"io"
	"strconv"

	"github.com/pierrec/lz4/v4"
)

// table is the codec table, a row per codec indexed by Codec. Its order is
// Sniff's, the order of Codecs and of the documents' tables.
//
// Levels: Buildroot's fs/common.mk (ROOTFS_$(2)_COMPRESS_CMD, which fs/cpio
// uses) writes `gzip -9 -c -n`, `xz -9 -C crc32`, `lz4 -l -9`, `zstd -19`;
// initramfs-tools 0.142 (mkinitramfs, its compresslevel case) `zstd -q -9
// -T0`, `lz4 -9 -l`, gzip/pigz and xz at their own default, 6 (`xz
// --check=crc32`); dracut (dracut.sh, the compress case) `zstd -15 -q
// -T0`, `lz4 -l -9`, `gzip -n -9` (or pigz -9), `xz --check=crc32
// --lzma2=dict=1MiB` (preset 6 with a smaller dictionary).
//
// The commands are chosen so that the output depends on the level, never
// the thread count: pigz primes each block with the previous whatever -p;
// xz multi-threaded (-T+N: "+" even for one thread) cuts blocks at a size
// fixed by the level; zstd -T1 and -TN agree. single: one xz block.
//
// Decompressors: auto keeps zstd and lz4 in process, where the zstd
// decoder keeps pace with the tool and the legacy lz4 one uses every core,
// and a pipe would cost two more copies of every byte
// (docs/performance.md). gzip and bzip2 are always read in Go: gzip is
// slower, and pigz -d ignores trailing garbage after the last member,
// which the kernel refuses ("junk at the end of compressed archive").
var table = []Spec{
	None: {Name: "none", Layer: true,
		Decode: func(br *bufio.Reader, _ io.Reader) (io.Reader, func() error, error) { return br, nil, nil },
		Encode: func(w io.Writer, _, _ int) (io.WriteCloser, error) { return nopWriteCloser{w}, nil }},
	Gzip: {Name: "gzip", Aliases: []string{"gz"}, Suffix: ".gz", Magic: isGzip,
		KernelMagic: []byte{0x1f, 0x8b}, KernelName: "gzip",
		Decode: decodeGzip, ReadAhead: true, DecodeOne: gzipMember, Encode: encodeGzip,
		Levels: Levels{Max: 9, Buildroot: 9, InitramfsTools: 6, Dracut: 9}, Hint: gzipHint,
		Tool: []string{"gzip", "-9", "-n", "-c"},
		Compressors: func(level, threads int, _ bool) [][]string {
			l := "-" + strconv.Itoa(level)
			return [][]string{{"pigz", l, "-n", "-c", "-p", strconv.Itoa(threads)}, {"gzip", l, "-n", "-c"}}
		},
		Layer: true},
	Xz: {Name: "xz", Suffix: ".xz", Magic: prefix(magicXz),
		KernelMagic: []byte{0xfd, '7'}, KernelName: "xz",
		Decode: decodeXz, ReadAhead: true, SegmentLen: xzLen, Encode: encodeXz,
		Levels: Levels{Max: 9, Buildroot: 9, InitramfsTools: 6, Dracut: 6}, Hint: xzHint,
		Tool: []string{"xz", "-C", "crc32", "-c"},
		Compressors: func(level, threads int, single bool) [][]string {
			t := "-T+" + strconv.Itoa(threads)
			if single {
				t = "-T1"
			}
			return [][]string{{"xz", "-" + strconv.Itoa(level), "-C", "crc32", t, "-c"}}
		},
		Decompressor: func(threads int) []string { return []string{"xz", "-d", "-c", "-q", "-T" + strconv.Itoa(threads)} },
		ToolFaster:   true},
	Lz4Legacy: {Name: "lz4-legacy", Suffix: ".lz4", Magic: prefix(magicLz4Legacy),
		KernelMagic: []byte{0x02, 0x21}, KernelName: "lz4",
		Decode: decodeLz4Legacy, SegmentLen: lz4LegacyLen, Encode: encodeLz4(lz4.LegacyOption(true)),
		Levels: Levels{Max: 12, Buildroot: 9, InitramfsTools: 9, Dracut: 9},
		Tool:   []string{"lz4", "-l", "-q", "-c"},
		Compressors: func(level, _ int, _ bool) [][]string {
			return [][]string{{"lz4", "-l", "-" + strconv.Itoa(level), "-q", "-c"}}
		},
		Decompressor: func(int) []string { return []string{"lz4", "-d", "-c", "-q"} }},
	// What `lz4` writes by default: 4 MiB independent blocks and a
	// content checksum.
	Lz4Frame: {Name: "lz4", Magic: prefix(magicLz4Frame),
		Decode: decodeLz4Frame, ReadAhead: true, Encode: encodeLz4(lz4.BlockSizeOption(lz4.Block4Mb), lz4.ChecksumOption(true)),
		Levels: Levels{Max: 12, Buildroot: 9, InitramfsTools: 9, Dracut: 9},
		Tool:   []string{"lz4", "-q", "-c"},
		Compressors: func(level, _ int, _ bool) [][]string {
			return [][]string{{"lz4", "-" + strconv.Itoa(level), "-q", "-c"}}
		},
		Decompressor: func(int) []string { return []string{"lz4", "-d", "-c", "-q"} }},
	Zstd: {Name: "zstd", Aliases: []string{"zst"}, Suffix: ".zst", Magic: prefix(magicZstd),
		KernelMagic: []byte{0x28, 0xb5}, KernelName: "zstd",
		Decode: decodeZstd, SegmentLen: zstdLen, Encode: encodeZstd,
		Levels: Levels{Max: 22, Buildroot: 19, InitramfsTools: 9, Dracut: 15}, Hint: zstdHint,
		Tool: []string{"zstd", "-q", "-c"},
		Compressors: func(level, threads int, _ bool) [][]string {
			l, t := "-"+strconv.Itoa(level), "-T"+strconv.Itoa(threads)
			if level > 19 {
				return [][]string{{"zstd", "--ultra", l, t, "-q", "-c"}}
			}
			return [][]string{{"zstd", l, t, "-q", "-c"}}
		},
		// The same window cap as our decoder and the CLI's default.
		Decompressor: func(int) []string { return []string{"zstd", "-d", "-c", "-q", "--memory=128MB"} },
		Layer:        true},
	Bzip2: {Name: "bzip2", Aliases: []string{"bz2"}, Suffix: ".bz2", Magic: isBzip2,
		KernelMagic: []byte{'B', 'Z'}, KernelName: "bzip2",
		// The standard library reads concatenated streams (pbzip2 output).
		Decode: func(br *bufio.Reader, _ io.Reader) (io.Reader, func() error, error) {
			return bzip2.NewReader(br), nil, nil
		},
		ReadAhead: true, DecodeOne: bzip2One,
		Tool: []string{"bzip2", "-9", "-c"}},
	Lzma: {Name: "lzma", Magic: isLzmaAlone, Format: "lzma-alone",
		KernelMagic: []byte{0x5d, 0x00}, KernelName: "lzma",
		DecodeOne: lzmaOne, Tool: []string{"lzma", "-c"}},
	// No Go decoder of lzop's format is maintained: Debian's lzop reads
	// a segment, once cut to its length.
	Lzo: {Name: "lzo", Magic: prefix(magicLzop), Format: "lzop",
		KernelMagic: []byte{0x89, 'L'}, KernelName: "lzo",
		SegmentLen: lzoLen, Tool: []string{"lzop", "-c"},
		Decompressor: func(int) []string { return []string{"lzop", "-d", "-c", "-q"} }},
}

// prefix is the Magic of a codec whose streams start with magic.
func prefix(magic []byte) func([]byte) bool {
	return func(b []byte) bool { return bytes.HasPrefix(b, magic) }
}
