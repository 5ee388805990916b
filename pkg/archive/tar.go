package archive

import (
	"archive/tar"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"
)

// tarBlockSize is the unit in which tar pads headers and data.
const tarBlockSize = 512

// TarReader reads a tar stream (USTAR, PAX or GNU) as entries.
type TarReader struct {
	tr  *tar.Reader
	cnt *tarCounter
	// next is the offset of the next header: archive/tar does not buffer,
	// so the bytes consumed after Next are exactly the header blocks and the
	// entry's data then follows, padded to a block.
	next int64
	// cur names the entry whose data Read returns, for errors; active is
	// false before the first entry and after a failed Next.
	cur    string
	active bool
}

// NewTarReader returns a Reader over the tar stream r.
func NewTarReader(r io.Reader) *TarReader {
	cnt := &tarCounter{r: r}
	return &TarReader{tr: tar.NewReader(cnt), cnt: cnt}
}

// Next returns the next entry. Its Format holds the *tar.Header as read, so
// that a tar writer can reproduce user and group names, PAX records (xattrs),
// access and change times and the header format.
func (r *TarReader) Next() (*Entry, error) {
	r.active = false
	off := r.next
	h, err := r.tr.Next()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("tar: reading header at offset %d: %w", off, err)
	}
	e, err := entryFromTarHeader(h)
	if err != nil {
		return nil, err
	}
	e.Offset = off
	dataStart := r.cnt.n
	r.next = dataStart + roundBlock(e.Size)
	r.cur, r.active = e.Name, true
	return e, nil
}

// Read reads the data of the current entry.
func (r *TarReader) Read(p []byte) (int, error) {
	if !r.active {
		return 0, io.EOF
	}
	n, err := r.tr.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("tar %q: reading data: %w", r.cur, err)
	}
	return n, err
}

// tarCounter counts the bytes archive/tar consumes, for Entry.Offset.
type tarCounter struct {
	r io.Reader
	n int64
}

func (c *tarCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func roundBlock(n int64) int64 {
	return (n + tarBlockSize - 1) &^ (tarBlockSize - 1)
}

// tarTypes maps the tar type flags we understand to entry types. Anything
// else (GNU sparse, volume and multi-volume headers, dump dirs, global
// headers) carries meaning we cannot represent in an Entry, so it is refused
// instead of being rewritten into something different.
var tarTypes = map[byte]Type{
	tar.TypeReg:     TypeRegular,
	'\x00':          TypeRegular, // tar.TypeRegA: pre-POSIX regular files
	tar.TypeCont:    TypeRegular, // POSIX: "treat as a regular file"
	tar.TypeDir:     TypeDir,
	tar.TypeSymlink: TypeSymlink,
	tar.TypeLink:    TypeHardlink,
	tar.TypeChar:    TypeChar,
	tar.TypeBlock:   TypeBlock,
	tar.TypeFifo:    TypeFifo,
}

func entryFromTarHeader(h *tar.Header) (*Entry, error) {
	t, ok := tarTypes[h.Typeflag]
	if !ok {
		what := fmt.Sprintf("unsupported entry type %q", h.Typeflag)
		switch h.Typeflag {
		case tar.TypeGNUSparse:
			what = "GNU sparse files are not supported"
		case tar.TypeXGlobalHeader:
			// Its records apply to every later entry, and archive/tar does
			// not merge them in: skipping it would silently change them.
			what = "PAX global headers are not supported"
		}
		return nil, fmt.Errorf("tar %q: %s", h.Name, what)
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return nil, fmt.Errorf("tar %q: PAX sparse files are not supported", h.Name)
		}
	}
	e := &Entry{
		Name:    h.Name,
		Type:    t,
		Mode:    uint32(h.Mode) & PermMask,
		UID:     h.Uid,
		GID:     h.Gid,
		ModTime: h.ModTime,
		// tar has no link count; hard links are TypeHardlink entries.
		Nlink:  1,
		Format: h,
	}
	switch t {
	case TypeRegular:
		e.Size = h.Size
	case TypeSymlink, TypeHardlink:
		e.Linkname = h.Linkname
	case TypeChar, TypeBlock:
		if h.Devmajor < 0 || h.Devminor < 0 || h.Devmajor > 0xffffffff || h.Devminor > 0xffffffff {
			return nil, fmt.Errorf("tar %q: device number %d,%d out of range", h.Name, h.Devmajor, h.Devminor)
		}
		e.RdevMajor, e.RdevMinor = uint32(h.Devmajor), uint32(h.Devminor)
	}
	if h.Uid < 0 || h.Gid < 0 {
		return nil, fmt.Errorf("tar %q: negative owner %d:%d", h.Name, h.Uid, h.Gid)
	}
	return e, nil
}

// TarWriter writes entries as a tar stream.
type TarWriter struct {
	tw     *tar.Writer
	format tar.Format
	name   string // current entry, for errors
	// discard counts data bytes of a non-regular entry that tar has no room
	// for (the entry's Size as given); they are accepted and dropped.
	discard int64
	skip    bool // current entry is not written (trailer)
}

// NewTarWriter returns a Writer producing a tar stream on w. format is used
// for entries whose Format does not carry a *tar.Header with a format of its
// own; tar.FormatUnknown lets archive/tar pick the smallest that fits.
func NewTarWriter(w io.Writer, format tar.Format) *TarWriter {
	return &TarWriter{tw: tar.NewWriter(w), format: format}
}

// WriteHeader starts a new entry. TypeTrailer entries (cpio member
// boundaries) are ignored; sockets cannot be stored in tar and are an error.
func (w *TarWriter) WriteHeader(e *Entry) error {
	if w.discard > 0 {
		return fmt.Errorf("tar %q: %d bytes of data missing", w.name, w.discard)
	}
	// Flush now so that a short previous entry is reported under its own
	// name rather than the new one's.
	if err := w.tw.Flush(); err != nil {
		return fmt.Errorf("tar %q: %w", w.name, err)
	}
	w.name, w.skip, w.discard = e.Name, false, 0
	if e.Type == TypeTrailer {
		w.skip = true
		return nil
	}
	h, err := tarHeaderFromEntry(e, w.format)
	if err != nil {
		return err
	}
	err = w.tw.WriteHeader(h)
	if err != nil && h.Format != w.format && h.Format != tar.FormatUnknown {
		// The header format came from the input; after a rename or a chown
		// it may no longer fit (a long name in USTAR). archive/tar reports
		// that before writing anything, so retry with the writer's format.
		h.Format = w.format
		truncateTarTimes(h)
		err = w.tw.WriteHeader(h)
	}
	if err != nil {
		return fmt.Errorf("tar %q: %w", e.Name, err)
	}
	if e.Type != TypeRegular && e.Size > 0 {
		w.discard = e.Size
	}
	return nil
}

// tarTypeflags is the type flag written for each entry type.
var tarTypeflags = map[Type]byte{
	TypeRegular:  tar.TypeReg,
	TypeDir:      tar.TypeDir,
	TypeSymlink:  tar.TypeSymlink,
	TypeHardlink: tar.TypeLink,
	TypeChar:     tar.TypeChar,
	TypeBlock:    tar.TypeBlock,
	TypeFifo:     tar.TypeFifo,
}

func tarHeaderFromEntry(e *Entry, format tar.Format) (*tar.Header, error) {
	flag, ok := tarTypeflags[e.Type]
	if !ok {
		if e.Type == TypeSocket {
			return nil, fmt.Errorf("tar %q: sockets cannot be stored in tar", e.Name)
		}
		return nil, fmt.Errorf("tar %q: cannot write entry of %s", e.Name, e.Type)
	}
	h := &tar.Header{}
	sameType := false
	if base, ok := e.Format.(*tar.Header); ok && base != nil {
		*h = *base
		h.PAXRecords = maps.Clone(base.PAXRecords)
		// Deprecated, but archive/tar still fills it and merges it back.
		h.Xattrs = maps.Clone(base.Xattrs) //lint:ignore SA1019 archive/tar still reads and writes it
		sameType = tarTypes[base.Typeflag] == e.Type
		// A user or group name wins over the number when GNU tar or bsdtar
		// extract as root, so a name left over from a different id would
		// undo a chown made by a transform.
		if base.Uid != e.UID {
			h.Uname = ""
		}
		if base.Gid != e.GID {
			h.Gname = ""
		}
	}
	mode := int64(e.Mode & PermMask)
	if sameType {
		// Keep the input's own flag (TypeCont stays TypeCont) and any type
		// bits old archivers put above the permission bits.
		flag = h.Typeflag
		mode |= h.Mode &^ PermMask
	}
	h.Typeflag = flag
	h.Name = e.Name
	h.Mode = mode
	h.Uid, h.Gid = e.UID, e.GID
	h.ModTime = e.ModTime
	h.Size = 0
	h.Linkname = ""
	h.Devmajor, h.Devminor = 0, 0
	switch e.Type {
	case TypeRegular:
		h.Size = e.Size
	case TypeSymlink, TypeHardlink:
		h.Linkname = e.Linkname
	case TypeChar, TypeBlock:
		h.Devmajor, h.Devminor = int64(e.RdevMajor), int64(e.RdevMinor)
	}
	if h.Format == tar.FormatUnknown && len(h.PAXRecords) > 0 {
		// archive/tar reports some PAX archives (bsdtar's) as of unknown
		// format, but records mean PAX; saying so keeps their sub-second
		// times, which archive/tar would otherwise round away.
		h.Format = tar.FormatPAX
	}
	if h.Format == tar.FormatUnknown {
		h.Format = format
	}
	truncateTarTimes(h)
	return h, nil
}

// truncateTarTimes drops what h's format cannot store. Only PAX keeps
// sub-second times; elsewhere archive/tar would round to the nearest second,
// which can move an mtime into the future. Truncating is what GNU tar and
// cpio do.
func truncateTarTimes(h *tar.Header) {
	if h.Format == tar.FormatPAX {
		return
	}
	h.ModTime = truncSecond(h.ModTime)
	h.AccessTime = truncSecond(h.AccessTime)
	h.ChangeTime = truncSecond(h.ChangeTime)
}

func truncSecond(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Truncate(time.Second)
}

// Write writes data of the current entry.
func (w *TarWriter) Write(p []byte) (int, error) {
	if w.skip || w.discard > 0 || len(p) == 0 {
		if int64(len(p)) > w.discard {
			return 0, fmt.Errorf("tar %q: %w", w.name, tar.ErrWriteTooLong)
		}
		w.discard -= int64(len(p))
		return len(p), nil
	}
	n, err := w.tw.Write(p)
	if err != nil {
		err = fmt.Errorf("tar %q: %w", w.name, err)
	}
	return n, err
}

// Close writes the tar footer. It does not close the underlying writer.
func (w *TarWriter) Close() error {
	if w.discard > 0 {
		return fmt.Errorf("tar %q: %d bytes of data missing", w.name, w.discard)
	}
	if err := w.tw.Close(); err != nil {
		if w.name != "" {
			return fmt.Errorf("tar %q: %w", w.name, err)
		}
		return fmt.Errorf("tar: %w", err)
	}
	return nil
}
