package archive

import (
	"archive/tar"
	"bytes"
	"fmt"
	"strconv"
)

// TarSparse describes a sparse file read from tar. archive/tar reads the
// map in all the forms GNU tar writes (old GNU type 'S', PAX 0.0, 0.1 and
// 1.0; bsdtar writes 1.0) and Read yields the holes as zeros.
type TarSparse struct {
	// Format is "gnu" (old GNU, type 'S'), "pax-0.0", "pax-0.1" or "pax-1.0".
	Format string
	// Stored is the number of data bytes the archive holds; the rest of
	// the entry's Size is holes.
	Stored int64
}

// sparseKind returns the sparse format of h as archive/tar decides it
// (reader.go, readGNUSparsePAXHeaders), or "" for a file that is not sparse.
// PAX 0.0's repeated offset and numbytes records come out of archive/tar
// joined into GNU.sparse.map, as 0.1 has it; 0.1 also names the file in
// GNU.sparse.name, where 0.0 keeps the header's name.
func sparseKind(h *tar.Header) string {
	if h.Typeflag == tar.TypeGNUSparse {
		return "gnu"
	}
	major, minor := h.PAXRecords["GNU.sparse.major"], h.PAXRecords["GNU.sparse.minor"]
	switch {
	case major == "1" && minor == "0":
		return "pax-1.0"
	case major == "0" && (minor == "0" || minor == "1"):
		return "pax-0." + minor
	case major != "" || minor != "" || h.PAXRecords["GNU.sparse.map"] == "":
		return ""
	case h.PAXRecords["GNU.sparse.name"] == "":
		return "pax-0.0"
	}
	return "pax-0.1"
}

// sparseLayout returns, for the entry with header h read from the header
// bytes rec at offset off, whether it is sparse, where its remaining data
// starts and how many bytes of it the archive holds. pos is where
// archive/tar stopped reading: past the headers, and for PAX 1.0 past the
// map at the start of the data too. size is the entry's Size.
func sparseLayout(h *tar.Header, rec []byte, off, pos, size int64) (*TarSparse, int64, int64, error) {
	kind := sparseKind(h)
	if kind == "" {
		return nil, pos, size, nil
	}
	if rec == nil {
		return nil, 0, 0, fmt.Errorf("tar %q: sparse file's headers over %d bytes", h.Name, maxKeptHeaders)
	}
	main, ok := mainTarHeader(rec)
	if !ok {
		return nil, 0, 0, fmt.Errorf("tar %q at offset %d: cannot find the sparse file's header", h.Name, off)
	}
	raw, ok := tarNumeric(rec[main+124 : main+136])
	if s, set := h.PAXRecords["size"]; set && kind != "gnu" {
		raw, _ = strconv.ParseInt(s, 10, 64)
	}
	stored := raw
	if kind == "pax-1.0" {
		// The map archive/tar read is the start of the data section.
		stored -= pos - (off + int64(main) + tarBlockSize)
	}
	if !ok || stored < 0 || stored > size {
		return nil, 0, 0, fmt.Errorf("tar %q at offset %d: sparse map and sizes disagree (%d bytes stored, %d expanded)", h.Name, off, stored, size)
	}
	return &TarSparse{Format: kind, Stored: stored}, pos, stored, nil
}

// mainTarHeader returns where in rec, the header blocks archive/tar read
// for one entry, the entry's own header is: past PAX extended headers and
// GNU long names, each a header block and its data.
func mainTarHeader(rec []byte) (int, bool) {
	for p := 0; p+tarBlockSize <= len(rec); {
		blk := rec[p : p+tarBlockSize]
		switch blk[156] {
		case tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
			n, ok := tarNumeric(blk[124:136])
			if !ok || n > int64(len(rec)) {
				return 0, false
			}
			p += tarBlockSize + int(roundBlock(n))
		default:
			return p, true
		}
	}
	return 0, false
}

// tarNumeric reads a non-negative tar number field: octal, or GNU's
// base-256 when the first byte's high bit is set.
func tarNumeric(b []byte) (int64, bool) {
	if len(b) > 0 && b[0]&0x80 != 0 {
		if b[0]&0x40 != 0 {
			return 0, false // negative
		}
		v := int64(b[0] & 0x3f)
		for _, c := range b[1:] {
			if v > (1<<55)-1 {
				return 0, false
			}
			v = v<<8 | int64(c)
		}
		return v, true
	}
	b = bytes.Trim(b, " \x00")
	if len(b) == 0 {
		return 0, true
	}
	v, err := strconv.ParseInt(string(b), 8, 64)
	return v, err == nil && v >= 0
}
