package cli

import (
	"context"
	"errors"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

func init() {
	register(&command{name: "repack", summary: "rewrite an archive or tree in another format or compression", run: runRepack})
}

const repackHelp = `
Streams IN (a cpio newc/crc or tar archive, compressed or not, or a directory)
into OUT. Without flags OUT has IN's format and compression, and a newc archive
made by GNU cpio comes out byte for byte. OUT is written to a temporary file
beside it and renamed into place when complete; a directory OUT must not exist.
An OUT named for another compression than the one written (.gz, .xz, .zst,
.lz4 for lz4-legacy, .bz2) is refused.

Formats: newc, crc, tar, dir; images: oci, docker-archive. Compression: none, gzip, xz (CRC32 check, as the
kernel requires), lz4-legacy (what the kernel reads), lz4 (frame), zstd.
`

func runRepack(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "repack", "[--archive-format F] [--compress C] [--level N] [--recompress auto|full] IN OUT", repackHelp)
	format := renamedFlag(fs, "archive-format", "format", "", "output archive `format`: newc, crc, tar, dir, or an image: oci, docker-archive (default: as IN)")
	codec := fs.String("compress", "", "output `compression`: "+wantOneOf(writableCodecs())+" (default: as IN)")
	level := fs.Int("level", 0, "compression level (default: the input's where its header records it, else its likely producer's: initramfs-tools' for an initrd of several segments, Buildroot's (gzip 9, xz 9, lz4 9, zstd 19) for one stream; a note says which)")
	maxSize := maxSizeFlag(fs)
	recompress := recompressFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkRecompress(*recompress); err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want IN and OUT, got %d arguments", len(pos))
	}
	inPath, outPath := pos[0], pos[1]
	if err := notStdout("repack", outPath); err != nil {
		return err
	}
	_, err = container.Rewrite(inPath, outPath, container.RewriteOptions{
		Open: maxSize.open(), Reuse: *recompress == "auto", ExpectSame: true, Level: *level,
		Want: container.Want{Format: *format, Codec: *codec, StrictDir: true},
		Wrap: func(in *container.Input) (archive.Reader, func()) {
			return withProgress(env, false, "repack "+inPath, in, withContext(ctx, in))
		},
		Note:      noteTo(env, "repack"),
		Transform: container.Copy,
	})
	if errors.Is(err, container.ErrSameFile) {
		return usagef("OUT %s is the same file as IN", outPath)
	}
	return err
}

// notStdout refuses `-` as OUT, which would otherwise name a file called
// "-": the output is written to a temporary file beside OUT and renamed into
// place only once whole and checked, which standard output cannot give.
func notStdout(cmd, outPath string) error {
	if outPath == container.Stdin {
		return usagef("OUT -: %s writes a temporary file beside OUT and renames it into place once it is whole, so it cannot write standard output; name a file", cmd)
	}
	return nil
}
