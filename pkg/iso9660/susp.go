package iso9660

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"
)

// susp is what a record's System Use entries say (Rock Ridge, RRIP 1.12).
type susp struct {
	name     string
	hasName  bool
	mode     uint32
	uid, gid uint32
	hasMode  bool
	link     string
	hasLink  bool
	mtime    time.Time
	atime    time.Time
	ctime    time.Time // TF "attributes": the inode change time
	child    uint32    // CL: the relocated directory's sector
	// relocated: RE, a directory shown instead where its CL entry is.
	relocated bool
	// nmDot: an NM entry flagged CURRENT or PARENT ("." or "..").
	nmDot bool
	// er are the extension identifiers of the ER entries (SUSP 5.5).
	er []string

	nmDone bool // an NM entry without CONTINUE was read

	slStarted, slCont bool // a symlink's components so far
}

// systemUse reads r's System Use area and the continuation areas (CE) it
// points to, each checked against the image.
func (im *Image) systemUse(dir string, r record) (susp, error) {
	var s susp
	if !im.rr {
		return s, nil
	}
	area := r.su // SP's skip length is 0: detectRR refuses another
	var link strings.Builder
	for hops := 0; ; hops++ {
		next, err := s.entries(area, &link)
		if err != nil {
			return s, errorf(dir, "%q: %v", r.name, err)
		}
		if next == nil {
			break
		}
		if hops >= maxCE {
			return s, errorf(dir, "%q: more than %d continuation areas", r.name, maxCE)
		}
		off := int64(next[0])*SectorSize + int64(next[1])
		if err := im.inImage(dir, off, int64(next[2])); err != nil || next[2] > SectorSize {
			return s, errorf(dir, "%q: continuation area beyond the image or its sector", r.name)
		}
		area = make([]byte, next[2])
		if _, err := im.r.ReadAt(area, off); err != nil {
			return s, errorf(dir, "%q: continuation area: %v", r.name, err)
		}
	}
	if s.hasLink {
		s.link = link.String()
	}
	return s, nil
}

// entries parses one area; it returns the continuation (sector, offset,
// length) a CE entry names, or nil.
//
// What GRUB (grub_iso9660_susp_iterate, susp_iterate_dir) and isolinux
// (syslinux's susp_rr.c: susp_rr_iterate, susp_rr_get_entries) would
// read differently is refused: an entry whose version is not 1 (isolinux
// then drops all Rock Ridge of the record and compares its ISO 9660
// name), an entry after a CE in the same area (GRUB goes to the
// continuation at once and skips it; isolinux reads it), two CE in one
// area (isolinux gives up), and an NM entry after one without CONTINUE
// (isolinux's name ends there, GRUB appends the next).
func (s *susp) entries(a []byte, link *strings.Builder) (*[3]uint32, error) {
	var ce *[3]uint32
	for len(a) >= 4 {
		sig, n := string(a[:2]), int(a[2])
		if n < 4 || n > len(a) {
			if a[0] == 0 {
				break // padding
			}
			return nil, errBadEntry(sig)
		}
		if sig == "ST" {
			return ce, nil
		}
		if a[3] != 1 {
			return nil, &Error{Msg: fmt.Sprintf("System Use entry %q of version %d, not 1", sig, a[3])}
		}
		if ce != nil {
			return nil, &Error{Msg: fmt.Sprintf("System Use entry %q after a CE entry (GRUB skips it, isolinux reads it)", sig)}
		}
		d := a[4:n]
		if len(d) < minEntryLen[sig] {
			return nil, errBadEntry(sig)
		}
		switch sig {
		case "CE":
			ce = &[3]uint32{binary.LittleEndian.Uint32(d[0:]), binary.LittleEndian.Uint32(d[8:]), binary.LittleEndian.Uint32(d[16:])}
		case "ER":
			if 4+int(d[0]) > len(d) {
				return nil, errBadEntry(sig)
			}
			s.er = append(s.er, string(d[4:4+int(d[0])]))
		case "NM":
			if s.nmDone {
				return nil, &Error{Msg: "an NM entry after one without CONTINUE (isolinux's name ends at the first, GRUB's goes on)"}
			}
			s.nmDone = d[0]&0x01 == 0
			if d[0]&0x06 != 0 {
				s.nmDot = true
				break
			}
			s.name += string(d[1:])
			s.hasName = true
		case "PX":
			s.mode = binary.LittleEndian.Uint32(d[0:])
			s.uid = binary.LittleEndian.Uint32(d[16:])
			s.gid = binary.LittleEndian.Uint32(d[24:])
			s.hasMode = true
		case "SL":
			if err := s.slAppend(d[1:], link); err != nil {
				return nil, err
			}
			s.hasLink = true
		case "TF":
			s.mtime, s.atime, s.ctime = tfTime(d, 0x02), tfTime(d, 0x04), tfTime(d, 0x08)
		case "CL":
			s.child = binary.LittleEndian.Uint32(d[0:])
		case "RE":
			s.relocated = true
		}
		a = a[n:]
	}
	return ce, nil
}

// minEntryLen is the length of each entry's data that entries reads.
var minEntryLen = map[string]int{"CE": 24, "ER": 4, "NM": 1, "PX": 32, "SL": 1, "CL": 8}

func errBadEntry(sig string) error {
	return &Error{Msg: "bad System Use entry " + strings.ToValidUTF8(sig, "?")}
}

// slAppend appends an SL entry's components to link (RRIP 4.1.3.1): a
// "/" between components, except after one flagged CONTINUE, across SL
// entries too.
func (s *susp) slAppend(d []byte, link *strings.Builder) error {
	for len(d) >= 2 {
		flags, n := d[0], int(d[1])
		if 2+n > len(d) {
			return errBadEntry("SL")
		}
		part := string(d[2 : 2+n])
		switch {
		case flags&0x02 != 0:
			part = "."
		case flags&0x04 != 0:
			part = ".."
		case flags&0x08 != 0:
			part = "/"
		}
		if s.slStarted && !s.slCont && !strings.HasSuffix(link.String(), "/") {
			link.WriteByte('/')
		}
		link.WriteString(part)
		s.slStarted, s.slCont = true, flags&0x01 != 0
		d = d[2+n:]
	}
	return nil
}

// tfTime returns the TF entry's time of kind (RRIP 4.1.6: flag bits
// 0x01 creation, 0x02 modify, 0x04 access, 0x08 attributes, in that
// order); flags bit 7 says 17-byte dates. Zero when it is not there.
func tfTime(d []byte, kind byte) time.Time {
	if len(d) < 1 || d[0]&kind == 0 {
		return time.Time{}
	}
	w := 7
	if d[0]&0x80 != 0 {
		w = 17
	}
	off := 1
	for bit := byte(0x01); bit < kind; bit <<= 1 {
		if d[0]&bit != 0 {
			off += w
		}
	}
	if off+w > len(d) {
		return time.Time{}
	}
	if w == 17 {
		return volumeDate(d[off : off+w])
	}
	return recordDate(d[off : off+w])
}
