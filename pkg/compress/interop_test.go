package compress

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// interopSizes are the input sizes for the CLI tests: empty and one-byte
// streams are where encoders most often write something other tools reject.
var interopSizes = []int{0, 1, 1 << 20}

// TestInteropToCLI compresses with our writer and has the reference tool
// test and decompress the result.
func TestInteropToCLI(t *testing.T) {
	tests := []struct {
		codec  Codec
		opt    WriterOptions
		tool   string
		decode []string
		test   []string
		sizes  []int
	}{
		{codec: Gzip, tool: "gzip", decode: []string{"-dc"}, test: []string{"-t"}},
		{codec: Gzip, opt: WriterOptions{Level: 1}, tool: "gzip", decode: []string{"-dc"}, test: []string{"-t"}},
		{codec: Xz, tool: "xz", decode: []string{"-dc"}, test: []string{"-t"}},
		{codec: Lz4Legacy, tool: "lz4", decode: []string{"-dc"}, test: []string{"-t"}},
		// Several 8 MiB blocks, as a real rootfs has.
		{codec: Lz4Legacy, opt: WriterOptions{Level: 3}, tool: "lz4", decode: []string{"-dc"}, test: []string{"-t"}, sizes: []int{17 << 20}},
		{codec: Lz4Frame, tool: "lz4", decode: []string{"-dc"}, test: []string{"-t"}},
		{codec: Zstd, tool: "zstd", decode: []string{"-dc"}, test: []string{"-t"}},
		// Sectioned multi-threaded output must be a plain zstd stream.
		{codec: Zstd, opt: WriterOptions{Level: 3, Threads: 2}, tool: "zstd", decode: []string{"-dc"}, test: []string{"-t"}, sizes: []int{70 << 20}},
	}
	for _, tt := range tests {
		sizes := tt.sizes
		if sizes == nil {
			sizes = interopSizes
		}
		for _, size := range sizes {
			name := fmt.Sprintf("%v/level%d/threads%d/%d", tt.codec, tt.opt.Level, tt.opt.Threads, size)
			t.Run(name, func(t *testing.T) {
				requireTool(t, tt.tool)
				if testing.Short() && size > 8<<20 {
					t.Skip("large input in -short mode")
				}
				data := mixedData(size, uint64(size)+71)
				compressed := compress(t, tt.codec, tt.opt, data)
				mustRunTool(t, compressed, tt.tool, tt.test...)
				got := mustRunTool(t, compressed, tt.tool, tt.decode...)
				if diff := cmp.Diff(digestOf(tt.codec, data), digestOf(tt.codec, got)); diff != "" {
					t.Errorf("%s %s output mismatch (-want +got):\n%s", tt.tool, strings.Join(tt.decode, " "), diff)
				}
			})
		}
	}
}

// TestInteropFromCLI decompresses what the reference tools write, with the
// options Buildroot uses and a few it could.
func TestInteropFromCLI(t *testing.T) {
	tests := []struct {
		codec Codec
		tool  string
		args  []string
		sizes []int
	}{
		{Gzip, "gzip", []string{"-9", "-n", "-c"}, nil},
		{Gzip, "pigz", []string{"-9", "-n", "-c"}, nil},
		{Xz, "xz", []string{"-9", "-C", "crc32", "-c"}, nil},
		{Xz, "xz", []string{"-6", "-C", "crc32", "-T2", "--block-size=300KiB", "-c"}, []int{1 << 20}},
		{Lz4Legacy, "lz4", []string{"-l", "-9", "-c"}, nil},
		{Lz4Legacy, "lz4", []string{"-l", "-1", "-c"}, []int{17 << 20}},
		{Lz4Frame, "lz4", []string{"-9", "-c"}, nil},
		{Lz4Frame, "lz4", []string{"-1", "-BD", "-BX", "--content-size", "-c"}, []int{1 << 20}},
		{Zstd, "zstd", []string{"-19", "-c"}, nil},
		{Zstd, "zstd", []string{"-3", "-T2", "--long=27", "-c"}, []int{1 << 20}},
		{Bzip2, "bzip2", []string{"-9", "-c"}, nil},
	}
	for _, tt := range tests {
		sizes := tt.sizes
		if sizes == nil {
			sizes = interopSizes
		}
		for _, size := range sizes {
			t.Run(fmt.Sprintf("%s %s/%d", tt.tool, strings.Join(tt.args, " "), size), func(t *testing.T) {
				if testing.Short() && size > 8<<20 {
					t.Skip("large input in -short mode")
				}
				data := mixedData(size, uint64(size)+72)
				compressed := mustRunTool(t, data, tt.tool, tt.args...)
				got, c, err := decompress(bytes.NewReader(compressed))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(digestOf(tt.codec, data), digestOf(c, got)); diff != "" {
					t.Errorf("mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestInteropConcatenated mixes our streams with the tools' in one input,
// as happens when an image is assembled from pieces.
func TestInteropConcatenated(t *testing.T) {
	a, b := mixedData(30<<10, 73), mixedData(20<<10, 74)
	tests := []struct {
		codec Codec
		tool  string
		args  []string
	}{
		{Gzip, "gzip", []string{"-9", "-n", "-c"}},
		{Xz, "xz", []string{"-9", "-C", "crc32", "-c"}},
		{Lz4Legacy, "lz4", []string{"-l", "-9", "-c"}},
		{Lz4Frame, "lz4", []string{"-9", "-c"}},
		{Zstd, "zstd", []string{"-19", "-c"}},
	}
	for _, tt := range tests {
		t.Run(tt.codec.String(), func(t *testing.T) {
			in := concat(compress(t, tt.codec, WriterOptions{}, a), mustRunTool(t, b, tt.tool, tt.args...))
			got, c, err := decompress(bytes.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(digestOf(tt.codec, concat(a, b)), digestOf(c, got)); diff != "" {
				t.Errorf("ours then theirs, read by us (-want +got):\n%s", diff)
			}
			cli := mustRunTool(t, in, tt.tool, "-dc")
			if diff := cmp.Diff(digestOf(tt.codec, concat(a, b)), digestOf(tt.codec, cli)); diff != "" {
				t.Errorf("ours then theirs, read by %s (-want +got):\n%s", tt.tool, diff)
			}
		})
	}
}
