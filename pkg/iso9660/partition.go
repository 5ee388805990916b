package iso9660

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// partition is an entry of a hybrid image's MBR or GPT.
type partition struct {
	table string // "MBR", "GPT"
	index int    // from 1
	start int64  // in bytes, as 512-byte sectors
	esp   bool   // an EFI system partition (MBR 0xEF, GPT's ESP type)
}

func (p partition) String() string { return fmt.Sprintf("%s partition %d", p.table, p.index) }

type partitions []partition

// at is the partition starting at byte off, in 512- or 2048-byte
// sectors (GRUB reads a CD's table in either).
func (ps partitions) at(off int64) (partition, bool) {
	for _, p := range ps {
		if p.start != 0 && (p.start == off || p.start*4 == off) {
			return p, true
		}
	}
	return partition{}, false
}

// espGUID is the EFI system partition's type, C12A7328-F81F-11D2-BA4B-
// 00A0C93EC93B, as GPT stores it (the first three fields little-endian).
var espGUID = [16]byte{0x28, 0x73, 0x2a, 0xc1, 0x1f, 0xf8, 0xd2, 0x11, 0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b}

// partitions reads the MBR and GPT a hybrid image may carry (isohybrid,
// xorriso's -append_partition): what a firmware booting the image as a
// disk, and GRUB naming its boot device, see. An Apple partition map,
// which GRUB's part_apple reads, is refused: none is read here.
func (im *Image) partitions() (partitions, error) {
	var sec [1024]byte
	if _, err := im.r.ReadAt(sec[:], 0); err != nil {
		return nil, nil
	}
	mbr, gpt := sec[:512], sec[512:]
	if string(mbr[:2]) == "ER" && string(gpt[:2]) == "PM" {
		return nil, errors.New("an Apple partition map: rootfs-trim does not read it, and GRUB or a firmware could boot from one of its partitions")
	}
	var out partitions
	if mbr[510] == 0x55 && mbr[511] == 0xAA {
		for i := 0; i < 4; i++ {
			e := mbr[446+16*i:]
			if e[4] != 0 {
				out = append(out, partition{table: "MBR", index: i + 1, start: int64(binary.LittleEndian.Uint32(e[8:])) * 512, esp: e[4] == 0xEF})
			}
		}
	}
	if string(gpt[:8]) != "EFI PART" {
		return out, nil
	}
	lba := int64(binary.LittleEndian.Uint64(gpt[72:]))
	n := int64(binary.LittleEndian.Uint32(gpt[80:]))
	size := int64(binary.LittleEndian.Uint32(gpt[84:]))
	if n > 1024 || size < 128 || size > 4096 || lba < 0 || lba > im.size/512 {
		return nil, errors.New("a GPT whose partition entries rootfs-trim cannot read")
	}
	e := make([]byte, size)
	for i := int64(0); i < n; i++ {
		if _, err := im.r.ReadAt(e, lba*512+i*size); err != nil {
			return nil, fmt.Errorf("GPT partition entry %d: %w", i+1, err)
		}
		var typ [16]byte
		copy(typ[:], e)
		if typ == [16]byte{} {
			continue
		}
		out = append(out, partition{table: "GPT", index: int(i) + 1, start: int64(binary.LittleEndian.Uint64(e[32:])) * 512, esp: typ == espGUID})
	}
	return out, nil
}
