// Package iso9660 reads what rootfs-trim needs of an ISO 9660 image: the
// primary volume descriptor (volume id, dates), the directory tree with
// its Rock Ridge names, modes and symlinks (or Joliet names where there is
// no Rock Ridge), each file's extent, and the El Torito boot catalogue.
//
// It only reads, through an io.ReaderAt, and trusts nothing in the image:
// an extent that ends beyond the image, a directory met twice (a loop), a
// record that overruns its sector or a continuation area out of bounds is
// an error naming the path, never a panic or an endless walk. Nor does
// it judge a file other than the one a bootloader loads: an image GRUB or
// isolinux would read otherwise (a name twice in a directory, trees that
// name different files, two primary descriptors) is refused (views.go).
//
// Facts from ECMA-119 (4th edition), IEEE P1282 (Rock Ridge, RRIP 1.12)
// with IEEE P1281 (SUSP), the Joliet specification and the El Torito
// specification 1.0; checked against xorriso's and genisoimage's output.
package iso9660

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// SectorSize is the logical block size of every image this package reads.
const SectorSize = 2048

// Limits on what a hostile image can make a walk cost.
const (
	maxDepth   = 64
	maxEntries = 1 << 20
	maxCE      = 64 // continuation areas followed per record
	// maxDirSize bounds one directory: real ones are KiB (a record is
	// 34 bytes and its name, its Rock Ridge entries 100 to 250 more).
	maxDirSize = 4 << 20
	// maxDirBytes bounds the directory bytes one walk reads, however
	// many directories the image has.
	maxDirBytes = 64 << 20
)

// File is one file or directory of the image.
type File struct {
	// Path is absolute, "/" for the root, with Rock Ridge (or Joliet) names.
	Path string
	// Offset and Size place the file's bytes in the image.
	Offset, Size int64
	Mode         fs.FileMode
	// UnixMode is Rock Ridge's st_mode (PX); 0 without Rock Ridge.
	UnixMode uint32
	UID, GID uint32
	// Link is a symlink's target (Rock Ridge SL).
	Link string
	// ModTime is Rock Ridge's TF modification time, else the record's date.
	ModTime time.Time
	// ATime and CTime are Rock Ridge's TF access and attribute change
	// times; zero where it has none.
	ATime, CTime time.Time
}

// IsDir reports whether f is a directory.
func (f File) IsDir() bool { return f.Mode.IsDir() }

// Image is an opened ISO 9660 image.
type Image struct {
	r    io.ReaderAt
	size int64

	// VolumeID is the primary volume descriptor's, trailing spaces cut.
	VolumeID string
	// IDs are its other identifiers (ECMA-119 8.4), trailing spaces cut.
	IDs IDs
	// Created, Modified, Expires and Effective are the volume's dates
	// (ECMA-119 8.4.26.1); zero when unset.
	Created, Modified, Expires, Effective time.Time
	// Joliet names the supplementary tree, if there is one.
	HasJoliet bool
	// JolietVolumeID and JolietIDs are the Joliet descriptor's
	// identifiers (UCS-2, big-endian, decoded; trailing spaces cut), as
	// VolumeID and IDs are the primary's.
	JolietVolumeID string
	JolietIDs      IDs
	// BootCatalog is the El Torito catalogue's sector, 0 for none.
	BootCatalog uint32

	root    record
	rr      bool // Rock Ridge on the primary tree
	joliet  *record
	entries int
	// dirBytes counts the directory bytes read by the walk under way.
	dirBytes int64
}

// IDs are the primary volume descriptor's identifiers besides the
// volume's.
type IDs struct {
	System, VolumeSet, Publisher, Preparer, Application string
	CopyrightFile, AbstractFile, BiblioFile             string
}

type record struct {
	extent uint32
	size   uint32
	flags  byte
	name   []byte
	date   time.Time
	su     []byte // System Use area
}

// Error is an image the package refuses: where, and why.
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	// The image chose the names on the path: a newline or a workflow
	// command in one must not reach a log as it is (names.Quote).
	return names.Quote(e.Path) + ": " + e.Msg
}

func errorf(p, format string, args ...any) error {
	return &Error{Path: p, Msg: fmt.Sprintf(format, args...)}
}

// Sniff reports whether the bytes at r look like an ISO 9660 image: a
// volume descriptor "CD001" at sector 16.
func Sniff(r io.ReaderAt) bool {
	var b [6]byte
	if _, err := r.ReadAt(b[:], 16*SectorSize); err != nil {
		return false
	}
	return string(b[1:6]) == "CD001"
}

// Open reads the volume descriptors of the image of size bytes at r.
//
// A set with two primary descriptors, or two Joliet ones, is refused:
// this package reads the first, GRUB (grub_iso9660_mount, which copies
// each one it meets) the last. So is a Joliet descriptor before the
// primary: grub_iso9660_mount keeps its Joliet flag when the primary
// overwrites it, and reads the primary's names as UCS-2.
func Open(r io.ReaderAt, size int64) (*Image, error) {
	im := &Image{r: r, size: size}
	var havePVD bool
	sec := make([]byte, SectorSize)
	for lba := int64(16); ; lba++ {
		if (lba+1)*SectorSize > size || lba > 16+256 {
			return nil, errorf("", "no volume descriptor set terminator")
		}
		if _, err := r.ReadAt(sec, lba*SectorSize); err != nil {
			return nil, fmt.Errorf("reading volume descriptor %d: %w", lba, err)
		}
		if string(sec[1:6]) != "CD001" {
			return nil, errorf("", "sector %d: not a volume descriptor", lba)
		}
		switch sec[0] {
		case 0: // boot record
			if bytes.HasPrefix(sec[7:39], []byte("EL TORITO SPECIFICATION")) {
				im.BootCatalog = binary.LittleEndian.Uint32(sec[71:75])
			}
		case 1:
			if havePVD {
				return nil, errorf("", "sector %d: a second primary volume descriptor (GRUB reads the last, this reader the first)", lba)
			}
			havePVD = true
			if err := im.primary(sec); err != nil {
				return nil, err
			}
		case 2:
			// Joliet: a supplementary descriptor with a UCS-2 escape.
			if !isJoliet(sec) {
				break
			}
			if im.joliet != nil {
				return nil, errorf("", "sector %d: a second Joliet volume descriptor (GRUB reads the last, this reader the first)", lba)
			}
			if !havePVD {
				return nil, errorf("", "sector %d: a Joliet volume descriptor before the primary one", lba)
			}
			root, err := parseRecord(sec[156:190])
			if err != nil {
				return nil, errorf("", "joliet root record: %v", err)
			}
			im.joliet, im.HasJoliet = &root, true
			im.JolietVolumeID, im.JolietIDs = descriptorIDs(sec, ucs2)
		case 255:
			if !havePVD {
				return nil, errorf("", "no primary volume descriptor")
			}
			return im, im.detectRR()
		}
	}
}

// isJoliet reports whether the supplementary descriptor sec has one of
// Joliet's UCS-2 escapes (levels 1 to 3), as grub_iso9660_mount checks.
func isJoliet(sec []byte) bool {
	esc := sec[88:91]
	return esc[0] == '%' && esc[1] == '/' && (esc[2] == '@' || esc[2] == 'C' || esc[2] == 'E')
}

func (im *Image) primary(sec []byte) error {
	if bs := binary.LittleEndian.Uint16(sec[128:130]); bs != SectorSize {
		return errorf("", "logical block size %d, want %d", bs, SectorSize)
	}
	im.VolumeID, im.IDs = descriptorIDs(sec, func(b []byte) string { return string(b) })
	im.Created = volumeDate(sec[813:830])
	im.Modified = volumeDate(sec[830:847])
	im.Expires = volumeDate(sec[847:864])
	im.Effective = volumeDate(sec[864:881])
	root, err := parseRecord(sec[156:190])
	if err != nil {
		return errorf("", "root directory record: %v", err)
	}
	im.root = root
	return nil
}

// descriptorIDs are a volume descriptor's identifiers (ECMA-119 8.4.5
// to 8.4.11, 8.4.20 to 8.4.22; a supplementary descriptor's at the same
// places), each decoded and its trailing spaces cut.
func descriptorIDs(sec []byte, decode func([]byte) string) (string, IDs) {
	id := func(a, b int) string { return strings.TrimRight(decode(sec[a:b]), " \x00") }
	return id(40, 72), IDs{System: id(8, 40), VolumeSet: id(190, 318), Publisher: id(318, 446), Preparer: id(446, 574),
		Application: id(574, 702), CopyrightFile: id(702, 739), AbstractFile: id(739, 776), BiblioFile: id(776, 813)}
}

// volumeDate parses ECMA-119 8.4.26.1: 16 ASCII digits and an offset from
// GMT in 15-minute steps; all zeros is "not specified".
func volumeDate(b []byte) time.Time {
	var n [7]int
	s := string(b[:16])
	for i, w := range []int{4, 2, 2, 2, 2, 2, 2} {
		for _, c := range s[:w] {
			if c < '0' || c > '9' {
				return time.Time{}
			}
			n[i] = n[i]*10 + int(c-'0')
		}
		s = s[w:]
	}
	if n[0] == 0 {
		return time.Time{}
	}
	loc := time.FixedZone("", int(int8(b[16]))*15*60)
	return time.Date(n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], n[6]*1e7, loc)
}

// recordDate parses ECMA-119 9.1.5: seven bytes.
func recordDate(b []byte) time.Time {
	if b[0] == 0 && b[1] == 0 && b[2] == 0 {
		return time.Time{}
	}
	loc := time.FixedZone("", int(int8(b[6]))*15*60)
	return time.Date(1900+int(b[0]), time.Month(b[1]), int(b[2]), int(b[3]), int(b[4]), int(b[5]), 0, loc)
}

func parseRecord(b []byte) (record, error) {
	if len(b) < 34 || int(b[0]) > len(b) || b[0] < 34 {
		return record{}, errors.New("short directory record")
	}
	b = b[:b[0]]
	nl := int(b[32])
	if 33+nl > len(b) {
		return record{}, errors.New("name overruns its record")
	}
	r := record{
		extent: binary.LittleEndian.Uint32(b[2:6]),
		size:   binary.LittleEndian.Uint32(b[10:14]),
		date:   recordDate(b[18:25]),
		flags:  b[25],
		name:   b[33 : 33+nl],
	}
	su := 33 + nl
	if nl%2 == 0 {
		su++ // padding byte after an even-length name
	}
	if su < len(b) {
		r.su = b[su:]
	}
	return r, nil
}

func (r record) isDir() bool { return r.flags&0x02 != 0 }

// detectRR looks for SUSP's SP entry in the root's "." record (P1281
// 5.3) and Rock Ridge's ER entry among its System Use entries. GRUB
// (set_rockridge) reads Rock Ridge names where the first entry is SP and
// an ER follows, any ER; isolinux (susp_rr_check_signatures) where SP is
// first, or 14 bytes on, and an ER names RRIP_1991A, IEEE_P1282 or
// IEEE_1282; it takes the skip length from another byte than SP's. Where
// they would disagree the image is refused: SP 14 bytes on, a skip
// length, an SP without the ER isolinux wants. A Joliet root with SUSP
// is refused too: GRUB would read Rock Ridge names in that tree.
func (im *Image) detectRR() error {
	if im.joliet != nil {
		jsu, err := im.rootSU("/", *im.joliet)
		if err != nil {
			return err
		}
		if jsu != nil {
			return errorf("/", "the Joliet tree's root has SUSP entries: GRUB would read Rock Ridge names in that tree")
		}
	}
	su, err := im.rootSU("/", im.root)
	if err != nil || su == nil {
		return err
	}
	if su[6] != 0 {
		return errorf("/", "SUSP skip length %d: isolinux and GRUB read it differently", su[6])
	}
	im.rr = true // for systemUse
	s, err := im.systemUse("/", record{name: []byte{0}, su: su})
	if err != nil {
		return err
	}
	rrip := false
	for _, id := range s.er {
		rrip = rrip || id == "RRIP_1991A" || id == "IEEE_P1282" || id == "IEEE_1282"
	}
	if !rrip {
		return errorf("/", "SUSP without Rock Ridge's ER entry (ER %q): GRUB and isolinux would read other names", s.er)
	}
	return nil
}

// rootSU returns the System Use area of the "." record of the directory
// at root when it starts with SP, nil when there is none; SP 14 bytes
// into it is refused.
func (im *Image) rootSU(p string, root record) ([]byte, error) {
	recs, err := im.readDir(p, root)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, errorf(p, "root directory has no \".\" record")
	}
	su := recs[0].su
	isSP := func(b []byte) bool {
		return len(b) >= 7 && b[0] == 'S' && b[1] == 'P' && b[2] == 7 && b[3] == 1 && b[4] == 0xBE && b[5] == 0xEF
	}
	switch {
	case isSP(su):
		return su, nil
	case len(su) > 14 && isSP(su[14:]):
		return nil, errorf(p, "SUSP's SP entry 14 bytes into the System Use area: isolinux reads Rock Ridge there, GRUB does not")
	case len(su) >= 2 && su[0] == 'S' && su[1] == 'P':
		return nil, errorf(p, "a malformed SUSP SP entry")
	}
	return nil, nil
}

// Joliet reports whether the names come from the Joliet tree (no Rock
// Ridge, and a Joliet descriptor).
func (im *Image) Joliet() bool { return !im.rr && im.joliet != nil }

// readDir returns the records of directory d, read sector by sector and
// bounded before anything is read: a record's size says up to 4 GiB, and
// the image may be a sparse file.
func (im *Image) readDir(p string, d record) ([]record, error) {
	off := int64(d.extent) * SectorSize
	if err := im.inImage(p, off, int64(d.size)); err != nil {
		return nil, err
	}
	if d.size > maxDirSize {
		return nil, errorf(p, "directory of %d bytes, more than the %d this reader takes", d.size, maxDirSize)
	}
	if im.dirBytes += int64(d.size); im.dirBytes > maxDirBytes {
		return nil, errorf(p, "more than %d bytes of directories", maxDirBytes)
	}
	var out []record
	sec := make([]byte, SectorSize)
	for start := int64(0); start < int64(d.size); start += SectorSize {
		buf := sec[:min(SectorSize, int64(d.size)-start)]
		if _, err := im.r.ReadAt(buf, off+start); err != nil {
			return nil, fmt.Errorf("%s: reading directory: %w", names.Quote(p), err)
		}
		for i := 0; i < len(buf); {
			n := int(buf[i])
			if n == 0 {
				break // the rest of the sector is padding: records do not cross sectors
			}
			if i+n > len(buf) {
				return nil, errorf(p, "directory record at byte %d overruns its sector", start+int64(i))
			}
			r, err := parseRecord(buf[i : i+n])
			if err != nil {
				return nil, errorf(p, "directory record at byte %d: %v", start+int64(i), err)
			}
			if r.flags&0x80 != 0 {
				return nil, errorf(p, "multi-extent file: not supported")
			}
			// The sector buffer is read again: keep copies.
			r.name, r.su = bytes.Clone(r.name), bytes.Clone(r.su)
			out = append(out, r)
			i += n
		}
	}
	return out, nil
}

func (im *Image) inImage(p string, off, size int64) error {
	if off < 0 || size < 0 || off > im.size || size > im.size-off {
		return errorf(p, "extent (bytes %d to %d) beyond the image's %d bytes", off, off+size, im.size)
	}
	return nil
}

// Walk calls fn for every file of the image, parents before children, in
// the order of the directory records (which ECMA-119 sorts by name).
func (im *Image) Walk(fn func(File) error) error {
	_, err := im.walk(fn)
	return err
}

// walk is Walk, returning the tree as this reader's view (checkViews).
func (im *Image) walk(fn func(File) error) (viewIndex, error) {
	im.entries, im.dirBytes = 0, 0
	root := im.root
	if im.Joliet() {
		root = *im.joliet
	}
	var su *susp
	if im.rr {
		// The root's mode and times are in its "." record's System Use.
		recs, err := im.readDir("/", root)
		if err != nil {
			return nil, err
		}
		s, err := im.systemUse("/", recs[0])
		if err != nil {
			return nil, err
		}
		su = &s
	}
	if err := fn(im.file("/", root, su)); err != nil {
		return nil, err
	}
	x := viewIndex{}
	return x, im.walkDir("/", root, map[uint32]bool{root.extent: true}, 0, func(dir string, r record, names dirNames) (string, *record, error) {
		x[dir] = names
		return im.visit(dir, r, names, fn)
	})
}

// walkDir walks the tree under d, parents before children: visit is
// called for each record of each directory but "." and ".." and returns
// the directory to walk next, if any; a directory met twice is a loop.
func (im *Image) walkDir(dir string, d record, seen map[uint32]bool, depth int, visit func(dir string, r record, names dirNames) (string, *record, error)) error {
	if depth >= maxDepth {
		return errorf(dir, "directories nested deeper than %d", maxDepth)
	}
	recs, err := im.readDir(dir, d)
	if err != nil {
		return err
	}
	names := dirNames{}
	for i, r := range recs {
		if i < 2 && len(r.name) == 1 && (r.name[0] == 0 || r.name[0] == 1) {
			continue // "." and ".."
		}
		if im.entries++; im.entries > maxEntries {
			return errorf(dir, "more than %d files", maxEntries)
		}
		p, sub, err := visit(dir, r, names)
		if err != nil {
			return err
		}
		if sub == nil {
			continue
		}
		if seen[sub.extent] {
			return errorf(p, "directory loop: its extent (sector %d) is also an ancestor's or another directory's", sub.extent)
		}
		seen[sub.extent] = true
		if err := im.walkDir(p, *sub, seen, depth+1, visit); err != nil {
			return err
		}
	}
	return nil
}

// visit checks one record of dir as this reader reads it and hands its
// file to fn.
func (im *Image) visit(dir string, r record, names dirNames, fn func(File) error) (string, *record, error) {
	su, err := im.systemUse(dir, r)
	if err != nil {
		return "", nil, err
	}
	if su.nmDot {
		return "", nil, errorf(dir, "%q: a Rock Ridge NM entry naming \".\" or \"..\"", r.name)
	}
	// isolinux (susp_rr_get_nm) drops a name that long for the ISO
	// 9660 one; GRUB keeps it.
	if len(su.name) >= 256 {
		return "", nil, errorf(dir, "%q: a Rock Ridge name of %d bytes, more than 255", r.name, len(su.name))
	}
	if su.relocated {
		return "", nil, nil // reached through its CL entry instead
	}
	if su.child != 0 {
		// A relocated directory (RRIP CL): its size is its "." record's.
		recs, err := im.readDir(dir, record{extent: su.child, size: SectorSize, flags: 0x02})
		if err != nil {
			return "", nil, err
		}
		if len(recs) == 0 {
			return "", nil, errorf(dir, "relocated directory at sector %d is empty", su.child)
		}
		r.extent, r.flags, r.size = su.child, r.flags|0x02, recs[0].size
	}
	name := im.name(r, su)
	if !goodName(name) {
		return "", nil, errorf(dir, "bad file name %q", name)
	}
	// GRUB takes a directory's type from PX (susp_iterate_dir),
	// isolinux and this reader from the record's flags.
	if su.hasMode && (su.mode&0o170000 == 0o040000) != r.isDir() {
		return "", nil, errorf(dir, "%q: Rock Ridge's mode %o and the record's flags %#x disagree on whether it is a directory", name, su.mode, r.flags)
	}
	p := path.Join(dir, name)
	f := im.file(p, r, &su)
	// Lookup's comparison: exact with Rock Ridge, else ignoring case.
	e := viewEntry{name: name, fold: !im.rr, extent: uint32(f.Offset / SectorSize), size: uint32(f.Size), dir: f.IsDir(), link: f.Link != ""}
	if other, clash := names.add(e); clash {
		return "", nil, errTwice(dir, name, other)
	}
	if !r.isDir() {
		if err := im.inImage(p, f.Offset, f.Size); err != nil {
			return "", nil, err
		}
	}
	if err := fn(f); err != nil {
		return "", nil, err
	}
	if r.isDir() && f.Link == "" {
		return p, &r, nil
	}
	return "", nil, nil
}

func (im *Image) name(r record, su susp) string {
	if im.rr && su.hasName {
		return su.name
	}
	if im.Joliet() {
		return cutVersion(ucs2(r.name))
	}
	return cutVersion(string(r.name))
}

// ucs2 decodes Joliet's big-endian UCS-2 (an odd last byte dropped).
func ucs2(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.BigEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// cutVersion removes ECMA-119's ";1" and the dot of a name with no
// extension.
func cutVersion(n string) string {
	if i := strings.LastIndexByte(n, ';'); i >= 0 {
		n = n[:i]
	}
	return strings.TrimSuffix(n, ".")
}

func (im *Image) file(p string, r record, su *susp) File {
	f := File{Path: p, Offset: int64(r.extent) * SectorSize, Size: int64(r.size), ModTime: r.date}
	if r.isDir() {
		f.Mode = fs.ModeDir | 0o555
		f.Size = 0
	} else {
		f.Mode = 0o444
	}
	if su == nil {
		return f
	}
	if su.hasMode {
		f.Mode, f.UnixMode = unixMode(su.mode), su.mode
		f.UID, f.GID = su.uid, su.gid
	}
	if su.hasLink {
		f.Link = su.link
		f.Mode = fs.ModeSymlink | f.Mode.Perm()
		f.Size = 0
	}
	if !su.mtime.IsZero() {
		f.ModTime = su.mtime
	}
	f.ATime, f.CTime = su.atime, su.ctime
	return f
}

// unixMode is Rock Ridge's st_mode as fs.FileMode says it: archive/tar's
// FileInfo reads a header's st_mode bits (type, permissions, setuid,
// setgid, sticky) so; bits above the type are not st_mode's.
func unixMode(m uint32) fs.FileMode {
	return (&tar.Header{Mode: int64(m & 0o177777)}).FileInfo().Mode()
}

// Lookup finds the file at the absolute path p (names compared exactly,
// as Rock Ridge records them; without Rock Ridge, ignoring ASCII case).
func (im *Image) Lookup(p string) (File, error) {
	p = path.Clean("/" + p)
	var found *File
	errStop := errors.New("found")
	err := im.Walk(func(f File) error {
		if f.Path == p || (!im.rr && foldASCII(f.Path) == foldASCII(p)) {
			found = &f
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return File{}, err
	}
	if found == nil {
		return File{}, fs.ErrNotExist
	}
	return *found, nil
}

// Section returns a reader of f's bytes.
func (im *Image) Section(f File) *io.SectionReader {
	return io.NewSectionReader(im.r, f.Offset, f.Size)
}

// ReadFile reads a small file whole (a boot configuration); max bounds it.
func (im *Image) ReadFile(f File, max int64) ([]byte, error) {
	if f.Size > max {
		return nil, errorf(f.Path, "%d bytes, more than the %d a boot configuration may have", f.Size, max)
	}
	b := make([]byte, f.Size)
	if _, err := im.r.ReadAt(b, f.Offset); err != nil {
		return nil, fmt.Errorf("%s: %w", names.Quote(f.Path), err)
	}
	return b, nil
}

// ReadAt reads the image itself.
func (im *Image) ReadAt(p []byte, off int64) (int, error) { return im.r.ReadAt(p, off) }

// idFields are the byte ranges of the primary volume descriptor's
// identifiers (ECMA-119 8.4.5 to 8.4.11, 8.4.20 to 8.4.22): system,
// volume, then volume set to bibliographic file.
var idFields = [][2]int{{8, 40}, {40, 72}, {190, 813}}

// CopyIDs writes src's primary volume descriptor identifiers, byte for
// byte, over dst's: a writer that upper-cases what another wrote in lower
// case (xorriso's application id) still keeps the input's. Both must
// have their primary descriptor at sector 16, the first of the set.
func CopyIDs(rw interface {
	io.ReaderAt
	io.WriterAt
}, src io.ReaderAt) error {
	var a, b [SectorSize]byte
	if _, err := src.ReadAt(a[:], 16*SectorSize); err != nil {
		return err
	}
	if _, err := rw.ReadAt(b[:], 16*SectorSize); err != nil {
		return err
	}
	if a[0] != 1 || b[0] != 1 || string(a[1:6]) != "CD001" || string(b[1:6]) != "CD001" {
		return errors.New("no primary volume descriptor at sector 16")
	}
	for _, r := range idFields {
		copy(b[r[0]:r[1]], a[r[0]:r[1]])
	}
	_, err := rw.WriteAt(b[:], 16*SectorSize)
	return err
}
