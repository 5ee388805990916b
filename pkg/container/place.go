package container

import (
	"fmt"
	"strings"
)

// Place says where in an initrd an entry came from, as a layer does in an
// image: the file of an ISO's initrd (an initrd of several files, or the
// one file a boot entry names) and the segment, for a finding a user has
// to find in the image (issue 37: an ISO finding named no file).
type Place struct {
	// File is the initrd file in the ISO image, "" for an initrd of its
	// own.
	File string `json:"file,omitempty"`
	// Segment is the segment's number, 1-based, in the initrd as the
	// kernel reads it (all its files one after the other); 0 when the
	// initrd is one stream. Compression and Offset are that segment's,
	// Offset in File (in the initrd file for one of its own).
	Segment     int    `json:"segment,omitempty"`
	Compression string `json:"compression,omitempty"`
	Offset      int64  `json:"offset,omitempty"`
}

// String names the place as a finding's note does:
// "initrd /boot/initrd, segment 2 (gzip at offset 1024)".
func (p *Place) String() string {
	var parts []string
	if p.File != "" {
		parts = append(parts, "initrd "+p.File)
	}
	if p.Segment > 0 {
		parts = append(parts, fmt.Sprintf("segment %d (%s at offset %d)", p.Segment, p.Compression, p.Offset))
	}
	return strings.Join(parts, ", ")
}

// PlaceOf is where an entry of segment k (archive.Entry.Segment) came
// from: nil when that says nothing a user needs (an initrd of one file and
// one segment, an archive, a tree, an image, whose layers say).
func (in *Input) PlaceOf(k int) *Place {
	if in.segs() == nil || k < 1 || k > len(in.segs().segs) {
		if in.ISO != nil && len(in.Parts) == 1 {
			return &Place{File: in.Parts[0].Path}
		}
		return nil
	}
	segs := in.segs().segs
	seg := segs[k-1]
	p := &Place{}
	if len(segs) > 1 {
		p.Segment, p.Compression, p.Offset = k, seg.Codec.String(), seg.Offset
	}
	if v := in.segs().view; v != nil {
		if f, ok := v.fileAt(seg.Offset); ok {
			p.File = f.Path
			if p.Segment > 0 {
				p.Offset = seg.Offset - f.Start
			}
		}
	}
	if p.File == "" && p.Segment == 0 {
		return nil
	}
	return p
}
