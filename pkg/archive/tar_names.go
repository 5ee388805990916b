package archive

import (
	"archive/tar"
	"bytes"
	"fmt"
	"strings"
)

// An entry's name can come from four places: its own header (with the
// ustar prefix), a GNU long name ('L'), a PAX path record and a PAX
// GNU.sparse.name record; its link target from three: the header, a GNU
// long link ('K') and a PAX linkpath record. archive/tar and GNU tar pick
// among them differently:
//
//   - archive/tar (reader.go, next) merges the PAX records, then lets an
//     'L' or 'K' override them, and takes GNU.sparse.name only for an
//     entry it reads as sparse (readGNUSparsePAXHeaders);
//   - GNU tar (list.c, read_header) takes an 'L' or 'K' first, then
//     xheader_decode (xheader.c) lets PAX path and linkpath override it,
//     and GNU.sparse.name override path on any entry (sparse_path_decoder
//     sets sparse_name_done, which path_decoder then honours); an empty
//     path record is ignored (raw_path_decoder);
//   - archive/tar reads a GNU-magic header whose atime or ctime does not
//     parse as ustar, with its prefix; read_header uses the prefix only
//     when the magic is POSIX's "ustar\0", whatever the version.
//
// Where the two disagree, GNU tar extracts one file while rootfs-trim
// judges another, so the entry is refused (checkTarNames). bsdtar
// (libarchive) applies GNU.sparse.name always and reads the prefix by the
// magic too; what GNU tar and archive/tar agree on, it reads the same in
// every case the tests build.

// tarPrelude is what the blocks archive/tar read before an entry's own
// header say: where that header is in the recorded bytes, and the GNU long
// name and link, if any.
type tarPrelude struct {
	main               int
	longName, longLink *string
	xheaders           int
}

// readTarPrelude walks rec, the header bytes archive/tar read for one
// entry (tarCounter), as read_header does: extended headers, 'L' and 'K'
// blocks with their data, then the entry's own header. More than one of a
// kind is refused: archive/tar and GNU tar keep the last, but an archive
// that needs two says two things.
func readTarPrelude(rec []byte) (tarPrelude, error) {
	var p tarPrelude
	for at := 0; at+tarBlockSize <= len(rec); {
		blk := rec[at : at+tarBlockSize]
		flag := blk[156]
		if flag != tar.TypeXHeader && flag != tar.TypeGNULongName && flag != tar.TypeGNULongLink {
			p.main = at
			return p, nil
		}
		n, ok := tarNumeric(blk[124:136])
		end := int64(at) + tarBlockSize + n
		if !ok || end > int64(len(rec)) {
			return p, fmt.Errorf("extended header at %d: size does not fit", at)
		}
		data := cString(rec[at+tarBlockSize : end])
		switch flag {
		case tar.TypeXHeader:
			p.xheaders++
			if p.xheaders > 1 {
				return p, fmt.Errorf("two PAX extended headers for one entry")
			}
		case tar.TypeGNULongName:
			if p.longName != nil {
				return p, fmt.Errorf("two GNU long names for one entry")
			}
			p.longName = &data
		case tar.TypeGNULongLink:
			if p.longLink != nil {
				return p, fmt.Errorf("two GNU long link names for one entry")
			}
			p.longLink = &data
		}
		at = int(int64(at) + tarBlockSize + roundBlock(n))
	}
	return p, fmt.Errorf("no entry header after the extended headers")
}

// cString is b up to its first NUL, as C and archive/tar read a field.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// gnuTarNames returns the name and link target GNU tar gives the entry
// whose own header is blk, after the prelude p and with the PAX records
// recs: read_header, then xheader_decode.
func gnuTarNames(blk []byte, p tarPrelude, recs map[string]string) (name, link string) {
	name = cString(blk[0:100])
	if prefix := cString(blk[345:500]); prefix != "" && string(blk[257:263]) == "ustar\x00" {
		name = prefix + "/" + name
	}
	link = cString(blk[157:257])
	if p.longName != nil {
		name = *p.longName
	}
	if p.longLink != nil {
		link = *p.longLink
	}
	if v, ok := recs["GNU.sparse.name"]; ok {
		name = v
	} else if v := recs["path"]; v != "" {
		name = v
	}
	if v, ok := recs["linkpath"]; ok {
		link = v
	}
	return name, link
}

// checkTarNames refuses an entry whose name or link target GNU tar reads
// otherwise than archive/tar did (h), and returns where in rec, its header
// bytes, its own header is. rec is nil when they outgrew maxKeptHeaders,
// which only a hostile archive does.
func checkTarNames(h *tar.Header, rec []byte, off int64) (int, error) {
	if rec == nil {
		return 0, fmt.Errorf("tar %q at offset %d: headers over %d bytes", h.Name, off, maxKeptHeaders)
	}
	p, err := readTarPrelude(rec)
	if err != nil {
		return 0, fmt.Errorf("tar %q at offset %d: %w; refusing it", h.Name, off, err)
	}
	if v, ok := h.PAXRecords["GNU.sparse.name"]; ok && v == "" {
		return 0, fmt.Errorf("tar %q at offset %d: an empty GNU.sparse.name record (GNU tar then ignores its path record); refusing it", h.Name, off)
	}
	name, link := gnuTarNames(rec[p.main:p.main+tarBlockSize], p, h.PAXRecords)
	if name != h.Name {
		return 0, fmt.Errorf("tar %q at offset %d: GNU tar reads the name %q (%s); refusing it", h.Name, off, name, nameSources(rec[p.main:], p, h.PAXRecords))
	}
	if link != h.Linkname {
		return 0, fmt.Errorf("tar %q at offset %d: its link target is %q, GNU tar reads %q (%s); refusing it", h.Name, off, h.Linkname, link, linkSources(rec[p.main:], p, h.PAXRecords))
	}
	return p.main, nil
}

// nameSources says where the entry's names come from, for the error.
func nameSources(blk []byte, p tarPrelude, recs map[string]string) string {
	s := []string{fmt.Sprintf("header name %q", cString(blk[0:100]))}
	if prefix := cString(blk[345:500]); prefix != "" {
		s = append(s, fmt.Sprintf("prefix field %q with magic %q", prefix, blk[257:265]))
	}
	if p.longName != nil {
		s = append(s, fmt.Sprintf("GNU long name %q", *p.longName))
	}
	for _, k := range []string{"path", "GNU.sparse.name"} {
		if v, ok := recs[k]; ok {
			s = append(s, fmt.Sprintf("PAX %s %q", k, v))
		}
	}
	return strings.Join(s, ", ")
}

func linkSources(blk []byte, p tarPrelude, recs map[string]string) string {
	s := []string{fmt.Sprintf("header link %q", cString(blk[157:257]))}
	if p.longLink != nil {
		s = append(s, fmt.Sprintf("GNU long link %q", *p.longLink))
	}
	if v, ok := recs["linkpath"]; ok {
		s = append(s, fmt.Sprintf("PAX linkpath %q", v))
	}
	return strings.Join(s, ", ")
}
