package iso9660

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// FAT is a FAT12/16/32 filesystem inside the image: an El Torito EFI boot
// image (efiboot.img). Files are found by their short (8.3) name or their
// long name, and named by the short one. Facts from Microsoft's FAT specification
// (fatgen103).
type FAT struct {
	r          io.ReaderAt
	base, size int64 // where it is in the image, and its length

	bytesPerSec, secPerClus int64
	fatStart, dataStart     int64 // byte offsets from base
	rootStart, rootSize     int64 // FAT12/16's fixed root directory
	rootClus                uint32
	bits                    int // 12, 16 or 32
	clusters                uint32
}

// FATFile is a file found in a FAT image.
type FATFile struct {
	Path string // absolute, upper case as recorded
	Data []byte
}

// IsFAT reports whether the bytes at off look like a FAT boot sector:
// the signature 55 AA, a power-of-two sector size and a FAT type string.
// It is how an EFI boot image is recognised, whatever its platform id says.
func IsFAT(r io.ReaderAt, off int64) bool {
	var b [512]byte
	if _, err := r.ReadAt(b[:], off); err != nil {
		return false
	}
	if b[510] != 0x55 || b[511] != 0xAA {
		return false
	}
	bps := binary.LittleEndian.Uint16(b[11:13])
	if bps < 512 || bps > 4096 || bps&(bps-1) != 0 || b[13] == 0 || b[16] == 0 {
		return false
	}
	return strings.HasPrefix(string(b[54:62]), "FAT") || strings.HasPrefix(string(b[82:90]), "FAT")
}

// OpenFAT reads the FAT filesystem at off; limit is where the image ends.
func OpenFAT(r io.ReaderAt, off, limit int64) (*FAT, error) {
	var b [512]byte
	if _, err := r.ReadAt(b[:], off); err != nil {
		return nil, fmt.Errorf("FAT boot sector: %w", err)
	}
	le16 := func(i int) int64 { return int64(binary.LittleEndian.Uint16(b[i:])) }
	le32 := func(i int) int64 { return int64(binary.LittleEndian.Uint32(b[i:])) }
	f := &FAT{r: r, base: off, bytesPerSec: le16(11), secPerClus: int64(b[13])}
	if !IsFAT(r, off) {
		return nil, errors.New("not a FAT filesystem")
	}
	reserved, nfats, rootEnts := le16(14), int64(b[16]), le16(17)
	total := le16(19)
	if total == 0 {
		total = le32(32)
	}
	fatSz := le16(22)
	if fatSz == 0 {
		fatSz = le32(36)
		f.rootClus = uint32(le32(44))
	}
	f.size = total * f.bytesPerSec
	if f.size <= 0 || off+f.size > limit {
		return nil, fmt.Errorf("FAT filesystem of %d bytes at byte %d: beyond the image", f.size, off)
	}
	f.fatStart = reserved * f.bytesPerSec
	f.rootStart = f.fatStart + nfats*fatSz*f.bytesPerSec
	f.rootSize = rootEnts * 32
	rootSecs := (f.rootSize + f.bytesPerSec - 1) / f.bytesPerSec
	f.dataStart = f.rootStart + rootSecs*f.bytesPerSec
	dataSecs := total - f.dataStart/f.bytesPerSec
	if dataSecs < 0 {
		return nil, errors.New("FAT layout overruns its size")
	}
	f.clusters = uint32(dataSecs / f.secPerClus)
	switch {
	case f.clusters < 4085:
		f.bits = 12
	case f.clusters < 65525:
		f.bits = 16
	default:
		f.bits = 32
	}
	return f, nil
}

// FindFunc returns every file whose base name match accepts, with its
// content (at most max bytes in all: a FAT image of many large files
// is refused rather than held in memory).
func (f *FAT) FindFunc(match func(name string) bool, max int64) ([]FATFile, error) {
	var out []FATFile
	var total int64
	seen := map[uint32]bool{}
	budget := 1 << 16 // directory entries looked at, in all
	var walk func(dir string, data []byte, depth int) error
	walk = func(dir string, data []byte, depth int) error {
		if depth > 16 {
			return fmt.Errorf("FAT %s: nested too deep", names.Quote(dir))
		}
		var long longName
		for i := 0; i+32 <= len(data); i += 32 {
			e := data[i : i+32]
			if budget--; budget < 0 {
				return errors.New("FAT: too many directory entries")
			}
			if e[0] == 0 {
				break
			}
			attr := e[11]
			if e[0] != 0xE5 && attr&0x3F == 0x0F {
				long.add(e)
				continue
			}
			lname := long.name(e)
			long = longName{}
			if e[0] == 0xE5 || attr&0x08 != 0 || e[0] == '.' {
				continue // deleted, volume label, . and ..
			}
			name := shortName(e)
			p := path.Join(dir, name)
			clus := uint32(binary.LittleEndian.Uint16(e[26:]))
			if f.bits == 32 {
				clus |= uint32(binary.LittleEndian.Uint16(e[20:])) << 16
			}
			size := int64(binary.LittleEndian.Uint32(e[28:]))
			if attr&0x10 != 0 {
				if seen[clus] || clus < 2 {
					return fmt.Errorf("FAT %s: directory loop", names.Quote(p))
				}
				seen[clus] = true
				sub, err := f.chain(clus, 1<<20)
				if err != nil {
					return fmt.Errorf("FAT %s: %w", names.Quote(p), err)
				}
				if err := walk(p, sub, depth+1); err != nil {
					return err
				}
				continue
			}
			// The firmware finds a file by its long name where it has
			// one: a file is looked at if either name matches.
			if !match(name) && (lname == "" || !match(lname)) {
				continue
			}
			if total += size; size > max || total > max {
				return fmt.Errorf("FAT %s: %d bytes, more than %d with the files found before it", names.Quote(p), size, max)
			}
			b, err := f.chain(clus, size)
			if err != nil {
				return fmt.Errorf("FAT %s: %w", names.Quote(p), err)
			}
			if int64(len(b)) < size {
				return fmt.Errorf("FAT %s: cluster chain shorter than its %d bytes", names.Quote(p), size)
			}
			out = append(out, FATFile{Path: p, Data: b[:size]})
		}
		return nil
	}
	root, err := f.rootDir()
	if err != nil {
		return nil, err
	}
	return out, walk("/", root, 0)
}

func matchName(name string, names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(name, n) })
}

// longName gathers the long-name entries before a short one (fatgen103,
// "FAT Long Directory Entries"): each holds 13 UCS-2 characters, its
// sequence number (0x40 on the last) and the short name's checksum.
type longName struct {
	parts map[int][]uint16
	sum   byte
	n     int
}

func (l *longName) add(e []byte) {
	seq := int(e[0] & 0x1F)
	if e[0]&0x40 != 0 {
		*l = longName{parts: map[int][]uint16{}, sum: e[13], n: seq}
	}
	if l.parts == nil || e[13] != l.sum || seq < 1 || seq > l.n {
		*l = longName{}
		return
	}
	var u []uint16
	for _, r := range [][2]int{{1, 11}, {14, 26}, {28, 32}} {
		for i := r[0]; i < r[1]; i += 2 {
			u = append(u, binary.LittleEndian.Uint16(e[i:]))
		}
	}
	l.parts[seq] = u
}

// name is the long name of the short entry e, "" when there is none or
// its parts do not belong to e (an orphan, which readers ignore).
func (l *longName) name(e []byte) string {
	if len(l.parts) == 0 || len(l.parts) != l.n {
		return ""
	}
	var sum byte
	for _, c := range e[:11] {
		sum = (sum&1)<<7 + sum>>1 + c
	}
	if sum != l.sum {
		return ""
	}
	var u []uint16
	for i := 1; i <= l.n; i++ {
		u = append(u, l.parts[i]...)
	}
	if i := slices.Index(u, 0); i >= 0 {
		u = u[:i]
	}
	return string(utf16.Decode(u))
}

func shortName(e []byte) string {
	base := strings.TrimRight(string(e[0:8]), " ")
	ext := strings.TrimRight(string(e[8:11]), " ")
	if e[0] == 0x05 {
		base = "\xe5" + base[1:]
	}
	if ext == "" {
		return base
	}
	return base + "." + ext
}

func (f *FAT) rootDir() ([]byte, error) {
	if f.bits == 32 {
		return f.chain(f.rootClus, 1<<20)
	}
	b := make([]byte, f.rootSize)
	if f.rootStart+f.rootSize > f.size {
		return nil, errors.New("FAT root directory beyond the filesystem")
	}
	_, err := f.r.ReadAt(b, f.base+f.rootStart)
	return b, err
}

// chain reads the cluster chain from c, up to max bytes; a chain longer
// than the filesystem's clusters is a loop.
func (f *FAT) chain(c uint32, max int64) ([]byte, error) {
	cs := f.secPerClus * f.bytesPerSec
	var out []byte
	for n := uint32(0); c >= 2 && int64(len(out)) < max; n++ {
		if n > f.clusters || c-2 >= f.clusters {
			return nil, fmt.Errorf("bad cluster chain at cluster %d", c)
		}
		off := f.dataStart + int64(c-2)*cs
		if off+cs > f.size {
			return nil, fmt.Errorf("cluster %d beyond the filesystem", c)
		}
		b := make([]byte, cs)
		if _, err := f.r.ReadAt(b, f.base+off); err != nil {
			return nil, err
		}
		out = append(out, b...)
		next, err := f.next(c)
		if err != nil {
			return nil, err
		}
		c = next
	}
	return out, nil
}

// next is the FAT's entry for cluster c; 0 or an end mark ends the chain.
// An entry is 12, 16 or 32 bits at c*bits/8 (FAT12's odd clusters in the
// high 12 bits of their two bytes); FAT32 uses only the low 28 bits, and
// the top 8 values of each width mark the end.
func (f *FAT) next(c uint32) (uint32, error) {
	var b [4]byte
	if _, err := f.r.ReadAt(b[:], f.base+f.fatStart+int64(c)*int64(f.bits)/8); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(b[:])
	if f.bits == 12 && c&1 != 0 {
		v >>= 4
	}
	mask := uint32(1)<<min(f.bits, 28) - 1
	if v &= mask; v >= mask-7 {
		return 0, nil
	}
	return v, nil
}
