package container

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
)

// isoOutput is an ISO image being written: the input's, with its
// initrd replaced. The initrd goes to inner (a stream, and the splice
// path, re-aimed at a copy of the input's initrd) in the work directory
// beside OUT, or, for an initrd of several files, to the files isoSegOut
// wrote; at Commit, build writes the image, checked, then renamed into
// place.
type isoOutput struct {
	archive.Writer         // inner's
	placement              // tmp is the work directory
	inner          *Output // nil for an initrd of several files
	from           *Input
	files          []isoFile // the initrd's files, in load order, once written
	out            string    // the image, once built: what Commit renames into place
	Compressor     string
	digest         bool
	sum            string
}

func (x *isoOutput) Commit() error {
	return x.place(func() (string, error) {
		err := x.finish()
		return x.out, err
	}, x.removeTemp)
}
func (x *isoOutput) Abort() { x.abort(x.removeTemp) }
func (x *isoOutput) removeTemp() {
	if x.inner != nil {
		x.inner.removeTemp()
	}
	os.RemoveAll(x.tmp)
}
func (x *isoOutput) report(res *Result, _ func(string)) {
	res.Compressor, res.OutDigest = x.Compressor, x.sum
}

// CompressorXorriso is how the manifest names the image's writer.
const CompressorXorriso = "xorriso"

// finish completes the initrd, then the image: a copy of the input when
// the initrd is the input's (no change gives the input's bytes), else the
// input's image with the initrd's changed files replaced, written by
// xorriso and checked.
func (x *isoOutput) finish() error {
	if x.inner != nil {
		if err := x.inner.finish(); err != nil {
			return err
		}
		x.Compressor = x.inner.Compressor
		if x.inner.Compressor != CompressorCopy {
			x.files = []isoFile{{Path: x.from.Parts[0].Path, New: x.inner.tmp}}
		}
	}
	x.out = filepath.Join(x.tmp, "out.iso")
	if !slices.ContainsFunc(x.files, func(f isoFile) bool { return f.New != "" }) {
		if _, _, err := extractPart(x.from, Part{Path: x.from.Path, Size: x.from.info.Size()}, x.out); err != nil {
			return err
		}
		x.Compressor = CompressorCopy
	} else {
		if err := x.build(); err != nil {
			return err
		}
		if err := x.verify(); err != nil {
			return fmt.Errorf("the image xorriso wrote: %w", err)
		}
		x.Compressor += "; image: " + CompressorXorriso
	}
	if err := os.Chmod(x.out, 0o644); err != nil {
		return err
	}
	if x.digest {
		f, err := os.Open(x.out)
		if err != nil {
			return err
		}
		defer f.Close()
		d, err := digest.Reader(f)
		x.sum = "sha256:" + d
		return err
	}
	return nil
}

// ecma is a time as xorriso takes an ECMA-119 volume date, in GMT.
func ecma(t time.Time) string {
	t = t.UTC()
	return t.Format("20060102150405") + fmt.Sprintf("%02d", t.Nanosecond()/1e7)
}

// build runs xorriso: load the input image, replay its boot setup (El
// Torito entries and boot images, an isohybrid MBR), keep its volume
// dates, put each changed file of the initrd in place with the old one's
// mode, owner and times, and write the image to x.out. SOURCE_DATE_EPOCH
// is kept from xorriso, which would otherwise set every file's dates from
// it: the input's are kept, and the initrd's own are the input initrd's.
func (x *isoOutput) build() error {
	im := x.from.ISO.Image
	// no_emul_toc: the image starts at sector 0 with one descriptor set,
	// as the input (mkisofs's) does, not after a 64 KiB emulated TOC.
	//
	// Pattern expansion off: -chmod, -chown, -chgrp and -alter_date take
	// "iso_rr_path [***]", which xorriso expands as a shell glob (on by
	// default, xorriso(1) -iso_rr_pattern), so an initrd named /boot/*
	// would give its mode, owner and dates to every file of /boot. The
	// paths here are the image's own names, never patterns.
	// -disk_pattern off for the same reason on the disk side (the new
	// file's path under TMPDIR).
	args := []string{"-no_rc", "-iso_rr_pattern", "off", "-disk_pattern", "off",
		"-indev", x.from.Path, "-outdev", x.out, "-boot_image", "any", "replay",
		"-compliance", "no_emul_toc"}
	if im.HasJoliet {
		args = append(args, "-joliet", "on")
	}
	args = append(args, volumeIDs(im)...)
	args = append(args, volumeDates(im)...)
	for _, f := range x.files {
		if f.New == "" {
			continue
		}
		update, err := updateFile(im, f)
		if err != nil {
			return err
		}
		args = append(args, update...)
	}
	args = append(args, "-commit", "-end")
	cmd := exec.Command("xorriso", args...)
	cmd.Env = envWithout("SOURCE_DATE_EPOCH")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return fmt.Errorf("writing an ISO image needs xorriso (Debian package xorriso): %w", err)
		}
		return fmt.Errorf("xorriso: %v\n%s", err, lastLines(stderr.String(), 12))
	}
	out, err := os.OpenFile(x.out, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := iso9660.CopyIDs(out, x.from.file); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", x.out, err)
	}
	return out.Close()
}

// updateFile is the xorriso commands that put f's new content at its
// path, with the old file's mode, owner and times.
func updateFile(im *iso9660.Image, f isoFile) ([]string, error) {
	p := f.Path
	old, err := im.Lookup(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", names.Quote(p), err)
	}
	content, err := filepath.Abs(f.New)
	if err != nil {
		return nil, err
	}
	args := []string{"-update", content, p}
	if old.UnixMode != 0 { // Rock Ridge's: the new file's on disk otherwise
		args = append(args, "-chmod", "0"+strconv.FormatUint(uint64(old.UnixMode&0o7777), 8), p, "--",
			"-chown", strconv.FormatUint(uint64(old.UID), 10), p, "--",
			"-chgrp", strconv.FormatUint(uint64(old.GID), 10), p, "--")
	}
	for _, d := range []struct {
		kind string
		t    time.Time
	}{{"m-c", old.ModTime}, {"a-c", old.ATime}, {"c", old.CTime}} {
		if !d.t.IsZero() {
			args = append(args, "-alter_date", d.kind, "="+strconv.FormatInt(d.t.Unix(), 10), p, "--")
		}
	}
	return args, nil
}

// volumeIDs are the xorriso commands that keep the input's identifiers:
// loading an image keeps the volume id, but xorriso writes its own
// preparer id. It upper-cases the application id all the same, which
// build fixes after (iso9660.CopyIDs).
func volumeIDs(im *iso9660.Image) []string {
	ids := im.IDs
	return []string{"-volid", im.VolumeID, "-system_id", ids.System, "-volset_id", ids.VolumeSet,
		"-publisher", ids.Publisher, "-preparer_id", ids.Preparer, "-application_id", ids.Application,
		"-copyright_file", ids.CopyrightFile, "-abstract_file", ids.AbstractFile, "-biblio_file", ids.BiblioFile}
}

// volumeDates are the xorriso commands that keep the input's volume
// dates; the "uuid" date (creation and modification, GRUB's ISO UUID,
// the boot catalogue's date) when they are the same, and the time xorriso
// takes as "now" for anything else it dates.
func volumeDates(im *iso9660.Image) []string {
	var args []string
	c, m := im.Created, im.Modified
	switch {
	case !c.IsZero() && c.Equal(m):
		args = append(args, "-volume_date", "uuid", ecma(m))
	default:
		if !c.IsZero() {
			args = append(args, "-volume_date", "c", ecma(c))
		}
		if !m.IsZero() {
			args = append(args, "-volume_date", "m", ecma(m))
		}
	}
	if !im.Expires.IsZero() {
		args = append(args, "-volume_date", "x", ecma(im.Expires))
	}
	if !im.Effective.IsZero() {
		args = append(args, "-volume_date", "f", ecma(im.Effective))
	}
	now := m
	if now.IsZero() {
		now = c
	}
	if !now.IsZero() {
		args = append(args, "-iso_nowtime", "="+strconv.FormatInt(now.Unix(), 10))
	}
	return args
}

func envWithout(name string) []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}

// lastLines is xorriso's problems (SORRY, FAILURE, FATAL) and its last n
// lines.
func lastLines(s string, n int) string {
	var problems []string
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for _, l := range lines {
		if strings.Contains(l, ": SORRY :") || strings.Contains(l, ": FAILURE :") || strings.Contains(l, ": FATAL :") {
			problems = append(problems, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(append(problems, lines...), "\n")
}

// verify checks the image xorriso wrote against the input's: the volume
// id and dates, the identifiers of the primary and the Joliet descriptor, the boot catalogue's entries (platform, emulation, load
// size, the same file, the same bytes but for isolinux's boot info table),
// an MBR where the input has one, the boot configuration naming the same
// initrd, and that initrd's bytes being the new ones.
func (x *isoOutput) verify() error {
	f, err := os.Open(x.out)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	out, err := iso9660.Open(f, fi.Size())
	if err != nil {
		return err
	}
	in := x.from.ISO.Image
	if out.IDs != in.IDs {
		return fmt.Errorf("identifiers %+v; the input's are %+v", out.IDs, in.IDs)
	}
	if out.HasJoliet != in.HasJoliet || out.JolietVolumeID != in.JolietVolumeID || out.JolietIDs != in.JolietIDs {
		return fmt.Errorf("the Joliet descriptor: volume %q, identifiers %+v; the input's are %q, %+v", out.JolietVolumeID, out.JolietIDs, in.JolietVolumeID, in.JolietIDs)
	}
	if out.VolumeID != in.VolumeID || !out.Created.Equal(in.Created) || !out.Modified.Equal(in.Modified) {
		return fmt.Errorf("volume %q of %v, %v; the input's is %q of %v, %v", out.VolumeID, out.Created, out.Modified, in.VolumeID, in.Created, in.Modified)
	}
	if err := sameBoot(in, out); err != nil {
		return err
	}
	if err := sameMBR(in, out); err != nil {
		return err
	}
	boot, err := out.ReadBoot()
	if err != nil {
		return err
	}
	if len(boot.Initrds) != 1 || strings.Join(boot.Initrds[0].Paths(), " ") != strings.Join(x.from.ISO.Initrd.Paths(), " ") {
		return fmt.Errorf("its boot configuration names other initrds: %+v", boot.Initrds)
	}
	return x.sameInitrd(out, boot.Initrds[0])
}

// sameInitrd checks each file of the initrd in out: the one written where
// it changed, the input's bytes where it did not.
func (x *isoOutput) sameInitrd(out *iso9660.Image, ird iso9660.Initrd) error {
	written := map[string]string{}
	for _, f := range x.files {
		written[f.Path] = f.New
	}
	for i, f := range ird.Files {
		var err error
		if p := written[f.Path]; p != "" {
			err = sameContent(out.Section(f), p)
		} else {
			err = sameBytes(out.Section(f), x.from.ISO.Image.Section(x.from.ISO.Initrd.Files[i]))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", names.Quote(f.Path), err)
		}
	}
	return nil
}

// sameBoot compares the El Torito entries and images of in and out.
func sameBoot(in, out *iso9660.Image) error {
	a, err := in.BootImages()
	if err != nil {
		return err
	}
	b, err := out.BootImages()
	if err != nil {
		return err
	}
	if len(a) != len(b) {
		return fmt.Errorf("%d boot images, the input has %d", len(b), len(a))
	}
	ia, ib := filesByOffset(in), filesByOffset(out)
	for i := range a {
		x, y := a[i], b[i]
		if x.Platform != y.Platform || x.Bootable != y.Bootable || x.Emulation != y.Emulation || x.Sectors != y.Sectors {
			return fmt.Errorf("boot image %d: %+v, the input's is %+v", i+1, y, x)
		}
		fa, fb := ia[x.Offset()], ib[y.Offset()]
		if fa.Path != fb.Path {
			return fmt.Errorf("boot image %d is %s, the input's %s", i+1, names.Quote(fb.Path), names.Quote(fa.Path))
		}
		if fa.Path == "" {
			continue // not a file: the catalogue's entries were compared
		}
		da, err := io.ReadAll(in.Section(fa))
		if err != nil {
			return err
		}
		db, err := io.ReadAll(out.Section(fb))
		if err != nil {
			return err
		}
		// isolinux's boot info table (bytes 8 to 64) holds the image's
		// new position.
		if !iso9660.IsFAT(in, x.Offset()) && len(da) >= 64 && len(db) == len(da) {
			copy(db[8:64], da[8:64])
		}
		if !bytes.Equal(da, db) {
			return fmt.Errorf("boot image %s: its bytes differ from the input's", names.Quote(fa.Path))
		}
	}
	return nil
}

func filesByOffset(im *iso9660.Image) map[int64]iso9660.File {
	m := map[int64]iso9660.File{}
	im.Walk(func(f iso9660.File) error {
		if f.Mode.IsRegular() && f.Size > 0 {
			m[f.Offset] = f
		}
		return nil
	})
	return m
}

// sameMBR: an input with an MBR (isohybrid) gives an output with one, of
// the same partition types.
func sameMBR(in, out *iso9660.Image) error {
	a, b := make([]byte, 512), make([]byte, 512)
	if _, err := in.ReadAt(a, 0); err != nil {
		return err
	}
	if _, err := out.ReadAt(b, 0); err != nil {
		return err
	}
	if a[510] != 0x55 || a[511] != 0xAA {
		return nil
	}
	if b[510] != 0x55 || b[511] != 0xAA {
		return errors.New("the input's MBR (isohybrid) is not there")
	}
	for i := 0; i < 4; i++ {
		if ta, tb := a[446+16*i+4], b[446+16*i+4]; ta != tb {
			return fmt.Errorf("MBR partition %d has type %#x, the input's %#x", i+1, tb, ta)
		}
	}
	return nil
}

func sameContent(r io.Reader, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return sameBytes(r, f)
}

// sameBytes compares two readers by their sha256.
func sameBytes(a, b io.Reader) error {
	da, err := digest.Reader(a)
	if err != nil {
		return err
	}
	db, err := digest.Reader(b)
	if err != nil {
		return err
	}
	if da != db {
		return errors.New("its initrd is not the one written")
	}
	return nil
}
