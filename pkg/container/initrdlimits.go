package container

import (
	"fmt"

	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
)

// An initrd is read file by file and segment by segment, and each segment
// a rewrite reuses holds a matcher and a part written beside the output:
// what a boot entry may name must be bounded before any of that is set up,
// or a grub.cfg naming one small file 16,000 times costs minutes and
// gigabytes. Real ones are a handful of either: Debian's and dracut's
// initrds are an early cpio or two and the main one, GRUB's and
// syslinux's loaders take a list of files (an intel-ucode.img, an
// amd-ucode.img, the initrd), and apply adds at most one segment.
const (
	// MaxInitrdFiles is how many files one boot entry's initrd may name.
	MaxInitrdFiles = 64
	// MaxSegments is how many segments an initrd may hold, across its
	// files.
	MaxSegments = 64
)

// checkInitrdFiles refuses an initrd that names more files than
// MaxInitrdFiles, before a single one is opened.
func checkInitrdFiles(ird iso9660.Initrd) error {
	if n := len(ird.Files); n > MaxInitrdFiles {
		return fmt.Errorf("initrd (%s) is %d files: more than the %d a boot entry may load here; refused", ird.Where, n, MaxInitrdFiles)
	}
	return nil
}

// checkSegments refuses the segment that would be the (n+1)th, at offset
// at, as an initrd holds MaxSegments at most.
func checkSegments(n int, at int64) error {
	if n >= MaxSegments {
		return fmt.Errorf("segment %d at offset %d: an initrd of more than %d segments is refused", n+1, at, MaxSegments)
	}
	return nil
}
