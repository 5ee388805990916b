package iso9660

import (
	"encoding/binary"
	"fmt"
)

// BootImage is one entry of the El Torito boot catalogue.
type BootImage struct {
	// Platform is the section's platform id: 0 x86 (BIOS), 0xEF EFI. An
	// EFI image may well say 0: genisoimage writes every entry as x86.
	Platform  byte
	Bootable  bool
	Emulation byte // 0: no emulation
	LBA       uint32
	Sectors   uint16 // 512-byte sectors loaded at boot, not the image's size
}

// Offset is where the image starts in the ISO.
func (b BootImage) Offset() int64 { return int64(b.LBA) * SectorSize }

// BootImages reads the El Torito catalogue (El Torito 1.0, section 2): the
// validation entry, the initial entry, then section headers and their
// entries; nil when there is none.
func (im *Image) BootImages() ([]BootImage, error) {
	if im.BootCatalog == 0 {
		return nil, nil
	}
	off := int64(im.BootCatalog) * SectorSize
	if err := im.inImage("boot catalogue", off, SectorSize); err != nil {
		return nil, err
	}
	cat := make([]byte, SectorSize)
	if _, err := im.r.ReadAt(cat, off); err != nil {
		return nil, fmt.Errorf("boot catalogue: %w", err)
	}
	if cat[0] != 1 || cat[30] != 0x55 || cat[31] != 0xAA {
		return nil, errorf("boot catalogue", "no validation entry at sector %d", im.BootCatalog)
	}
	var sum uint16
	for i := 0; i < 32; i += 2 {
		sum += binary.LittleEndian.Uint16(cat[i:])
	}
	if sum != 0 {
		return nil, errorf("boot catalogue", "validation entry checksum is wrong")
	}
	platform := cat[1]
	out := []BootImage{bootEntry(cat[32:64], platform)}
	for i := 64; i+32 <= len(cat); {
		h := cat[i : i+32]
		if h[0] != 0x90 && h[0] != 0x91 {
			break
		}
		platform = h[1]
		n := int(binary.LittleEndian.Uint16(h[2:4]))
		i += 32
		for j := 0; j < n && i+32 <= len(cat); j++ {
			out = append(out, bootEntry(cat[i:i+32], platform))
			i += 32
		}
		if h[0] == 0x91 {
			break
		}
	}
	for _, b := range out {
		if err := im.inImage("boot catalogue", b.Offset(), 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func bootEntry(e []byte, platform byte) BootImage {
	return BootImage{Platform: platform, Bootable: e[0] == 0x88, Emulation: e[1] & 0x0F,
		Sectors: binary.LittleEndian.Uint16(e[6:8]), LBA: binary.LittleEndian.Uint32(e[8:12])}
}
