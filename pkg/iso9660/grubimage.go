package iso9660

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// GrubImage is what a GRUB EFI program carries in its modules area
// besides modules: the configuration grub-mkimage -c embeds, the prefix
// -p gives, and the memdisk grub-mkstandalone builds (a tar holding
// /boot/grub/grub.cfg, with the prefix "(memdisk)/boot/grub").
type GrubImage struct {
	Config    []byte // nil: none
	HasPrefix bool
	Prefix    string
	// Memdisk are the memdisk's regular files by path, "/boot/grub/grub.cfg";
	// nil: no memdisk.
	Memdisk map[string][]byte
}

// ErrNotGrub is ReadGrubImage's error for a program that is not GRUB: a
// PE file without a "mods" section, or not a PE file at all.
var ErrNotGrub = errors.New("not a GRUB EFI program (no mods section)")

// The module types of include/grub/kernel.h.
const (
	grubObjELF = iota
	grubObjMemdisk
	grubObjConfig
	grubObjPrefix
)

// grubModuleMagic is "mimg" read little-endian: GRUB_MODULE_MAGIC.
const grubModuleMagic = 0x676d696d

// ReadGrubImage reads the modules area of a GRUB EFI program as GRUB's
// kernel does: the PE section named "mods" (grub_efi_section_addr, which
// takes the first such section) starts with a grub_module_info, whose
// offset and size bound the module headers that FOR_MODULES walks, each
// {type, size} and aligned to the pointer size. grub_load_config
// (grub-core/kern/main.c) takes the first OBJ_TYPE_CONFIG,
// grub_set_prefix_and_root the last OBJ_TYPE_PREFIX and
// grub-core/disk/memdisk.c the first OBJ_TYPE_MEMDISK: more than one of
// any is refused, as what rootfs-trim would pick is then a guess.
func ReadGrubImage(b []byte) (*GrubImage, error) {
	mods, wide, err := peSection(b, "mods")
	if err != nil {
		return nil, err
	}
	infoSize, align := 12, 4
	if wide {
		infoSize, align = 24, 8
	}
	if len(mods) < infoSize || binary.LittleEndian.Uint32(mods) != grubModuleMagic {
		return nil, errors.New("GRUB mods section: no module information (magic mimg)")
	}
	var off, size uint64
	if wide {
		off, size = binary.LittleEndian.Uint64(mods[8:]), binary.LittleEndian.Uint64(mods[16:])
	} else {
		off, size = uint64(binary.LittleEndian.Uint32(mods[4:])), uint64(binary.LittleEndian.Uint32(mods[8:]))
	}
	if size > uint64(len(mods)) || off > size {
		return nil, fmt.Errorf("GRUB mods section: modules at %d+%d, beyond the section's %d bytes", off, size, len(mods))
	}
	g := &GrubImage{}
	var memdisk []byte
	seen := map[uint32]bool{}
	for pos := off; pos < size; {
		if size-pos < 8 {
			return nil, fmt.Errorf("GRUB module at byte %d: header cut short", pos)
		}
		typ := binary.LittleEndian.Uint32(mods[pos:])
		msize := uint64(binary.LittleEndian.Uint32(mods[pos+4:]))
		if msize < 8 || msize > size-pos {
			return nil, fmt.Errorf("GRUB module at byte %d: size %d out of bounds", pos, msize)
		}
		body := mods[pos+8 : pos+msize]
		if name := grubObjNames[typ]; name != "" {
			if seen[typ] {
				return nil, fmt.Errorf("GRUB module at byte %d: a second %s", pos, name)
			}
			seen[typ] = true
		}
		switch typ {
		case grubObjConfig:
			g.Config = cString(body)
		case grubObjPrefix:
			g.HasPrefix, g.Prefix = true, string(cString(body))
		case grubObjMemdisk:
			memdisk = body
		}
		pos += (msize + uint64(align) - 1) / uint64(align) * uint64(align)
	}
	if memdisk != nil {
		if g.Memdisk, err = readMemdisk(memdisk); err != nil {
			return nil, fmt.Errorf("GRUB memdisk: %w", err)
		}
	}
	return g, nil
}

// grubObjNames are the module types a program may hold once.
var grubObjNames = map[uint32]string{grubObjConfig: "embedded configuration", grubObjPrefix: "prefix", grubObjMemdisk: "memdisk"}

// cString is b up to its first NUL: grub-mkimage pads the config and the
// prefix with zeros, and GRUB reads them as C strings.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return bytes.Clone(b)
}

// peSection finds the one section named name in a PE file, returning
// its bytes in the file and whether the file is PE32+ (64-bit).
// ErrNotGrub when the file is not PE or has no such section.
func peSection(b []byte, name string) ([]byte, bool, error) {
	if len(b) < 0x40 || string(b[:2]) != "MZ" {
		return nil, false, ErrNotGrub
	}
	pe := int(binary.LittleEndian.Uint32(b[0x3c:]))
	if pe < 0 || pe > len(b)-24 || string(b[pe:pe+4]) != "PE\x00\x00" {
		return nil, false, ErrNotGrub
	}
	nsec := int(binary.LittleEndian.Uint16(b[pe+6:]))
	optSize := int(binary.LittleEndian.Uint16(b[pe+20:]))
	opt := pe + 24
	if opt+2 > len(b) {
		return nil, false, ErrNotGrub
	}
	wide := binary.LittleEndian.Uint16(b[opt:]) == 0x20b
	var found []byte
	for i, s := 0, opt+optSize; i < nsec; i, s = i+1, s+40 {
		if s+40 > len(b) {
			return nil, false, errors.New("PE section table beyond the file")
		}
		h := b[s : s+40]
		if string(cString(h[:8])) != name {
			continue
		}
		if found != nil {
			return nil, false, fmt.Errorf("PE file: two %q sections", name)
		}
		vsize := uint64(binary.LittleEndian.Uint32(h[8:]))
		raw := uint64(binary.LittleEndian.Uint32(h[16:]))
		ptr := uint64(binary.LittleEndian.Uint32(h[20:]))
		// grub-mkimage writes the same virtual and raw sizes; more in
		// memory than the file holds is refused, which bounds it.
		if ptr+raw > uint64(len(b)) || vsize > uint64(len(b)) {
			return nil, false, fmt.Errorf("PE section %q: bytes %d+%d (%d in memory) beyond the file's %d", name, ptr, raw, vsize, len(b))
		}
		// The loader maps the raw bytes and zero-fills up to the
		// virtual size.
		found = make([]byte, vsize)
		copy(found, b[ptr:ptr+min(raw, vsize)])
	}
	if found == nil {
		return nil, false, ErrNotGrub
	}
	return found, wide, nil
}

// readMemdisk reads a memdisk tar as GRUB's tar driver does
// (grub-core/fs/tar.c grub_cpio_find_file, through archelp.c's
// canonicalize): a "ustar" magic on each header, a GNU 'L' header giving
// the next entry's name, otherwise prefix "/" name. What it does not read
// the way rootfs-trim can judge (a 'K' long link, links, other types, a
// name twice) is refused; directories are skipped.
func readMemdisk(b []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	var long string
	for off := 0; ; {
		if off+512 > len(b) {
			return nil, fmt.Errorf("tar header at byte %d: beyond the memdisk's %d bytes", off, len(b))
		}
		h := b[off : off+512]
		if h[0] == 0 && h[345] == 0 {
			return out, nil
		}
		if string(h[257:262]) != "ustar" {
			return nil, fmt.Errorf("tar header at byte %d: no ustar magic", off)
		}
		size, err := strconv.ParseUint(strings.Trim(string(h[124:136]), " \x00"), 8, 63)
		if err != nil || size > uint64(len(b)-off-512) {
			return nil, fmt.Errorf("tar header at byte %d: size %q", off, h[124:136])
		}
		data := b[off+512 : off+512+int(size)]
		off += 512 + (int(size)+511)/512*512
		name := long
		long = ""
		switch h[156] {
		case 'L':
			long = string(cString(data))
			continue
		case '5':
			continue
		case '0':
		default:
			return nil, fmt.Errorf("tar entry %q: type %q, not a file or directory", string(cString(h[:100])), h[156])
		}
		if name == "" {
			name = string(cString(h[:100]))
			if p := cString(h[345:500]); len(p) > 0 {
				name = string(p) + "/" + name
			}
		}
		name = path.Clean("/" + name)
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("tar entry %s: twice", name)
		}
		out[name] = data
	}
}
