package cli

import (
	"context"
	"fmt"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/names"
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

Formats: newc, crc, tar, dir. Compression: none, gzip, xz (CRC32 check, as the
kernel requires), lz4-legacy (what the kernel reads), lz4 (frame), zstd.
`

func runRepack(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "repack", "[--archive-format F] [--compress C] [--level N] [--recompress auto|full] IN OUT", repackHelp)
	format := renamedFlag(fs, "archive-format", "format", "", "output archive `format`: newc, crc, tar or dir (default: as IN)")
	codec := fs.String("compress", "", "output compression (default: as IN)")
	level := fs.Int("level", 0, "compression level (default: Buildroot's: gzip 9, xz 9, lz4 9, zstd 19)")
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
	if container.SameFile(inPath, outPath) {
		return usagef("OUT %s is the same file as IN", outPath)
	}
	open := maxSize.open()
	matcher := startReuse(*recompress, &open)
	in, err := container.Open(inPath, open)
	if err != nil {
		return err
	}
	defer in.Close()

	out := in.Format
	if *format != "" {
		if out.Kind, err = archive.ParseKind(*format); err != nil {
			return usagef("--archive-format: %v", err)
		}
	}
	if *codec != "" {
		if out.Codec, err = compress.ParseCodec(*codec); err != nil {
			return usagef("--compress: %v", err)
		}
	}
	if out.Kind == archive.KindDir {
		if *codec != "" && out.Codec != compress.None {
			return usagef("--compress %s makes no sense with a directory output", *codec)
		}
		out.Codec = compress.None
	}
	if !out.Codec.CanWrite() {
		return usagef("cannot write %s output; choose another --compress", out.Codec)
	}
	if err := checkOutputName(outPath, out, *codec); err != nil {
		return err
	}
	return repack(ctx, env, in, outPath, out, container.OutputOptions{Compress: compress.WriterOptions{Level: *level}, Backend: open.Backend,
		Reuse: reuseOutput(env, "repack", matcher, in, out, *level, open.Backend)})
}

func repack(ctx context.Context, env *Env, in *container.Input, outPath string, f archive.Format, oopt container.OutputOptions) error {
	opt := archive.CopyOptions{Dest: f.Kind}
	if in.Format.Kind == archive.KindTar && f.Kind.IsCpio() {
		scan, err := scanLinks(in.Path, container.OpenOptions{})
		if err != nil {
			return err
		}
		opt.Links = scan
	}
	o, err := container.Create(outPath, f, oopt)
	if err != nil {
		return err
	}
	defer o.Abort()
	r, stop := withProgress(env, false, "repack "+in.Path, in, withContext(ctx, in))
	err = archive.Copy(o, r, opt)
	stop()
	if err != nil {
		return fmt.Errorf("%s: %w", in.Path, err)
	}
	return o.Commit()
}

// checkOutputName refuses an output whose name says another compression
// than the one about to be written (xz bytes in out.cpio.zst, because the
// output keeps IN's compression): a build that picks the image by its name
// would boot, or fail to boot, on what it did not ask for. A name with no
// compression suffix (rootfs.cpio) says nothing, and a directory has none.
func checkOutputName(outPath string, out archive.Format, codecFlag string) error {
	if out.Kind == archive.KindDir {
		return nil
	}
	named, suffix, ok := compress.NamedCodec(outPath)
	if !ok || named == out.Codec {
		return nil
	}
	from := "as IN"
	if codecFlag != "" {
		from = "--compress " + codecFlag
	}
	would := out.Codec.String()
	if out.Codec == compress.None {
		would = "uncompressed"
	}
	hint := "name OUT without " + suffix
	if named.CanWrite() {
		hint = fmt.Sprintf("pass --compress %s, or %s", named, hint)
	}
	return usagef("OUT %s: its name says %s (%s), but the output would be %s (%s); %s",
		names.Quote(outPath), named, suffix, would, from, hint)
}

// scanLinks makes the first of two passes over a tar archive that is being
// turned into cpio; see archive.ScanLinks.
func scanLinks(path string, open container.OpenOptions) (*archive.LinkScan, error) {
	in, err := container.Open(path, open)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	s, err := archive.ScanLinks(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
