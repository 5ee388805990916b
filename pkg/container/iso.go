package container

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
)

// ContainerISO is archive.Format.Container for an initrd in an ISO image.
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

// IsISO reports whether path is an ISO 9660 image, which Open reads as
// the initrd its boot configuration names.
func IsISO(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && isISOFile(path)
}

func isISOFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return iso9660.Sniff(f)
}

func isISO(f archive.Format) bool { return f.Container == ContainerISO }

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
	in.src = isoSource{in.src, f, fi.Size()}
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
	var readers []io.Reader
	var total int64
	for _, file := range ird.Files {
		parts = append(parts, Part{Path: file.Path, Offset: file.Offset, Size: file.Size})
		readers = append(readers, im.Section(file))
		total += file.Size
	}
	// The digest, if asked for, is the whole image's (Input.Digest), not
	// the initrd's the stream reads.
	sopt := opt
	sopt.Digest = false
	in, err := openInitrd(f, parts, readers, sopt)
	if err != nil {
		return nil, fmt.Errorf("initrd %s (%s): %w", quotedPaths(ird.Paths()), names.Quote(ird.Where), err)
	}
	in.Format.Container = ContainerISO
	in.Size, in.Parts = total, parts
	in.ISO = &ISO{Image: im, Boot: boot, Initrd: ird}
	return in, nil
}

// openInitrd reads the initrd's files as the kernel gets them
// (initrdView), segment by segment, one file or several: a Debian-style
// initrd, an early raw cpio and the main one compressed, is one file. An
// initrd that is one stream (minikube's rootfs.cpio.gz) is read as a
// lone initrd of one stream is.
func openInitrd(f *os.File, parts []Part, readers []io.Reader, opt OpenOptions) (*Input, error) {
	in, ok, err := openISOSegments(f, parts, opt)
	if err != nil || ok {
		return in, err
	}
	return openStream(io.MultiReader(readers...), nil, opt, false)
}

// isoSource is an ISO image's: its initrd's source, but the digest of
// the whole image, not of the initrd the entries come from.
type isoSource struct {
	initrd source
	file   *os.File
	size   int64
}

func (s isoSource) consumed() int64         { return s.initrd.consumed() }
func (s isoSource) digest() (string, error) { return fileDigest(s.file, s.size) }
func (s isoSource) close() error            { return s.initrd.close() }

// createISO starts o, an ISO image: the input's, with its initrd replaced
// by what is written to o. The initrd goes through createStream (and the
// splice path: opt.Reuse, re-aimed at a copy of the input's initrd) into
// a work directory beside OUT; at Commit, isoBuild writes the image.
func createISO(o *Output, dir, base string, opt OutputOptions) error {
	from := opt.From
	if from == nil || from.ISO == nil {
		return fmt.Errorf("%s: an ISO image is only written from an ISO image", o.Path)
	}
	if len(from.Parts) != 1 {
		// Rewrite writes those segment by segment (rewriteISOSegments).
		return fmt.Errorf("%s: its initrd is %d files (%s), which are one stream: writing them back is not supported", from.Path, len(from.Parts), names.Quote(from.ISO.Initrd.Where))
	}
	work, err := os.MkdirTemp(dir, "."+base+".tmp-")
	if err != nil {
		return userPathError(o.Path, err)
	}
	o.tmp = work
	inner := &Output{Path: filepath.Join(work, "initrd"), Format: o.Format}
	inner.Format.Container = ""
	iopt := opt
	iopt.From, iopt.Digest = nil, false
	if opt.Reuse != nil {
		r := *opt.Reuse
		if r.Path, r.Info, err = extractPart(from, from.Parts[0], filepath.Join(work, "initrd.in")); err != nil {
			os.RemoveAll(work)
			return err
		}
		iopt.Reuse = &r
	}
	if err := createStream(inner, work, "initrd", iopt); err != nil {
		os.RemoveAll(work)
		return err
	}
	o.Writer, o.opt = inner.Writer, opt
	o.iso = &isoOutput{inner: inner, from: from, work: work}
	return nil
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
