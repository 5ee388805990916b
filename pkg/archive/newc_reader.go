package archive

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// The newc header: a 6-byte magic and thirteen 8-digit hex fields, 110 bytes,
// followed by the NUL-terminated name; header+name and the data are each
// padded to a multiple of 4 bytes.
const (
	newcHeaderLen = 110
	magicNewc     = "070701"
	magicCRC      = "070702"
	magicOldASCII = "070707"
	trailerName   = "TRAILER!!!"
)

var newcFields = [13]string{"ino", "mode", "uid", "gid", "nlink", "mtime", "filesize",
	"devmajor", "devminor", "rdevmajor", "rdevminor", "namesize", "check"}

// CpioVariant is the flavour of a cpio archive's headers.
type CpioVariant uint8

const (
	Newc CpioVariant = iota // 070701
	CRC                     // 070702: the header carries a sum of the data bytes
)

func (v CpioVariant) magic() string {
	if v == CRC {
		return magicCRC
	}
	return magicNewc
}

// FormatError describes malformed input: which entry, at which byte offset of
// the uncompressed stream, and what is wrong.
type FormatError struct {
	Offset int64
	Entry  string // empty when the header could not be parsed far enough
	Err    error
}

func (e *FormatError) Error() string {
	if e.Entry != "" {
		return fmt.Sprintf("entry %q at offset %d: %v", e.Entry, e.Offset, e.Err)
	}
	return fmt.Sprintf("offset %d: %v", e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ErrChecksum reports a 070702 entry whose data does not sum to its header.
var ErrChecksum = errors.New("bad data checksum")

// CpioReader reads newc and crc cpio archives, including several archives
// concatenated with zero padding between them, as the kernel accepts.
type CpioReader struct {
	r   *bufio.Reader
	off int64 // bytes consumed from r

	cur       *Entry
	remaining int64 // unread data bytes of cur
	dataPad   int   // padding after cur's data
	sum       uint32
	summing   bool

	sawTrailer bool // the last entry returned ended a member
	err        error

	// segment: read as one segment of an initrd (NewSegmentCpioReader).
	segment segmentMode
	// Foreign is set when a raw segment stopped at a byte that starts no
	// cpio header: where the next segment begins.
	Foreign bool
}

// segmentMode is how a segment's cpio stream ends, as init/initramfs.c
// reads it: after each entry the unpacker is in its Reset state, which
// skips zero bytes; the next must be a header's "0" or the end.
type segmentMode uint8

const (
	notSegment segmentMode = iota
	// rawSegment: a raw archive within the initrd; anything but a "0" at
	// a header boundary ends it (the next segment, compressed).
	rawSegment
	// compressedSegment: a decompressed stream, which must end at a
	// header boundary (a trailer is optional); anything else at one is
	// "junk within compressed archive".
	compressedSegment
)

// The kernel's own words (init/initramfs.c), which the segmented reader's
// errors carry so that they read as the boot would fail.
var (
	ErrJunkWithin = errors.New("junk within compressed archive")
	ErrJunkAtEnd  = errors.New("junk at the end of compressed archive")
)

// NewSegmentCpioReader returns a reader of one initrd segment's cpio
// stream: raw (a run of cpio entries in the file itself, ended by a byte
// that starts no header) or decompressed. A trailer is optional in both.
func NewSegmentCpioReader(r io.Reader, raw bool) *CpioReader {
	cr := NewCpioReader(r)
	cr.segment = compressedSegment
	if raw {
		cr.segment = rawSegment
	}
	return cr
}

// PeekHead returns up to n bytes of what the reader is about to read,
// without consuming them: the format of a segment's payload.
func (cr *CpioReader) PeekHead(n int) ([]byte, error) { return cr.r.Peek(n) }

// Offset is how many bytes of the stream the reader has consumed.
func (cr *CpioReader) Offset() int64 { return cr.off }

// NewCpioReader returns a reader of the newc or crc cpio archive in r.
func NewCpioReader(r io.Reader) *CpioReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 256<<10)
	}
	return &CpioReader{r: br, sawTrailer: true}
}

// Next advances to the next entry; trailers are entries of TypeTrailer.
func (cr *CpioReader) Next() (*Entry, error) {
	if cr.err != nil {
		return nil, cr.err
	}
	e, err := cr.next()
	if err != nil {
		cr.err = err
		return nil, err
	}
	return e, nil
}

func (cr *CpioReader) next() (*Entry, error) {
	if err := cr.finishEntry(); err != nil {
		return nil, err
	}
	if cr.segment != notSegment {
		if done, err := cr.segmentBoundary(); done {
			return nil, err
		}
	}
	start := cr.off
	variant, f, err := cr.readHeader(start)
	if err != nil {
		return nil, err
	}
	name, err := cr.readName(start, f[11])
	if err != nil {
		return nil, err
	}
	mode, size := f[1], f[6]
	e := &Entry{
		Name:      name,
		Mode:      mode & PermMask,
		UID:       int(f[2]),
		GID:       int(f[3]),
		ModTime:   time.Unix(int64(f[5]), 0).UTC(),
		Size:      int64(size),
		Inode:     uint64(f[0]),
		Nlink:     f[4],
		DevMajor:  f[7],
		DevMinor:  f[8],
		RdevMajor: f[9],
		RdevMinor: f[10],
		Check:     f[12],
		Offset:    start,
		Format:    variant,
	}
	if name == trailerName {
		return cr.trailer(e, mode, size)
	}
	return cr.startEntry(e, mode, size)
}

// readHeader reads the fixed part of the header that starts at start: its
// variant and its thirteen fields. io.EOF is the clean end of the stream,
// after a trailer and nothing or zeros.
func (cr *CpioReader) readHeader(start int64) (CpioVariant, [13]uint32, error) {
	var f [13]uint32
	var hdr [newcHeaderLen]byte
	n, err := io.ReadFull(cr.r, hdr[:])
	cr.off += int64(n)
	if err == io.EOF && cr.sawTrailer {
		return 0, f, io.EOF
	}
	if err != nil {
		if cr.sawTrailer && bytes.Equal(hdr[:n], zeroBlock[:n]) {
			// Padding shorter than a header after the last trailer.
			return 0, f, io.EOF
		}
		return 0, f, &FormatError{Offset: start, Err: fmt.Errorf("truncated header: %w", io.ErrUnexpectedEOF)}
	}
	var variant CpioVariant
	switch string(hdr[:6]) {
	case magicNewc:
		variant = Newc
	case magicCRC:
		variant = CRC
	case magicOldASCII:
		return 0, f, &FormatError{Offset: start, Err: errors.New("old portable ASCII cpio (070707) is not supported: the kernel refuses it too; rebuild with -H newc")}
	default:
		return 0, f, &FormatError{Offset: start, Err: fmt.Errorf("bad magic %s: not a newc or crc cpio header", printable(hdr[:6]))}
	}
	for i := range f {
		field := hdr[6+8*i : 14+8*i]
		var v [4]byte
		if _, err := hex.Decode(v[:], field); err != nil {
			return 0, f, &FormatError{Offset: start, Err: fmt.Errorf("field %s: invalid hex %s", newcFields[i], printable(field))}
		}
		f[i] = binary.BigEndian.Uint32(v[:])
	}
	return variant, f, nil
}

// readName reads the namesize bytes of name after the header at start, and
// the padding after them.
func (cr *CpioReader) readName(start int64, namesize uint32) (string, error) {
	if namesize == 0 {
		return "", &FormatError{Offset: start, Err: errors.New("name size is 0")}
	}
	if namesize > pathx.PathMax+1 {
		return "", &FormatError{Offset: start, Err: fmt.Errorf("name of %d bytes exceeds PATH_MAX (%d)", namesize-1, pathx.PathMax)}
	}
	nameBuf := make([]byte, pad4(newcHeaderLen+int64(namesize))-newcHeaderLen)
	n, err := io.ReadFull(cr.r, nameBuf)
	cr.off += int64(n)
	if err != nil {
		return "", &FormatError{Offset: start, Err: fmt.Errorf("truncated name: %w", io.ErrUnexpectedEOF)}
	}
	if nameBuf[namesize-1] != 0 {
		return "", &FormatError{Offset: start, Err: errors.New("name is not NUL-terminated")}
	}
	name := string(nameBuf[:namesize-1])
	if name == "" {
		return "", &FormatError{Offset: start, Err: errors.New("empty name")}
	}
	for _, c := range nameBuf[:namesize-1] {
		if c == 0 {
			return "", &FormatError{Offset: start, Err: fmt.Errorf("name %s contains a NUL byte", printable([]byte(name)))}
		}
	}
	return name, nil
}

// trailer finishes e, a trailer, and the member it ends: the zeros after it
// are e's Pad.
func (cr *CpioReader) trailer(e *Entry, mode, size uint32) (*Entry, error) {
	e.Type = TypeTrailer
	e.Mode = mode // kept whole: a trailer's mode has no type to split off
	if size != 0 {
		return nil, &FormatError{Offset: e.Offset, Entry: e.Name, Err: fmt.Errorf("trailer has %d data bytes", size)}
	}
	pad, err := cr.skipZeros()
	if err != nil {
		return nil, &FormatError{Offset: cr.off, Err: err}
	}
	e.Pad = pad
	cr.sawTrailer = true
	return e, nil
}

// startEntry makes e, of the given header mode and size, the current entry
// whose data Read returns; a symlink's target is read into Linkname.
func (cr *CpioReader) startEntry(e *Entry, mode, size uint32) (*Entry, error) {
	t, ok := typeFromUnixMode(mode)
	if !ok {
		return nil, &FormatError{Offset: e.Offset, Entry: e.Name, Err: fmt.Errorf("unknown file type in mode %#o", mode)}
	}
	e.Type = t
	cr.sawTrailer = false
	cr.cur = e
	cr.remaining = int64(size)
	cr.dataPad = int(pad4(int64(size)) - int64(size))
	cr.sum = 0
	// The kernel and GNU cpio sum regular files only: a symlink's target
	// is data too, but its check is 0.
	cr.summing = e.Format == CRC && t == TypeRegular

	switch t {
	case TypeSymlink:
		if size > pathx.PathMax {
			return nil, &FormatError{Offset: e.Offset, Entry: e.Name, Err: fmt.Errorf("symlink target of %d bytes exceeds PATH_MAX (%d)", size, pathx.PathMax)}
		}
		target := make([]byte, size)
		if _, err := io.ReadFull(cr, target); err != nil {
			return nil, &FormatError{Offset: e.Offset, Entry: e.Name, Err: fmt.Errorf("reading symlink target: %w", err)}
		}
		e.Linkname = string(target)
		e.Size = 0
	case TypeDir, TypeChar, TypeBlock, TypeFifo, TypeSocket:
		if size != 0 {
			return nil, &FormatError{Offset: e.Offset, Entry: e.Name, Err: fmt.Errorf("%s has %d data bytes", t, size)}
		}
	}
	return e, nil
}

func (cr *CpioReader) Read(p []byte) (int, error) {
	if cr.err != nil {
		return 0, cr.err
	}
	if cr.cur == nil || cr.remaining == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > cr.remaining {
		p = p[:cr.remaining]
	}
	n, err := cr.r.Read(p)
	cr.off += int64(n)
	cr.remaining -= int64(n)
	if cr.summing {
		cr.sum = sumBytes(cr.sum, p[:n])
	}
	switch {
	case err == io.EOF && cr.remaining > 0:
		err = &FormatError{Offset: cr.cur.Offset, Entry: cr.cur.Name, Err: fmt.Errorf("truncated data, %d bytes missing: %w", cr.remaining, io.ErrUnexpectedEOF)}
	case err == io.EOF:
		err = nil
	}
	if err == nil && cr.remaining == 0 {
		err = cr.verify()
	}
	if err != nil {
		cr.err = err
	}
	return n, err
}

func (cr *CpioReader) verify() error {
	if cr.summing && cr.sum != cr.cur.Check {
		cr.summing = false
		return &FormatError{Offset: cr.cur.Offset, Entry: cr.cur.Name, Err: fmt.Errorf("%w: header says %#x, data sums to %#x", ErrChecksum, cr.cur.Check, cr.sum)}
	}
	cr.summing = false
	return nil
}

// finishEntry skips what is left of the current entry's data (summing it
// when the archive is 070702, so a skipped entry is still verified) and the
// padding after it.
func (cr *CpioReader) finishEntry() error {
	if cr.cur == nil {
		return nil
	}
	if cr.remaining > 0 && !cr.summing {
		// Skipping unread data is what list and audit mostly do: let
		// bufio drop it in large steps rather than copying it out.
		n, err := cr.r.Discard(int(cr.remaining))
		cr.off += int64(n)
		cr.remaining -= int64(n)
		if err == io.EOF {
			return &FormatError{Offset: cr.cur.Offset, Entry: cr.cur.Name, Err: fmt.Errorf("truncated data, %d bytes missing: %w", cr.remaining, io.ErrUnexpectedEOF)}
		}
		if err != nil {
			return &FormatError{Offset: cr.cur.Offset, Entry: cr.cur.Name, Err: err}
		}
	}
	// Summed: through Read, which fails on a short stream and verifies
	// the sum at the end.
	if cr.remaining > 0 {
		if _, err := io.Copy(io.Discard, struct{ io.Reader }{cr}); err != nil {
			return err
		}
	} else if cr.summing {
		if err := cr.verify(); err != nil {
			return err
		}
	}
	if cr.dataPad > 0 {
		n, err := cr.r.Discard(cr.dataPad)
		cr.off += int64(n)
		if err != nil {
			return &FormatError{Offset: cr.cur.Offset, Entry: cr.cur.Name, Err: fmt.Errorf("truncated padding: %w", io.ErrUnexpectedEOF)}
		}
	}
	cr.cur = nil
	return nil
}

// skipZeros consumes the zero bytes that follow a trailer. The next member,
// if any, must start 4-byte aligned, as the kernel requires.
func (cr *CpioReader) skipZeros() (int64, error) {
	var n int64
	for {
		buf, err := cr.r.Peek(1)
		if len(buf) == 0 {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
		if buf[0] != 0 {
			if cr.off%4 != 0 {
				return n, errors.New("next archive member is not 4-byte aligned")
			}
			return n, nil
		}
		// Discard runs of zeros a buffer at a time.
		avail := cr.r.Buffered()
		chunk, _ := cr.r.Peek(avail)
		k := 0
		for k < len(chunk) && chunk[k] == 0 {
			k++
		}
		cr.r.Discard(k)
		cr.off += int64(k)
		n += int64(k)
	}
}

// segmentBoundary is the kernel's Reset state at a header boundary of a
// segment: zero bytes skipped, then the end (io.EOF), a header, or what
// ends a raw segment. done reports that the segment's entries are over.
func (cr *CpioReader) segmentBoundary() (done bool, err error) {
	if !cr.sawTrailer {
		if _, err := cr.skipZeros(); err != nil {
			return true, &FormatError{Offset: cr.off, Err: err}
		}
	}
	b, err := cr.r.Peek(1)
	if len(b) == 0 {
		if err == io.EOF {
			return true, io.EOF
		}
		return true, err
	}
	if b[0] == '0' {
		return false, nil
	}
	if cr.segment == rawSegment {
		cr.Foreign = true
		return true, io.EOF
	}
	b, _ = cr.r.Peek(8)
	return true, &FormatError{Offset: cr.off, Err: fmt.Errorf("%w: %s where a cpio header should start", ErrJunkWithin, printable(b))}
}

func sumBytes(sum uint32, p []byte) uint32 {
	for _, c := range p {
		sum += uint32(c)
	}
	return sum
}

func pad4(n int64) int64 { return (n + 3) &^ 3 }

// printable quotes bytes from a hostile header safely for an error message,
// in Go's double-quoted form; callers put it in with %s: %q would escape
// the escapes again (starts with "hello\\n", for hello and a newline).
func printable(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return strconv.Quote(string(b))
}
