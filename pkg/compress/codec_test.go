package compress

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCodecString(t *testing.T) {
	got := map[Codec]string{}
	for _, c := range Codecs {
		got[c] = c.String()
	}
	got[Codec(200)] = Codec(200).String()
	want := map[Codec]string{
		None: "none", Gzip: "gzip", Xz: "xz", Lz4Legacy: "lz4-legacy",
		Lz4Frame: "lz4", Zstd: "zstd", Bzip2: "bzip2", Codec(200): "codec(200)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("String() mismatch (-want +got):\n%s", diff)
	}
}

func TestParseCodec(t *testing.T) {
	tests := []struct {
		in      string
		want    Codec
		wantErr bool
	}{
		{in: "none", want: None},
		{in: "gzip", want: Gzip},
		{in: "gz", want: Gzip},
		{in: "xz", want: Xz},
		{in: "lz4", want: Lz4Frame},
		{in: "lz4-legacy", want: Lz4Legacy},
		{in: "zstd", want: Zstd},
		{in: "zst", want: Zstd},
		{in: "bzip2", want: Bzip2},
		{in: "bz2", want: Bzip2},
		{in: " XZ ", want: Xz},
		{in: "", wantErr: true},
		{in: "lzma", wantErr: true},
		{in: "lz4legacy", wantErr: true},
		{in: "codec(200)", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCodec(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseCodec(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseCodec(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		codec Codec
		err   error
		want  string
	}{
		{Xz, errors.New("xz: invalid header"), "xz: invalid header"},
		{Lz4Legacy, errors.New("lz4: invalid block size"), "lz4-legacy: invalid block size"},
		{Bzip2, errors.New("bzip2 data invalid: bad magic value"), "bzip2: bad magic value"},
		{Zstd, io.ErrUnexpectedEOF, "zstd: unexpected EOF"},
		{Gzip, fmt.Errorf("gzip: %w", io.ErrUnexpectedEOF), "gzip: unexpected EOF"},
	}
	for _, tt := range tests {
		err := wrapErr(tt.codec, tt.err)
		if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
			t.Errorf("message mismatch (-want +got):\n%s", diff)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("%v does not wrap %v", err, tt.err)
		}
		if again := wrapErr(tt.codec, err); again != err {
			t.Errorf("wrapping twice gave %q", again)
		}
	}
}

func TestNamedCodec(t *testing.T) {
	type res struct {
		Codec  Codec
		Suffix string
		OK     bool
	}
	tests := []struct {
		name string
		want res
	}{
		{"rootfs.cpio.gz", res{Gzip, ".gz", true}},
		{"out/rootfs.cpio.XZ", res{Xz, ".XZ", true}},
		{"rootfs.cpio.zst", res{Zstd, ".zst", true}},
		{"rootfs.cpio.lz4", res{Lz4Legacy, ".lz4", true}},
		{"rootfs.tar.bz2", res{Bzip2, ".bz2", true}},
		{"rootfs.cpio", res{None, "", false}},
		{"rootfs.cpio.zstd", res{None, "", false}},
		{"gz", res{None, "", false}},
		{"", res{None, "", false}},
	}
	for _, tc := range tests {
		c, s, ok := NamedCodec(tc.name)
		if d := cmp.Diff(tc.want, res{c, s, ok}); d != "" {
			t.Errorf("NamedCodec(%q) (-want +got):\n%s", tc.name, d)
		}
	}
}
