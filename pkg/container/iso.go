package container

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
)

// ContainerISO is the ISO image's name, as docs/formats.md and list say it.
const ContainerISO = "iso9660"

// Part is one file of a container that holds the archive: an initrd in an
// ISO image, where it is in the container's file.
type Part struct {
	Path         string // in the container, "/boot/initrd"
	Offset, Size int64
}

// ISO is what an Input read from an ISO image knows of it.
type ISO struct {
	Image *iso9660.Image
	Boot  *iso9660.Boot
	// Initrd is the initrd read: its files, and the line naming it.
	Initrd iso9660.Initrd
}

// openISO opens an ISO image: its parts are the files of the initrd its
// boot configuration names, read in place from their extents, one after
// the other as the bootloader loads them.
func openISO(path string, fi os.FileInfo, opt OpenOptions) (*Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	in, err := readISO(f, fi.Size(), opt)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	in.Path, in.file = path, f
	in.src = isoSource{in.src, f, fi.Size(), in.ISO}
	if in.info, err = f.Stat(); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

func readISO(f *os.File, size int64, opt OpenOptions) (*Input, error) {
	im, err := iso9660.Open(f, size)
	if err != nil {
		return nil, err
	}
	boot, err := im.ReadBoot()
	if err != nil {
		return nil, err
	}
	if len(boot.Initrds) > 1 {
		var named []string
		for _, i := range boot.Initrds {
			named = append(named, fmt.Sprintf("%s (%s)", quotedPaths(i.Paths()), names.Quote(i.Where)))
		}
		return nil, fmt.Errorf("its boot entries load different initrds: %s; rootfs-trim reads an image with one", strings.Join(named, ", "))
	}
	ird := boot.Initrds[0]
	if err := checkInitrdFiles(ird); err != nil {
		return nil, err
	}
	var parts []Part
	var total int64
	for _, file := range ird.Files {
		parts = append(parts, Part{Path: file.Path, Offset: file.Offset, Size: file.Size})
		total += file.Size
	}
	// The digest, if asked for, is the whole image's (Input.Digest), not
	// the initrd's the stream reads.
	sopt := opt
	sopt.Digest = false
	in, err := openInitrd(f, parts, sopt)
	if err != nil {
		return nil, fmt.Errorf("initrd %s (%s): %w", quotedPaths(ird.Paths()), names.Quote(ird.Where), err)
	}
	in.Format.Container = isoContainer{}
	in.Size, in.Parts = total, parts
	in.ISO = &ISO{Image: im, Boot: boot, Initrd: ird}
	return in, nil
}

// openInitrd reads the initrd's files as the kernel gets them
// (initrdView), segment by segment, one file or several: a Debian-style
// initrd, an early raw cpio and the main one compressed, is one file. An
// initrd that is one stream (minikube's rootfs.cpio.gz) is read as a
// lone initrd of one stream is.
func openInitrd(f *os.File, parts []Part, opt OpenOptions) (*Input, error) {
	in, ok, err := openISOSegments(f, parts, opt)
	if err != nil || ok {
		return in, err
	}
	var readers []io.Reader
	for _, p := range parts {
		readers = append(readers, io.NewSectionReader(f, p.Offset, p.Size))
	}
	return openStream(io.MultiReader(readers...), nil, opt, false)
}

// isoSource is an ISO image's: its initrd's source, but the digest of
// the whole image, not of the initrd the entries come from.
type isoSource struct {
	initrd source
	file   *os.File
	size   int64
	iso    *ISO
}

func (s isoSource) consumed() int64         { return s.initrd.consumed() }
func (s isoSource) digest() (string, error) { return fileDigest(s.file, s.size) }
func (s isoSource) close() error            { return s.initrd.close() }

// isoContainer is an ISO 9660 image: its parts are the files of the
// initrd its boot configuration names; an output is the input's image
// with that initrd replaced (isowrite.go).
type isoContainer struct{}

func (isoContainer) Name() string { return ContainerISO }
func (isoContainer) Is(path string, fi os.FileInfo) bool {
	return fi.Mode().IsRegular() && sniff(path, iso9660.Sniff)
}
func (isoContainer) Open(path string, fi os.FileInfo, opt OpenOptions) (*Input, error) {
	return openISO(path, fi, opt)
}

func (isoContainer) describe(f archive.Format) string   { return f.String() + " in " + ContainerISO }
func (isoContainer) formatName(f archive.Format) string { return f.Kind.String() }

// ownersUnknown: a release ISO carries no packages-file-list, so whether
// its owners are known is always worth saying.
func (isoContainer) ownersUnknown() string { return "an ISO image carries no packages-file-list" }

// Output: the image, around the new initrd, when OUT is named *.iso; else
// the initrd alone, said, since an image was asked of nothing but OUT's
// name.
func (isoContainer) Output(in *Input, want Want, note func(string)) (Shape, error) {
	if strings.EqualFold(filepath.Ext(want.Path), ".iso") {
		return outputIn(in, want, isoContainer{})
	}
	if note != nil {
		note(fmt.Sprintf("OUT %s is not named *.iso: writing the initrd alone, not an ISO image", names.Quote(want.Path)))
	}
	return outputIn(in, want, streamContainer{})
}

// writer: an initrd of several files read as segments is written back
// file by file into the image (whatever the format asked, which
// createISOSegments refuses unless it is the initrd's own); an initrd of
// one stream into a tree as asked, else into the image.
func (isoContainer) writer(in *Input, f archive.Format) Container {
	if in.segs() == nil && f.Kind == archive.KindDir {
		return treeContainer{}
	}
	return isoContainer{}
}

// create: an initrd of several files read as segments is written back
// file by file (createISOSegments), one of one stream as a stream.
func (isoContainer) create(w writing) (sink, error) {
	if w.in.segs() != nil {
		return createISOSegments(w)
	}
	return createISO(w)
}

func createISO(w writing) (sink, error) {
	from := w.in
	if err := checkTarget(w.path, false); err != nil {
		return nil, err
	}
	if len(from.Parts) != 1 {
		// Those read as segments are written by createISOSegments.
		return nil, fmt.Errorf("%s: its initrd is %d files (%s), which are one stream: writing them back is not supported", from.Path, len(from.Parts), names.Quote(from.ISO.Initrd.Where))
	}
	work, err := tempDir(w.path)
	if err != nil {
		return nil, err
	}
	reuse := reuseFor(w.matchers[0], from, w.out, w.opt)
	if reuse != nil {
		r := *reuse
		if r.Path, r.Info, err = extractPart(from, from.Parts[0], filepath.Join(work, "initrd.in")); err != nil {
			os.RemoveAll(work)
			return nil, err
		}
		reuse = &r
	}
	inner, err := createStream(filepath.Join(work, "initrd"), w.out.Format, OutputOptions{Compress: compressOptions(w.opt, compress.LevelChoice{}), Reuse: reuse})
	if err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	return &isoOutput{Writer: inner.Writer, placement: placement{Path: w.path, tmp: work}, inner: inner, from: from, digest: w.opt.Digest}, nil
}

// extractPart copies part of the input file to dst (copy_file_range where
// the filesystem has it), for the splice path, which reads its input as a
// file of its own.
func extractPart(in *Input, part Part, dst string) (string, os.FileInfo, error) {
	src, err := os.Open(in.Path)
	if err != nil {
		return "", nil, err
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil || !os.SameFile(fi, in.info) || fi.Size() != in.info.Size() {
		return "", nil, fmt.Errorf("%s: replaced or changed while it was read", in.Path)
	}
	if _, err := src.Seek(part.Offset, io.SeekStart); err != nil {
		return "", nil, err
	}
	out, err := os.Create(dst)
	if err != nil {
		return "", nil, err
	}
	n, err := io.Copy(out, io.LimitReader(src, part.Size))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != part.Size {
		err = fmt.Errorf("%s: %s: %d of %d bytes", in.Path, names.Quote(part.Path), n, part.Size)
	}
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Stat(dst)
	return dst, fi, err
}

// quotedPaths shows an initrd's files, as its boot configuration names
// them: each name the image chose, quoted where it must be (names.Quote).
func quotedPaths(paths []string) string {
	shown := make([]string, len(paths))
	for i, p := range paths {
		shown[i] = names.Quote(p)
	}
	return strings.Join(shown, " ")
}
