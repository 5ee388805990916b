package container

import (
	"fmt"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
)

// Shape is what an input is, or an output will be: the container that
// holds the archive, and the archive's format.
type Shape struct {
	Container Container
	archive.Format
}

// String says it as list's first line and diff's sides do: "newc, gzip",
// "newc, gzip in iso9660", "oci image (tar layers), gzip".
func (s Shape) String() string { return s.Container.describe(s.Format) }

// FormatName is the manifest's format: the archive's kind, or the image's
// (oci, docker-archive).
func (s Shape) FormatName() string { return s.Container.formatName(s.Format) }

// Want is what the user asked of an output.
type Want struct {
	// Path is OUT.
	Path string
	// Format is --archive-format: an archive kind (archive.ParseKind) or
	// an image kind (oci, docker-archive); "" keeps the input's.
	Format string
	// Codec is --compress; "" keeps the input's.
	Codec string
	// StrictDir refuses a --compress for a tree (repack); else (apply)
	// it is ignored.
	StrictDir bool
	// Squash is --squash, which only an image output takes.
	Squash bool
}

// UsageError is an output asked for that cannot be: a mistake on the
// command line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{fmt.Sprintf(format, args...)}
}

// plain is embedded by the containers that are nothing but their archive
// (a stream, an initrd of segments, a tree): they say nothing of their
// own, and what they write follows the archive's format.
type plain struct{}

func (plain) describe(f archive.Format) string   { return f.String() }
func (plain) formatName(f archive.Format) string { return f.Kind.String() }
func (plain) ownersUnknown() string              { return "" }
func (plain) Output(in *Input, want Want, _ func(string)) (Shape, error) {
	return outputIn(in, want, in.Format.Container)
}

// writer: a tree, an initrd of segments rewritten segment by segment in
// its own archive format, else a stream.
func (plain) writer(in *Input, f archive.Format) Container {
	switch {
	case f.Kind == archive.KindDir:
		return treeContainer{}
	case in.segs() != nil && f.Kind == in.Format.Kind:
		return segmentsContainer{}
	}
	return streamContainer{}
}

// imageKinds are the --archive-format names of an image output.
var imageKinds = map[string]ociimage.Kind{ociimage.LayoutName: ociimage.Layout, ociimage.ArchiveName: ociimage.Archive}

// outputIn is the output written from in, as want asks, starting from
// container c: the input's format, changed by want's Format and Codec,
// checked against OUT's name; then the container that writes it
// (Container.writer).
func outputIn(in *Input, want Want, c Container) (Shape, error) {
	f := in.Format.Format
	var err error
	switch kind, isImage := imageKinds[want.Format]; {
	case want.Format == "":
	case isImage:
		if in.Image() == nil {
			f.Codec = compress.Gzip
		}
		f.Kind, c = archive.KindTar, imageContainer{kind: kind}
	default:
		if f.Kind, err = archive.ParseKind(want.Format); err != nil {
			return Shape{}, usagef("--archive-format: %v (or an image: %s, %s)", err, ociimage.LayoutName, ociimage.ArchiveName)
		}
		if in.Image() != nil {
			c = streamContainer{}
		}
	}
	if want.Codec != "" {
		if f.Codec, err = compress.ParseCodec(want.Codec); err != nil {
			return Shape{}, usagef("--compress: %v", err)
		}
	}
	if _, isImage := c.(imageContainer); isImage {
		// An image's new layer is written gzip, zstd or raw, whatever
		// OUT's name, as every image consumer reads those.
		if !f.Codec.IsLayer() {
			return Shape{}, usagef("--compress %s: an image's new layer is %s or none", f.Codec, compress.LayerCodecs())
		}
		return Shape{c, f}, nil
	}
	if f.Kind == archive.KindDir {
		if want.StrictDir && want.Codec != "" && f.Codec != compress.None {
			return Shape{}, usagef("--compress %s makes no sense with a directory output", want.Codec)
		}
		f.Codec = compress.None
	}
	if !f.Codec.CanWrite() {
		return Shape{}, usagef("cannot write %s output; choose another --compress", f.Codec)
	}
	if err := checkOutputName(want.Path, f, want.Codec); err != nil {
		return Shape{}, err
	}
	if want.Squash {
		return Shape{}, usagef("--squash: OUT is %s, not an image", c.describe(f))
	}
	return Shape{c.writer(in, f), f}, nil
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
