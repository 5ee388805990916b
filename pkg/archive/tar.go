package archive

import (
	"archive/tar"
	"fmt"
	"io"
	"maps"
	"time"
)

// tarBlockSize is the unit in which tar pads headers and data.
const tarBlockSize = 512

// TarReader reads a tar stream (USTAR, PAX or GNU) as entries. PAX global
// headers and GNU sparse files are read as GNU tar reads them: a global
// header's records are defaults for the entries after it, a sparse file's
// data is its holes expanded (see tar_global.go and tar_sparse.go).
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
	// global is the PAX global header in effect, nil before the first.
	global *TarGlobal
	// sparse is set while the current entry is a sparse file, whose holes
	// Read charges to holes.
	sparse bool
	holes  expandBudget
}

// expandBudget is charged with bytes a reader makes up rather than reads
// (a sparse file's holes), so that they count against --max-size as
// decompressed bytes do.
type expandBudget interface {
	charge(n int64) error
}

// NewTarReader returns a Reader over the tar stream r. The holes of its
// sparse files are not limited; NewReaderFor charges them to the Budget
// of the stream (container.Open: OpenOptions.MaxSize).
func NewTarReader(r io.Reader) *TarReader {
	cnt := &tarCounter{r: r}
	return &TarReader{tr: tar.NewReader(cnt), cnt: cnt}
}

// Next returns the next entry. Its Format is a *TarFormat holding the
// *tar.Header as read, so that a tar writer can reproduce user and group
// names, PAX records (xattrs), access and change times and the header
// format, and the global header and sparse map behind the entry.
func (r *TarReader) Next() (*Entry, error) {
	r.active, r.sparse = false, false
	for {
		off := r.next
		r.cnt.record(off)
		h, err := r.tr.Next()
		rec := r.cnt.stop()
		if err == io.EOF {
			return nil, io.EOF
		}
		if err != nil {
			return nil, fmt.Errorf("tar: reading header at offset %d: %w", off, err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			g, err := newTarGlobal(h, off, rec)
			if err != nil {
				return nil, err
			}
			// archive/tar reads the records' padding with the next header.
			r.global, r.next = g, roundBlock(r.cnt.n)
			continue
		}
		main, err := checkTarNames(h, rec, off)
		if err != nil {
			return nil, err
		}
		f := &TarFormat{Header: h, Global: r.global, FromGlobal: r.global.apply(h)}
		e, err := entryFromTarHeader(h)
		if err != nil {
			return nil, err
		}
		if e.Xattrs, err = tarXattrs(h.PAXRecords); err != nil {
			return nil, fmt.Errorf("tar %q at offset %d: %w", e.Name, off, err)
		}
		e.Format, e.Offset = f, off
		var stored int64
		if f.Sparse, stored, err = sparseLayout(h, rec, main, off, r.cnt.n, e.Size); err != nil {
			return nil, err
		}
		r.next = r.cnt.n + roundBlock(stored)
		r.cur, r.active, r.sparse = e.Name, true, f.Sparse != nil
		return e, nil
	}
}

func (r *TarReader) Read(p []byte) (int, error) {
	if !r.active {
		return 0, io.EOF
	}
	before := r.cnt.n
	n, err := r.tr.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("tar %q: reading data: %w", r.cur, err)
	}
	if r.sparse && r.holes != nil {
		// What came out beyond what was read is hole.
		if made := int64(n) - (r.cnt.n - before); made > 0 {
			if cerr := r.holes.charge(made); cerr != nil {
				return 0, fmt.Errorf("tar %q: expanding its holes: %w", r.cur, cerr)
			}
		}
	}
	return n, err
}

// tarCounter counts the bytes archive/tar consumes, for Entry.Offset, and
// keeps those of the headers Next reads, where a sparse file's layout is.
type tarCounter struct {
	r io.Reader
	n int64
	// from is where the kept bytes start (the header's offset: what Next
	// reads before it is the previous entry's data, skipped); on is set
	// during Next.
	from int64
	on   bool
	kept []byte
	// over is set when the headers outgrew maxKeptHeaders.
	over bool
}

// maxKeptHeaders bounds the header bytes kept for one entry. archive/tar
// takes up to 1 MiB of PAX records and 1 MiB of each GNU long name; only
// a sparse file's map could need more.
const maxKeptHeaders = 4 << 20

func (c *tarCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.on && n > 0 {
		b := p[:n]
		if skip := c.from - c.n; skip > 0 {
			b = b[min(skip, int64(n)):]
		}
		if len(c.kept)+len(b) > maxKeptHeaders {
			c.over = true
		} else {
			c.kept = append(c.kept, b...)
		}
	}
	c.n += int64(n)
	return n, err
}

func (c *tarCounter) record(from int64) {
	c.from, c.on, c.kept, c.over = from, true, c.kept[:0], false
}

// stop ends the recording; the bytes are valid until the next record, nil
// when they outgrew maxKeptHeaders.
func (c *tarCounter) stop() []byte {
	c.on = false
	if c.over {
		return nil
	}
	return c.kept
}

func roundBlock(n int64) int64 {
	return (n + tarBlockSize - 1) &^ (tarBlockSize - 1)
}

// tarTypes maps the tar type flags we understand to entry types. Anything
// else (volume and multi-volume headers, dump dirs) carries meaning we
// cannot represent in an Entry, so it is refused instead of being rewritten
// into something different. archive/tar itself consumes PAX extended and
// global headers and GNU long names, and expands sparse files.
var tarTypes = map[byte]Type{
	tar.TypeReg:       TypeRegular,
	'\x00':            TypeRegular, // tar.TypeRegA: pre-POSIX regular files
	tar.TypeCont:      TypeRegular, // POSIX: "treat as a regular file"
	tar.TypeGNUSparse: TypeRegular, // its data is its holes expanded
	tar.TypeDir:       TypeDir,
	tar.TypeSymlink:   TypeSymlink,
	tar.TypeLink:      TypeHardlink,
	tar.TypeChar:      TypeChar,
	tar.TypeBlock:     TypeBlock,
	tar.TypeFifo:      TypeFifo,
}

func entryFromTarHeader(h *tar.Header) (*Entry, error) {
	t, ok := tarTypes[h.Typeflag]
	if !ok {
		return nil, fmt.Errorf("tar %q: unsupported entry type %q", h.Name, h.Typeflag)
	}
	e := &Entry{
		Name:    h.Name,
		Type:    t,
		Mode:    uint32(h.Mode) & PermMask,
		UID:     h.Uid,
		GID:     h.Gid,
		ModTime: h.ModTime,
		// tar has no link count; hard links are TypeHardlink entries.
		Nlink: 1,
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
	out    io.Writer // tw's, for a PAX global header copied as it was read
	format tar.Format
	name   string // current entry, for errors
	// discard counts data bytes of a non-regular entry that tar has no room
	// for (the entry's Size as given); they are accepted and dropped.
	discard int64
	skip    bool // current entry is not written (trailer)
	// global is the PAX global header last written.
	global *TarGlobal
	// sparse is set while a sparse entry's data is written.
	sparse *sparseOut
}

// NewTarWriter returns a Writer producing a tar stream on w. format is used
// for entries whose Format does not carry a *tar.Header with a format of its
// own; tar.FormatUnknown lets archive/tar pick the smallest that fits.
func NewTarWriter(w io.Writer, format tar.Format) *TarWriter {
	return &TarWriter{tw: tar.NewWriter(w), out: w, format: format}
}

// WriteHeader starts a new entry. TypeTrailer entries (cpio member
// boundaries) are ignored; sockets cannot be stored in tar and are an error.
func (w *TarWriter) WriteHeader(e *Entry) error {
	if err := w.endEntry(); err != nil {
		return err
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
	if err := w.writeGlobal(e); err != nil {
		return err
	}
	if sp := sparseToWrite(e, h); sp != nil {
		return w.writeSparse(e, h, sp)
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

func tarHeaderFromEntry(e *Entry, format tar.Format) (*tar.Header, error) {
	flag := e.Type.info().tar
	if flag == 0 {
		if e.Type == TypeSocket {
			return nil, fmt.Errorf("tar %q: sockets cannot be stored in tar", e.Name)
		}
		return nil, fmt.Errorf("tar %q: cannot write entry of %s", e.Name, e.Type)
	}
	h := &tar.Header{}
	sameType := false
	if base := tarHeaderOf(e); base != nil {
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
	if had, _ := tarXattrs(h.PAXRecords); !maps.Equal(had, e.Xattrs) {
		// Set or changed since read (a tree's entry, a transform): the
		// records say what the entry has. Else they stay as they were.
		setTarXattrs(h, e.Xattrs)
	}
	mode := int64(e.Mode & PermMask)
	if sameType {
		// Keep the input's own flag (TypeCont stays TypeCont) and any type
		// bits old archivers put above the permission bits.
		flag = h.Typeflag
		mode |= h.Mode &^ PermMask
		if flag == tar.TypeGNUSparse {
			// Not written sparse (writeSparse did not take it): the data
			// goes out expanded, as a plain file.
			flag = tar.TypeReg
		}
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
	for _, t := range []*time.Time{&h.ModTime, &h.AccessTime, &h.ChangeTime} {
		if !t.IsZero() {
			*t = t.Truncate(time.Second)
		}
	}
}

func (w *TarWriter) Write(p []byte) (int, error) {
	if w.sparse != nil {
		return w.sparse.write(w.out, p)
	}
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

// endEntry checks the entry being written got all its data, and pads a
// sparse one's.
func (w *TarWriter) endEntry() error {
	if s := w.sparse; s != nil {
		w.sparse = nil
		return s.end(w.out)
	}
	if w.discard > 0 {
		return fmt.Errorf("tar %q: %d bytes of data missing", w.name, w.discard)
	}
	return nil
}

// Close writes the tar footer. It does not close the underlying writer.
func (w *TarWriter) Close() error {
	if err := w.endEntry(); err != nil {
		return err
	}
	if err := w.tw.Close(); err != nil {
		if w.name != "" {
			return fmt.Errorf("tar %q: %w", w.name, err)
		}
		return fmt.Errorf("tar: %w", err)
	}
	return nil
}
