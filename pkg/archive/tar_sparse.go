package archive

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TarSparse describes a sparse file read from tar. archive/tar reads the
// map in all the forms GNU tar writes (old GNU type 'S', PAX 0.0, 0.1 and
// 1.0; bsdtar writes 1.0) and Read yields the holes as zeros.
type TarSparse struct {
	// Format is "gnu" (old GNU, type 'S'), "pax-0.0", "pax-0.1" or "pax-1.0";
	// "tree" for a file with holes a DirReader read (a tar writer writes
	// it as PAX 1.0).
	Format string
	// Stored is the number of data bytes the archive holds; the rest of
	// the entry's Size is holes.
	Stored int64
	// Map is where the stored data goes in the file, in order; nil when it
	// could not be read again (a tar writer then writes the file expanded).
	Map []SparseSegment
}

// SparseSegment is one stretch of a sparse file's data: Length bytes at
// Offset; what lies between segments is hole.
type SparseSegment struct{ Offset, Length int64 }

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

// sparseLayout returns, for the entry with header h, whether it is sparse
// and how many bytes of its data the archive holds. rec holds its header
// bytes read at offset off, its own header at main (readTarPrelude); pos
// is where archive/tar stopped reading: past the headers, and for PAX 1.0
// past the map at the start of the data too. size is the entry's Size.
func sparseLayout(h *tar.Header, rec []byte, main int, off, pos, size int64) (*TarSparse, int64, error) {
	kind := sparseKind(h)
	if kind == "" {
		return nil, size, nil
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
		return nil, 0, fmt.Errorf("tar %q at offset %d: sparse map and sizes disagree (%d bytes stored, %d expanded)", h.Name, off, stored, size)
	}
	sp := &TarSparse{Format: kind, Stored: stored}
	sp.Map = sparseMap(kind, h, rec[main:])
	if !validSparseMap(sp.Map, stored, size) {
		sp.Map = nil
	}
	return sp, stored, nil
}

// sparseMap reads the map archive/tar read (and keeps to itself) again,
// from the header bytes rec starting at the entry's own header: for old
// GNU in it and its extension blocks, for PAX 1.0 in the data's first
// blocks, for PAX 0.x in GNU.sparse.map. It returns nil when it cannot.
func sparseMap(kind string, h *tar.Header, rec []byte) []SparseSegment {
	var nums []int64
	switch kind {
	case "gnu":
		nums = oldGNUSparseNumbers(rec)
	case "pax-1.0":
		nums = sparse1x0Numbers(rec[tarBlockSize:])
	default:
		for _, f := range bytes.Split([]byte(h.PAXRecords["GNU.sparse.map"]), []byte(",")) {
			n, err := strconv.ParseInt(string(f), 10, 64)
			if err != nil {
				return nil
			}
			nums = append(nums, n)
		}
	}
	if nums == nil || len(nums)%2 != 0 {
		return nil
	}
	m := make([]SparseSegment, 0, len(nums)/2)
	for i := 0; i < len(nums); i += 2 {
		m = append(m, SparseSegment{nums[i], nums[i+1]})
	}
	return m
}

// oldGNUSparseNumbers reads the offset and length pairs of an old GNU
// sparse header (4 at byte 386, then 21 in each extension block while the
// byte after them is set), stopping at the first empty offset as GNU tar
// does.
func oldGNUSparseNumbers(rec []byte) []int64 {
	nums := []int64{}
	blk, at, count, ext := rec[:tarBlockSize], 386, 4, 482
	for {
		for i := 0; i < count; i++ {
			e := blk[at+24*i : at+24*i+24]
			if e[0] == 0 {
				break
			}
			off, ok1 := tarNumeric(e[:12])
			n, ok2 := tarNumeric(e[12:])
			if !ok1 || !ok2 {
				return nil
			}
			nums = append(nums, off, n)
		}
		if blk[ext] == 0 {
			return nums
		}
		rec = rec[tarBlockSize:]
		if len(rec) < tarBlockSize {
			return nil
		}
		blk, at, count, ext = rec[:tarBlockSize], 0, 21, 504
	}
}

// sparse1x0Numbers reads PAX 1.0's map: newline-ended decimal numbers, the
// count of segments first, then each one's offset and length.
func sparse1x0Numbers(b []byte) []int64 {
	var nums []int64
	want := int64(-1)
	for int64(len(nums)) != want {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		n, err := strconv.ParseInt(string(b[:i]), 10, 64)
		if err != nil || n < 0 {
			return nil
		}
		b = b[i+1:]
		if want < 0 {
			if n > int64(len(b)) {
				return nil
			}
			want, nums = 2*n, []int64{}
			continue
		}
		nums = append(nums, n)
	}
	return nums
}

// validSparseMap: segments in order, not overlapping, inside the file, and
// holding exactly the stored bytes.
func validSparseMap(m []SparseSegment, stored, size int64) bool {
	if m == nil {
		return false
	}
	var end, sum int64
	for _, s := range m {
		if s.Offset < end || s.Length < 0 || s.Offset > size-s.Length {
			return false
		}
		end, sum = s.Offset+s.Length, sum+s.Length
	}
	return sum == stored
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

// sparseOut is the sparse entry a TarWriter is writing: the data Write is
// given is the file expanded; what falls in the map's segments is written,
// what falls in a hole (zeros) is dropped.
type sparseOut struct {
	name    string
	m       []SparseSegment
	pos     int64 // in the expanded file
	size    int64
	written int64 // data bytes written after the headers, map included
}

// sparseToWrite returns the sparse map e can be written with: e was read
// sparse, its map was read again, and it is still the same file.
func sparseToWrite(e *Entry, h *tar.Header) *TarSparse {
	f, ok := e.Format.(*TarFormat)
	if !ok || f == nil || f.Sparse == nil || f.Sparse.Map == nil || e.Type != TypeRegular {
		return nil
	}
	if f.Header != nil && e.Size != f.Header.Size || !validSparseMap(f.Sparse.Map, f.Sparse.Stored, e.Size) {
		return nil
	}
	return f.Sparse
}

// writeSparse writes e as GNU tar's PAX 1.0 sparse file (GNU tar's
// sparse.c and xheader.c; bsdtar writes the same): an extended header with
// the GNU.sparse records and the entry's own, a ustar header named
// DIR/GNUSparseFile.0/BASE whose size is the map's and the data's, then the
// map (decimal lines, padded to a block) and the data.
func (w *TarWriter) writeSparse(e *Entry, h *tar.Header, sp *TarSparse) error {
	mapText := strconv.AppendInt(nil, int64(len(sp.Map)), 10)
	mapText = append(mapText, '\n')
	for _, s := range sp.Map {
		mapText = append(strconv.AppendInt(mapText, s.Offset, 10), '\n')
		mapText = append(strconv.AppendInt(mapText, s.Length, 10), '\n')
	}
	mapText = append(mapText, make([]byte, roundBlock(int64(len(mapText)))-int64(len(mapText)))...)
	recs := sparseRecords(e, h)
	dataSize := int64(len(mapText)) + sp.Stored
	if dataSize > maxOctal(12) {
		recs["size"] = strconv.FormatInt(dataSize, 10)
	}
	var text []byte
	for _, k := range slices.Sorted(maps.Keys(recs)) {
		text = append(text, paxRecord(k, recs[k])...)
	}
	dir, base := path.Split(e.Name)
	mtime := min(max(h.ModTime.Unix(), 0), maxOctal(12))
	xh := ustarBlock(ustarFields{name: dir + "PaxHeaders.0/" + base, flag: tar.TypeXHeader, mode: 0o644, size: int64(len(text)), mtime: mtime})
	main := ustarBlock(ustarFields{name: dir + "GNUSparseFile.0/" + base, flag: tar.TypeReg, mode: h.Mode,
		uid: int64(h.Uid), gid: int64(h.Gid), size: dataSize, mtime: mtime, uname: h.Uname, gname: h.Gname})
	text = append(text, make([]byte, roundBlock(int64(len(text)))-int64(len(text)))...)
	for _, b := range [][]byte{xh, text, main, mapText} {
		if _, err := w.out.Write(b); err != nil {
			return fmt.Errorf("tar %q: %w", e.Name, err)
		}
	}
	w.sparse = &sparseOut{name: e.Name, m: sp.Map, size: e.Size, written: int64(len(mapText))}
	return nil
}

// sparseRecords are the PAX records of a sparse entry's extended header:
// its own (xattrs), what its ustar header cannot hold, and GNU's.
func sparseRecords(e *Entry, h *tar.Header) map[string]string {
	recs := map[string]string{}
	for k, v := range h.PAXRecords {
		if !paxHeaderKeys[k] && !strings.HasPrefix(k, "GNU.sparse.") {
			recs[k] = v
		}
	}
	if t := h.ModTime; t.Nanosecond() != 0 || t.Unix() < 0 || t.Unix() > maxOctal(12) {
		recs["mtime"] = paxTime(t)
	}
	for k, t := range map[string]time.Time{"atime": h.AccessTime, "ctime": h.ChangeTime} {
		if !t.IsZero() && h.Format == tar.FormatPAX {
			recs[k] = paxTime(t)
		}
	}
	for k, id := range map[string]int{"uid": h.Uid, "gid": h.Gid} {
		if int64(id) > maxOctal(8) {
			recs[k] = strconv.Itoa(id)
		}
	}
	for k, n := range map[string]string{"uname": h.Uname, "gname": h.Gname} {
		if len(n) > 31 {
			recs[k] = n
		}
	}
	recs["GNU.sparse.major"], recs["GNU.sparse.minor"] = "1", "0"
	recs["GNU.sparse.name"] = e.Name
	recs["GNU.sparse.realsize"] = strconv.FormatInt(e.Size, 10)
	return recs
}

// paxHeaderKeys are the records a header's fields say (archive/tar's
// basicKeys): sparseRecords writes them only when the ustar header cannot.
var paxHeaderKeys = map[string]bool{"path": true, "linkpath": true, "size": true, "uid": true, "gid": true,
	"uname": true, "gname": true, "mtime": true, "atime": true, "ctime": true}

func paxTime(t time.Time) string {
	s, ns := t.Unix(), t.Nanosecond()
	if ns == 0 || s < 0 {
		return strconv.FormatInt(s, 10)
	}
	return strconv.FormatInt(s, 10) + "." + strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
}

// paxRecord formats "LEN KEY=VALUE\n", LEN counting itself.
func paxRecord(k, v string) string {
	body := " " + k + "=" + v + "\n"
	n := len(body)
	for n < len(strconv.Itoa(n))+len(body) {
		n = len(strconv.Itoa(n)) + len(body)
	}
	return strconv.Itoa(n) + body
}

// maxOctal is the largest number an octal field of width bytes (one of
// them the terminating NUL) holds.
func maxOctal(width int) int64 { return 1<<(3*(width-1)) - 1 }

type ustarFields struct {
	name, uname, gname          string
	flag                        byte
	mode, uid, gid, size, mtime int64
}

// ustarBlock encodes a POSIX ustar header (POSIX pax, "ustar Interchange
// Format"); fields too large for it are left at zero, their PAX records
// say them. A name past 100 bytes is cut: readers take the name from
// GNU.sparse.name.
func ustarBlock(f ustarFields) []byte {
	b := make([]byte, tarBlockSize)
	copy(b[0:100], f.name)
	octal := func(field []byte, v int64) {
		if v < 0 || v > maxOctal(len(field)) {
			v = 0
		}
		copy(field, fmt.Sprintf("%0*o", len(field)-1, v))
	}
	octal(b[100:108], f.mode&0o7777)
	octal(b[108:116], f.uid)
	octal(b[116:124], f.gid)
	octal(b[124:136], f.size)
	octal(b[136:148], f.mtime)
	b[156] = f.flag
	copy(b[257:265], "ustar\x0000")
	if len(f.uname) <= 31 {
		copy(b[265:297], f.uname)
	}
	if len(f.gname) <= 31 {
		copy(b[297:329], f.gname)
	}
	octal(b[329:337], 0)
	octal(b[337:345], 0)
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", tarChecksum(b)))
	return b
}

// write takes the next bytes of the expanded file.
func (s *sparseOut) write(out io.Writer, p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		if s.pos >= s.size {
			return done, fmt.Errorf("tar %q: %w", s.name, tar.ErrWriteTooLong)
		}
		for len(s.m) > 0 && s.m[0].Offset+s.m[0].Length <= s.pos {
			s.m = s.m[1:]
		}
		holeEnd := s.size
		if len(s.m) > 0 {
			holeEnd = s.m[0].Offset
		}
		if s.pos < holeEnd {
			n := int(min(int64(len(p)), holeEnd-s.pos))
			if bytes.IndexFunc(p[:n], func(r rune) bool { return r != 0 }) >= 0 {
				return done, fmt.Errorf("tar %q: data where its sparse map has a hole", s.name)
			}
			s.pos, done, p = s.pos+int64(n), done+n, p[n:]
			continue
		}
		n := int(min(int64(len(p)), s.m[0].Offset+s.m[0].Length-s.pos))
		if _, err := out.Write(p[:n]); err != nil {
			return done, fmt.Errorf("tar %q: %w", s.name, err)
		}
		s.pos, s.written, done, p = s.pos+int64(n), s.written+int64(n), done+n, p[n:]
	}
	return done, nil
}

// end pads the entry's data to a block once all of it came.
func (s *sparseOut) end(out io.Writer) error {
	if s.pos != s.size {
		return fmt.Errorf("tar %q: %d bytes of data missing", s.name, s.size-s.pos)
	}
	_, err := out.Write(make([]byte, roundBlock(s.written)-s.written))
	return err
}
