package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// BlockSize is the unit GNU cpio pads a whole archive member to. Buildroot's
// images end that way; keeping it lets an untouched archive round-trip
// byte for byte.
const BlockSize = 512

// crcSpillThreshold bounds the memory a 070702 writer holds: the checksum
// sits in the header, before the data, so data is staged until complete,
// in memory up to this size and in a temporary file beyond it.
const crcSpillThreshold = 4 << 20

// CpioWriter writes newc (070701) or crc (070702) cpio archives the way GNU
// cpio does: uppercase hex, 4-byte alignment, a trailer padded to 512 bytes.
// It never invents fields: inode numbers and link counts are written as the
// entries carry them.
type CpioWriter struct {
	w       io.Writer
	variant CpioVariant
	off     int64

	cur       *Entry
	size      int64 // cur's data in the archive: a symlink's is its target
	remaining int64
	stage     *stage // crc only: the data, until the sum is known

	lastTrailer bool
	closed      bool
	err         error
	hdr         []byte // header being encoded, reused
}

// NewCpioWriter returns a writer of the given cpio variant.
func NewCpioWriter(w io.Writer, v CpioVariant) *CpioWriter {
	return &CpioWriter{w: w, variant: v}
}

func (cw *CpioWriter) fail(err error) error {
	if cw.err == nil {
		cw.err = err
	}
	return err
}

// WriteHeader starts a new entry. A TypeTrailer entry ends an archive member
// and is written with the padding it had (see trailerPad).
func (cw *CpioWriter) WriteHeader(e *Entry) error {
	if cw.err != nil {
		return cw.err
	}
	if cw.closed {
		return errors.New("cpio: write after close")
	}
	if err := cw.finishEntry(); err != nil {
		return cw.fail(err)
	}
	if err := validateCpio(e); err != nil {
		return cw.fail(&FormatError{Offset: e.Offset, Entry: e.Name, Err: err})
	}
	if e.Type == TypeTrailer {
		return cw.trailer(e)
	}
	cw.lastTrailer = false
	cw.cur, cw.size = e, e.Size
	if e.Type == TypeSymlink {
		cw.size = int64(len(e.Linkname))
	}
	cw.remaining = cw.size
	if cw.variant == CRC && e.Type == TypeRegular {
		cw.stage = newStage()
		return nil
	}
	if err := cw.writeHeader(e, cw.size, 0); err != nil {
		return cw.fail(err)
	}
	if e.Type == TypeSymlink {
		if err := cw.write([]byte(e.Linkname)); err != nil {
			return cw.fail(err)
		}
		cw.remaining = 0
	}
	return nil
}

// Write writes data of the current entry; more than its Size is an error.
func (cw *CpioWriter) Write(p []byte) (int, error) {
	if cw.err != nil {
		return 0, cw.err
	}
	if cw.cur == nil {
		return 0, errors.New("cpio: write before header")
	}
	if int64(len(p)) > cw.remaining {
		return 0, cw.fail(&FormatError{Offset: cw.cur.Offset, Entry: cw.cur.Name, Err: fmt.Errorf("data longer than its size %d", cw.cur.Size)})
	}
	var n int
	var err error
	if cw.stage != nil {
		n, err = cw.stage.Write(p)
	} else {
		n, err = cw.w.Write(p)
		cw.off += int64(n)
	}
	cw.remaining -= int64(n)
	if err != nil {
		return n, cw.fail(err)
	}
	return n, nil
}

// Close finishes the last entry and, unless the stream already ended on a
// trailer, writes one. It does not close the underlying writer.
func (cw *CpioWriter) Close() error {
	if cw.closed || cw.err != nil {
		return cw.err
	}
	if err := cw.finishEntry(); err != nil {
		return cw.fail(err)
	}
	cw.closed = true
	if !cw.lastTrailer {
		// GNU's: padded to BlockSize, as trailerPad pads one of no offset.
		return cw.trailer(&Entry{Name: trailerName, Type: TypeTrailer, Nlink: 1, Offset: -1})
	}
	return nil
}

// trailer writes e, a trailer, and the zeros after it.
func (cw *CpioWriter) trailer(e *Entry) error {
	if err := cw.writeHeader(e, 0, e.Check); err != nil {
		return cw.fail(err)
	}
	if err := cw.zeros(cw.trailerPad(e)); err != nil {
		return cw.fail(err)
	}
	cw.lastTrailer = true
	return nil
}

// trailerPad keeps the input's intent for the zeros after a trailer: if the
// input member ended on a 512-byte boundary the output does too, whatever
// was removed before it; otherwise the same number of zeros follow.
func (cw *CpioWriter) trailerPad(e *Entry) int64 {
	if e.Offset < 0 {
		return padTo(cw.off, BlockSize)
	}
	inEnd := e.Offset + pad4(newcHeaderLen+int64(len(e.Name))+1)
	if e.Pad > 0 && (inEnd+e.Pad)%BlockSize == 0 {
		return padTo(cw.off, BlockSize)
	}
	return e.Pad
}

func (cw *CpioWriter) finishEntry() error {
	e := cw.cur
	if e == nil {
		return nil
	}
	cw.cur = nil
	if cw.remaining > 0 {
		return &FormatError{Offset: e.Offset, Entry: e.Name, Err: fmt.Errorf("data shorter than its size: %d bytes missing", cw.remaining)}
	}
	size := cw.size
	if st := cw.stage; st != nil {
		cw.stage = nil
		defer st.Close()
		if err := cw.writeHeader(e, size, st.sum); err != nil {
			return err
		}
		r, err := st.Reader()
		if err != nil {
			return err
		}
		n, err := io.Copy(struct{ io.Writer }{cw.w}, r)
		cw.off += n
		if err != nil {
			return err
		}
	}
	return cw.zeros(pad4(size) - size)
}

func (cw *CpioWriter) writeHeader(e *Entry, size int64, check uint32) error {
	// One buffer for the life of the writer: a fresh one per header
	// escaped to the heap through the io.Writer, 4 KiB of garbage per
	// entry, and showed as a quarter of repack's time.
	h := cw.hdr[:0]
	h = append(h, cw.variant.magic()...)
	mode := e.UnixMode()
	if e.Type == TypeTrailer {
		mode = e.Mode
	}
	for _, v := range [13]uint32{
		uint32(e.Inode), mode, uint32(e.UID), uint32(e.GID), e.Nlink,
		uint32(unixTime(e.ModTime)), uint32(size),
		e.DevMajor, e.DevMinor, e.RdevMajor, e.RdevMinor,
		uint32(len(e.Name) + 1), check,
	} {
		for shift := 28; shift >= 0; shift -= 4 {
			h = append(h, "0123456789ABCDEF"[v>>shift&0xF])
		}
	}
	h = append(h, e.Name...)
	h = append(h, 0)
	for int64(len(h))%4 != 0 {
		h = append(h, 0)
	}
	cw.hdr = h
	return cw.write(h)
}

func (cw *CpioWriter) write(p []byte) error {
	n, err := cw.w.Write(p)
	cw.off += int64(n)
	return err
}

var zeroBlock [BlockSize]byte

func (cw *CpioWriter) zeros(n int64) error {
	for n > 0 {
		k := min(n, BlockSize)
		if err := cw.write(zeroBlock[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// validateCpio refuses what newc cannot hold rather than truncating it.
func validateCpio(e *Entry) error {
	switch e.Type {
	case TypeHardlink:
		return errors.New("tar-style hard link cannot be written to cpio as is: convert it to a link group first")
	case 0:
		return errors.New("entry has no type")
	}
	if len(e.Name) == 0 {
		return errors.New("empty name")
	}
	if len(e.Name) > pathx.PathMax {
		return fmt.Errorf("name of %d bytes exceeds PATH_MAX (%d)", len(e.Name), pathx.PathMax)
	}
	if bytes.IndexByte([]byte(e.Name), 0) >= 0 {
		return errors.New("name contains a NUL byte")
	}
	if e.Type == TypeSymlink && len(e.Linkname) > pathx.PathMax {
		return fmt.Errorf("symlink target of %d bytes exceeds PATH_MAX (%d)", len(e.Linkname), pathx.PathMax)
	}
	if e.Type != TypeRegular && e.Size != 0 {
		return fmt.Errorf("%s with %d data bytes", e.Type, e.Size)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"size", e.Size}, {"uid", int64(e.UID)}, {"gid", int64(e.GID)},
		{"mtime", unixTime(e.ModTime)}, {"inode", int64(e.Inode)},
	} {
		if f.v < 0 || f.v > math.MaxUint32 {
			return fmt.Errorf("%s %d does not fit a newc header", f.name, f.v)
		}
	}
	return nil
}

// unixTime treats the zero time.Time as the epoch: an entry built in
// memory without a time means "no time", not year 1.
func unixTime(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// padTo is how many bytes take off to a multiple of block, a power of two.
func padTo(off, block int64) int64 { return -off & (block - 1) }

// stage holds one entry's data while its checksum is computed.
type stage struct {
	Spill
	sum uint32
}

func newStage() *stage {
	return &stage{Spill: Spill{Limit: crcSpillThreshold, Pattern: "rootfs-trim-crc-*", What: "staging crc data"}}
}

func (s *stage) Write(p []byte) (int, error) {
	s.sum = sumBytes(s.sum, p)
	return s.Spill.Write(p)
}
