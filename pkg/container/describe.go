package container

import (
	"fmt"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
)

// Description is what holds an input's entries, for list: an ISO image
// holding the initrd (Container "iso9660" and the fields after Layers),
// or a container image whose layers hold them (Kind, Platform, Layers).
// Its JSON is list --json's "image" (docs/schema/list.json).
type Description struct {
	Container string            `json:"container,omitempty"`
	Kind      string            `json:"kind,omitempty"`
	Platform  string            `json:"platform,omitempty"`
	Layers    []*ociimage.Layer `json:"layers,omitempty"`
	VolumeID  string            `json:"volume_id,omitempty"`
	// BootConfigs are the boot configurations read; Initrd the initrd's
	// files in the image, which the entries are, and NamedAt the line
	// naming them.
	BootConfigs []string    `json:"boot_configs,omitempty"`
	Initrd      []string    `json:"initrd,omitempty"`
	NamedAt     string      `json:"named_at,omitempty"`
	Files       []ImageFile `json:"files,omitempty"`
}

// ImageFile is one of an ISO image's own files.
type ImageFile struct {
	Path     string `json:"path"`
	Mode     string `json:"mode"`
	UID      uint32 `json:"uid"`
	GID      uint32 `json:"gid"`
	Size     int64  `json:"size"`
	MTime    string `json:"mtime"`
	Linkname string `json:"linkname,omitempty"`
}

// Describe says what holds the input's entries; nil for a stream, a tree
// or an initrd of segments, which are nothing but their entries.
func (in *Input) Describe() (*Description, error) {
	d, err := in.src.describe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Path, err)
	}
	return d, nil
}

func (*streamSource) describe() (*Description, error) { return nil, nil }
func (treeSource) describe() (*Description, error)    { return nil, nil }
func (*segReader) describe() (*Description, error)    { return nil, nil }

func (s imageSource) describe() (*Description, error) {
	return &Description{Kind: s.img.Kind.String(), Platform: s.img.Platform, Layers: s.img.Layers}, nil
}

func (s isoSource) describe() (*Description, error) {
	iso := s.iso
	d := &Description{Container: ContainerISO, VolumeID: iso.Image.VolumeID, BootConfigs: iso.Boot.Configs,
		Initrd: iso.Initrd.Paths(), NamedAt: iso.Initrd.Where}
	err := iso.Image.Walk(func(f iso9660.File) error {
		d.Files = append(d.Files, ImageFile{Path: f.Path, Mode: f.Mode.String(), UID: f.UID, GID: f.GID,
			Size: f.Size, MTime: f.ModTime.UTC().Format(time.RFC3339), Linkname: f.Link})
		return nil
	})
	return d, err
}
