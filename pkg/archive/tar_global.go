package archive

import (
	"archive/tar"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TarFormat is the Format of an entry read by a TarReader.
type TarFormat struct {
	// Header is the entry's header as archive/tar read it, with the global
	// header's records applied (FromGlobal says which).
	Header *tar.Header
	// Global is the PAX global header in effect for the entry, nil when
	// none came before it; the entries after one global header share it.
	Global *TarGlobal
	// FromGlobal names, sorted, the records the entry took from Global.
	FromGlobal []string
	// Sparse is set for a sparse file; Header.Size is then the expanded
	// size, which is what Read returns.
	Sparse *TarSparse
}

// TarGlobal is a PAX global header ('g'): records that apply to every later
// entry, until the next global header.
type TarGlobal struct {
	Name    string
	Offset  int64
	Records map[string]string
	// raw is the header as read (its block and records), written again
	// as it was when all its records stay with it.
	raw []byte
}

// tarHeaderOf returns the tar header e was read with, or nil.
func tarHeaderOf(e *Entry) *tar.Header {
	if f, ok := e.Format.(*TarFormat); ok && f != nil {
		return f.Header
	}
	return nil
}

// A global header's records, by what GNU tar 1.34 does with them (checked
// with tar -tv): each applies to every later entry that has no record of
// its own, over what the entry's ustar header says; a later global header
// replaces the earlier one whole (a keyword only the earlier one set no
// longer applies). bsdtar 3.6 ignores global headers; see docs/formats.md.
const (
	globalArchive = iota // about the archive (comment, charset): kept with the global header
	globalField          // an entry field (uid, mtime...): given to each entry
	globalRecord         // a per-file record (an xattr): copied into each entry
)

var globalFields = map[string]bool{
	"uid": true, "gid": true, "uname": true, "gname": true,
	"mtime": true, "atime": true, "ctime": true,
}

// globalRefused are records that would make every later entry the same
// file, or change how much data it has: GNU tar applies them and bsdtar
// does not, so the archive means two different things.
var globalRefused = map[string]string{
	"path":     "names every later entry",
	"linkpath": "gives every later entry a link target",
	"size":     "sets the data size of every later entry",
}

func globalRole(k string) int {
	switch {
	case globalFields[k]:
		return globalField
	case strings.HasPrefix(k, "SCHILY.xattr."), strings.HasPrefix(k, "LIBARCHIVE.xattr."), strings.HasPrefix(k, "SCHILY.acl."):
		return globalRecord
	}
	return globalArchive
}

// newTarGlobal checks a global header read at off and returns it. One
// that came after an extended header or a GNU long name or link is
// refused: archive/tar drops those, while GNU tar's read_header keeps them
// for the next entry (its name, its link target, its records).
func newTarGlobal(h *tar.Header, off int64, raw []byte) (*TarGlobal, error) {
	if raw == nil {
		return nil, fmt.Errorf("tar: PAX global header at offset %d: headers over %d bytes", off, maxKeptHeaders)
	}
	if len(raw) >= tarBlockSize && raw[156] != tar.TypeXGlobalHeader {
		return nil, fmt.Errorf("tar: PAX global header at offset %d comes after a %q header meant for the next entry (GNU tar applies it, archive/tar drops it); refusing it", off, raw[156])
	}
	g := &TarGlobal{Name: h.Name, Offset: off, Records: maps.Clone(h.PAXRecords)}
	if size, ok := tarNumeric(raw[min(124, len(raw)):min(136, len(raw))]); ok && len(raw) >= tarBlockSize &&
		raw[156] == tar.TypeXGlobalHeader && int64(len(raw)) == tarBlockSize+size {
		// Only the header itself: an extended header archive/tar read
		// before it (and dropped) would, copied, apply to the next entry.
		// Padded: archive/tar reads the padding with the next header.
		g.raw = make([]byte, roundBlock(int64(len(raw))))
		copy(g.raw, raw)
	}
	if g.Records == nil {
		if size, ok := tarNumeric(raw[min(124, len(raw)):min(136, len(raw))]); !ok || size > 0 {
			// archive/tar drops every record of a global header when one
			// of a header field's does not parse (reader.go, mergePAX).
			return nil, fmt.Errorf("tar: PAX global header at offset %d: a malformed uid, gid, size or time record", off)
		}
		g.Records = map[string]string{}
	}
	for _, k := range slices.Sorted(maps.Keys(g.Records)) {
		v := g.Records[k]
		if v == "" {
			// As archive/tar and POSIX have it: the header's own value stays.
			continue
		}
		if why, ok := globalRefused[k]; ok {
			return nil, fmt.Errorf("tar: PAX global header at offset %d: record %q %s; refusing it", off, k, why)
		}
		if strings.HasPrefix(k, "GNU.sparse.") {
			return nil, fmt.Errorf("tar: PAX global header at offset %d: record %q: a sparse map belongs to one file; refusing it", off, k)
		}
		if err := setGlobalField(&tar.Header{}, k, v); err != nil {
			return nil, fmt.Errorf("tar: PAX global header at offset %d: record %q: %w", off, k, err)
		}
	}
	return g, nil
}

// parsePAXTime reads a PAX time: decimal seconds since the epoch with an
// optional fraction (POSIX pax, "pax Extended Header"); digits beyond
// nanoseconds are dropped, as GNU tar and archive/tar drop them.
func parsePAXTime(v string) (time.Time, error) {
	secs, frac, dot := strings.Cut(v, ".")
	s, err := strconv.ParseInt(secs, 10, 64)
	bad := err != nil || dot && frac == "" || strings.TrimLeft(frac, "0123456789") != ""
	if bad {
		return time.Time{}, fmt.Errorf("bad time %q", v)
	}
	frac = (frac + "000000000")[:9]
	ns, _ := strconv.ParseInt(frac, 10, 64)
	if strings.HasPrefix(secs, "-") {
		ns = -ns
	}
	return time.Unix(s, ns), nil
}

// apply gives h, an entry's header, the records of g it has none of its
// own for, and returns their names. g may be nil.
func (g *TarGlobal) apply(h *tar.Header) []string {
	if g == nil {
		return nil
	}
	var from []string
	for _, k := range slices.Sorted(maps.Keys(g.Records)) {
		role := globalRole(k)
		if _, own := h.PAXRecords[k]; own || role == globalArchive {
			continue
		}
		v := g.Records[k]
		if v == "" {
			continue
		}
		if role == globalRecord {
			if h.PAXRecords == nil {
				h.PAXRecords = map[string]string{}
			}
			// archive/tar writes it from PAXRecords; Xattrs is deprecated.
			h.PAXRecords[k] = v
			h.Format = tar.FormatPAX
		} else {
			setGlobalField(h, k, v) // checked by newTarGlobal
		}
		from = append(from, k)
	}
	return from
}

// setGlobalField sets one of globalFields, which newTarGlobal checks on
// a scratch header.
func setGlobalField(h *tar.Header, k, v string) error {
	switch k {
	case "uid", "gid":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || int64(int(n)) != n {
			return fmt.Errorf("bad id %q", v)
		}
		*map[string]*int{"uid": &h.Uid, "gid": &h.Gid}[k] = int(n)
	case "uname", "gname":
		*map[string]*string{"uname": &h.Uname, "gname": &h.Gname}[k] = v
	case "mtime", "atime", "ctime":
		t, err := parsePAXTime(v)
		if err != nil {
			return err
		}
		*map[string]*time.Time{"mtime": &h.ModTime, "atime": &h.AccessTime, "ctime": &h.ChangeTime}[k] = t
		if t.Nanosecond() != 0 || k != "mtime" {
			// Only PAX keeps a fraction, or an atime or ctime at all.
			h.Format = tar.FormatPAX
		}
	}
	return nil
}

// writeGlobal writes, before e, the global header e was read after, if it
// is not the one last written. Only its records about the archive go in
// it: what it gave the entries, each entry now says itself, so that an
// entry added or changed since says what it is to GNU tar and bsdtar alike.
func (w *TarWriter) writeGlobal(e *Entry) error {
	f, ok := e.Format.(*TarFormat)
	if !ok || f == nil || f.Global == nil || f.Global == w.global {
		return nil
	}
	w.global = f.Global
	recs := map[string]string{}
	for k, v := range f.Global.Records {
		if globalRole(k) == globalArchive {
			recs[k] = v
		}
	}
	if len(recs) == 0 {
		return nil
	}
	var err error
	if len(recs) == len(f.Global.Records) && f.Global.raw != nil {
		// archive/tar flushed the previous entry's padding in WriteHeader,
		// so the stream is at a block boundary.
		_, err = w.out.Write(f.Global.raw)
	} else {
		err = w.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: f.Global.Name, PAXRecords: recs, Format: tar.FormatPAX})
	}
	if err != nil {
		return fmt.Errorf("tar %q: PAX global header before %q: %w", f.Global.Name, e.Name, err)
	}
	return nil
}
