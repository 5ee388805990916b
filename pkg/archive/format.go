package archive

import (
	"archive/tar"
	"fmt"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// Kind is the container format of an archive, apart from its compression.
type Kind uint8

const (
	KindCpio    Kind = iota + 1 // newc, 070701
	KindCpioCRC                 // crc, 070702
	KindTar
	KindDir
)

// Kinds are the formats ParseKind accepts by their String names, in the
// order -h lists them.
var Kinds = []Kind{KindCpio, KindCpioCRC, KindTar, KindDir}

// kindNames are the names ParseKind accepts for each kind, the first the
// one String gives.
var kindNames = [...][]string{
	KindCpio:    {"newc", "cpio"},
	KindCpioCRC: {"crc"},
	KindTar:     {"tar", "pax", "ustar", "gnutar"},
	KindDir:     {"dir", "directory"},
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != nil {
		return kindNames[k][0]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind accepts the names used by --format.
func ParseKind(s string) (Kind, error) {
	for k, names := range kindNames {
		if slices.Contains(names, strings.ToLower(s)) {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown format %q (want newc, crc, tar or dir)", s)
}

// IsCpio reports whether k is one of the cpio variants.
func (k Kind) IsCpio() bool { return k == KindCpio || k == KindCpioCRC }

// Format is what an archive is: its kind, its compression, its tar
// flavour.
type Format struct {
	Kind  Kind
	Codec compress.Codec
	// Tar is the header format for tar output when the entries do not say
	// (tar.FormatUnknown lets archive/tar choose the smallest that fits).
	Tar tar.Format
}

// String is what the archive is; what holds it (an ISO image, an image's
// layers) says itself around it (container.Shape).
func (f Format) String() string {
	s := f.Kind.String()
	if f.Kind == KindTar && f.Tar != tar.FormatUnknown {
		s = "tar (" + strings.ToLower(f.Tar.String()) + ")"
	}
	if f.Kind != KindDir {
		s += ", " + f.Codec.String()
	}
	return s
}
