package archive

import (
	"archive/tar"
	"fmt"
	"io"
	"maps"
	"time"

	"golang.org/x/sys/unix"
)

// Type is what an entry is. The values are stable: they appear in JSON.
type Type uint8

const (
	TypeRegular Type = iota + 1
	TypeDir
	TypeSymlink
	// TypeHardlink is a tar hard link: a name for the earlier entry named by
	// Linkname. cpio has no such type; there a hard link is a regular file
	// whose (dev, inode) it shares with others and whose Nlink is >= 2.
	TypeHardlink
	TypeChar
	TypeBlock
	TypeFifo
	TypeSocket
	// TypeTrailer is the TRAILER!!! record that ends a cpio archive member.
	// It is surfaced as an entry, not swallowed, because the kernel accepts
	// several concatenated members and a lossless cpio rewrite must put each
	// boundary (and the padding after it) back where it was. Writers for
	// other formats ignore it.
	TypeTrailer
)

// typeInfo is each Type's name, its `ls -l` letter, its stat(2) file type
// bits (a tar hard link is a name of a regular file), its tar type flag
// (none for what tar cannot hold), and whether it can be a name of a
// hard-linked file: directories and symlinks never are (the kernel's
// do_name and do_symlink create them afresh).
type typeRow struct {
	name   string
	letter byte
	mode   uint32
	tar    byte
	links  bool
}

var typeInfo = [...]typeRow{
	TypeRegular:  {"file", '-', unix.S_IFREG, tar.TypeReg, true},
	TypeDir:      {"dir", 'd', unix.S_IFDIR, tar.TypeDir, false},
	TypeSymlink:  {"symlink", 'l', unix.S_IFLNK, tar.TypeSymlink, false},
	TypeHardlink: {"hardlink", 'h', unix.S_IFREG, tar.TypeLink, false},
	TypeChar:     {"char", 'c', unix.S_IFCHR, tar.TypeChar, true},
	TypeBlock:    {"block", 'b', unix.S_IFBLK, tar.TypeBlock, true},
	TypeFifo:     {"fifo", 'p', unix.S_IFIFO, tar.TypeFifo, true},
	TypeSocket:   {"socket", 's', unix.S_IFSOCK, 0, true},
	TypeTrailer:  {"trailer", 'T', 0, 0, false},
}

// info is t's row of typeInfo; the zero row for a Type it has none for.
func (t Type) info() typeRow {
	if int(t) < len(typeInfo) {
		return typeInfo[t]
	}
	return typeRow{}
}

// modeTypes is the Type of each file type, by st_mode>>12 (S_IFMT), which
// is also d_type's value for it (DT_REG ...); 0 for none.
var modeTypes = [16]Type{
	unix.S_IFREG >> 12:  TypeRegular,
	unix.S_IFDIR >> 12:  TypeDir,
	unix.S_IFLNK >> 12:  TypeSymlink,
	unix.S_IFCHR >> 12:  TypeChar,
	unix.S_IFBLK >> 12:  TypeBlock,
	unix.S_IFIFO >> 12:  TypeFifo,
	unix.S_IFSOCK >> 12: TypeSocket,
}

func (t Type) String() string {
	if n := t.info().name; n != "" {
		return n
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// PermMask covers the permission bits plus setuid, setgid and sticky.
const PermMask = 0o7777

// Entry is one member of a rootfs archive with every field a rootfs entry
// can carry. Fields a format cannot express are zero when read from it.
type Entry struct {
	// Name is exactly as stored: ".", "etc" and "./etc" stay distinct so
	// an untouched entry is written back byte for byte. Use Clean to compare.
	Name string
	Type Type
	// Mode holds the permission bits with setuid, setgid and sticky
	// (Mode & PermMask); the file type lives in Type.
	Mode    uint32
	UID     int
	GID     int
	ModTime time.Time
	// Size is the number of data bytes that follow the header. For a cpio
	// hard-link member that does not carry the group's data it is 0.
	Size int64
	// Linkname is the target of a symlink, or for TypeHardlink the name of
	// the entry it links to.
	Linkname string

	// Inode and Nlink identify hard-link groups in cpio: members with
	// Nlink >= 2 and the same (DevMajor, DevMinor, Inode) are one file.
	Inode uint64
	Nlink uint32
	// DevMajor and DevMinor name the filesystem the entry came from.
	DevMajor, DevMinor uint32
	// RdevMajor and RdevMinor are the device a char or block node stands for.
	RdevMajor, RdevMinor uint32

	// Check is the cpio crc (070702) checksum as stored.
	Check uint32
	// Pad counts the zero bytes that followed a trailer before the next
	// member or the end of the input (GNU cpio pads to 512 bytes).
	Pad int64
	// Offset is the byte offset of the header in the uncompressed input,
	// for error messages; -1 when unknown (directory trees).
	Offset int64
	// Xattrs are the extended attributes, by full name
	// ("security.capability", "user.x"), values as stored (bytes): what
	// tar keeps in PAX SCHILY.xattr records and a tree on the inode. nil
	// when there are none, or the format has no room for them (cpio).
	// POSIX ACLs in text are not among them (tarACL).
	Xattrs map[string]string

	// Segment is the 1-based number of the initrd segment the entry came
	// from (pkg/container's segmented reader), 0 when the input is not
	// read as segments or the entry was made by apply.
	Segment int

	// Format holds what a same-format writer needs to reproduce the entry
	// exactly: for tar a *TarFormat (the header with its PAX records, user
	// and group names and header format; the PAX global header in effect;
	// whether it was sparse). It is never needed to interpret the entry.
	Format any
}

// HardLinkKey identifies the file a cpio hard-link member belongs to. The
// file type is part of it, as in the kernel's initramfs unpacker
// (init/initramfs.c, find_link compares the S_IFMT bits): a fifo that
// shares an inode number with a regular file is another file, never a
// link to it.
type HardLinkKey struct {
	DevMajor, DevMinor uint32
	Inode              uint64
	Type               Type
}

// LinkKey returns the hard-link group of e and whether e belongs to one, the
// way the kernel decides it: a type that links (typeInfo) with Nlink >= 2.
func (e *Entry) LinkKey() (HardLinkKey, bool) {
	if !e.Type.info().links || e.Nlink < 2 {
		return HardLinkKey{}, false
	}
	return HardLinkKey{e.DevMajor, e.DevMinor, e.Inode, e.Type}, true
}

// Clone returns a copy of e that shares nothing mutable with it.
func (e *Entry) Clone() *Entry {
	c := *e
	c.Xattrs = maps.Clone(e.Xattrs)
	return &c
}

// UnixMode returns the stat(2) st_mode of e: type bits and permission bits.
func (e *Entry) UnixMode() uint32 {
	return e.Type.info().mode | e.Mode&PermMask
}

// typeFromUnixMode maps the file type bits of a stat(2) st_mode (or of
// a cpio c_mode) to a Type.
func typeFromUnixMode(m uint32) (Type, bool) {
	t := modeTypes[m&unix.S_IFMT>>12]
	return t, t != 0
}

// Reader yields the entries of an archive in order. After Next returns an
// entry, Read returns its data; unread data is skipped by the next Next.
// Next returns io.EOF after the last entry.
type Reader interface {
	Next() (*Entry, error)
	io.Reader
}

// Writer writes entries in order. WriteHeader starts an entry; Write gives
// exactly Entry.Size bytes of data; Close ends the archive (for cpio, writes
// the trailer if the stream did not end on one) without closing the
// underlying writer.
type Writer interface {
	WriteHeader(*Entry) error
	io.Writer
	Close() error
}

// Discarder is a Writer that can say, after WriteHeader, that it wants
// none of the entry's data: an image writer given back an entry of its
// source as it was, whose layer it keeps as it is. Copy then does not
// read the data (the source skips it), so that a source that would have
// to read it again does not (ociimage.Reader).
type Discarder interface {
	Discards() bool
}

// Discards reports whether w is a Discarder that wants none of the data of
// the entry it was just given.
func Discards(w Writer) bool {
	d, ok := w.(Discarder)
	return ok && d.Discards()
}

// ModeString renders type and permissions as `ls -l` does, setuid, setgid
// and sticky included ("-rwsr-xr-x", "drwxrwxrwt").
func (e *Entry) ModeString() string {
	b := []byte("----------")
	if l := e.Type.info().letter; l != 0 {
		b[0] = l
	}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if e.Mode&(1<<uint(8-i)) != 0 {
			b[1+i] = rwx[i]
		}
	}
	special := func(bit uint32, pos int, set, unset byte) {
		if e.Mode&bit == 0 {
			return
		}
		if b[pos] == 'x' {
			b[pos] = set
		} else {
			b[pos] = unset
		}
	}
	special(0o4000, 3, 's', 'S')
	special(0o2000, 6, 's', 'S')
	special(0o1000, 9, 't', 'T')
	return string(b)
}
