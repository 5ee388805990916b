package archivetest

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strconv"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// InitramfsStats summarises an archive that passed CheckInitramfs.
type InitramfsStats struct {
	Members int // TRAILER!!!-terminated archives
	Entries int // entries, trailers excluded
}

// CheckInitramfs checks an uncompressed cpio stream against what the
// kernel's initramfs unpacker (init/initramfs.c) needs to unpack it fully:
//
//   - every header starts 4-byte aligned with magic 070701 or 070702 (the
//     kernel refuses 070707), with valid hex fields;
//   - names and symlink targets fit PATH_MAX (longer ones are skipped
//     silently by the kernel) and names are NUL-terminated;
//   - 070702 data sums to the header's check ("bad data checksum");
//   - every entry's parent directory came earlier (otherwise the kernel
//     skips the entry silently);
//   - the stream ends with a trailer, followed by zeros only.
//
// It lives here, apart from pkg/archive, and shares no parsing code with
// archive.CpioReader, so that it checks archive.CpioWriter's output
// independently. Errors name the byte offset of the header at fault.
func CheckInitramfs(r io.Reader) (InitramfsStats, error) {
	c := &initramfsCheck{
		br:   bufio.NewReaderSize(r, 64<<10),
		dirs: map[string]bool{".": true},
		buf:  make([]byte, 32<<10),
	}
	inMember := false
	for {
		if !inMember {
			// Zeros between members are allowed; the next header must be
			// aligned.
			end, err := c.skipPadding()
			if end || err != nil {
				return c.st, err
			}
			inMember = true
		}
		h, err := c.header()
		if err != nil {
			return c.st, err
		}
		target, err := c.data(h)
		if err != nil {
			return c.st, err
		}
		if h.name == "TRAILER!!!" {
			c.st.Members++
			inMember = false
			continue
		}
		if err := c.entry(h, target); err != nil {
			return c.st, err
		}
	}
}

// The kernel's view of a newc header: its length, magics and mode bits.
const (
	newcHeaderLen = 110
	magicNewc     = "070701"
	magicCRC      = "070702"
	modeTypeMask  = 0o170000
	modeSymlink   = 0o120000
	modeRegular   = 0o100000
	modeDir       = 0o040000
)

// initramfsCheck is CheckInitramfs's state: where it is in the stream, the
// directories made so far, and what it counted.
type initramfsCheck struct {
	br   *bufio.Reader
	off  int64
	dirs map[string]bool
	st   InitramfsStats
	buf  []byte
}

// checkedHeader is the part of a newc header the checks need, and where
// the header started.
type checkedHeader struct {
	start       int64
	magic, name string
	mode, check uint32
	size        int64
}

func (c *initramfsCheck) fail(at int64, name string, format string, args ...any) error {
	if name != "" {
		return fmt.Errorf("initramfs at byte %d (%s): %s", at, name, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("initramfs at byte %d: %s", at, fmt.Sprintf(format, args...))
}

// skipPadding reads the zeros before a member's first header and stops
// before the first other byte. It reports end at the end of the stream.
func (c *initramfsCheck) skipPadding() (end bool, err error) {
	for {
		b, err := c.br.ReadByte()
		if err == io.EOF {
			if c.st.Members == 0 {
				return true, c.fail(c.off, "", "no archive member")
			}
			return true, nil
		}
		if err != nil {
			return true, err
		}
		if b != 0 {
			c.br.UnreadByte()
			if c.off%4 != 0 {
				return true, c.fail(c.off, "", "header not 4-byte aligned")
			}
			return false, nil
		}
		c.off++
	}
}

// header reads and checks one header, its name and the name's padding.
func (c *initramfsCheck) header() (checkedHeader, error) {
	h := checkedHeader{start: c.off}
	var hdr [newcHeaderLen]byte
	if _, err := io.ReadFull(c.br, hdr[:]); err != nil {
		return h, c.fail(h.start, "", "truncated header (no trailer)")
	}
	c.off += newcHeaderLen
	h.magic = string(hdr[:6])
	if h.magic != magicNewc && h.magic != magicCRC {
		return h, c.fail(h.start, "", "magic %q is not 070701 or 070702", hdr[:6])
	}
	var f [13]uint32
	for i := range f {
		v, err := strconv.ParseUint(string(hdr[6+8*i:14+8*i]), 16, 32)
		if err != nil {
			return h, c.fail(h.start, "", "field %d is not hex", i)
		}
		f[i] = uint32(v)
	}
	namesize := int64(f[11])
	h.mode, h.size, h.check = f[1], int64(f[6]), f[12]
	if namesize < 1 || namesize > pathx.PathMax+1 {
		return h, c.fail(h.start, "", "name size %d outside 1..PATH_MAX+1", namesize)
	}
	nameBuf := make([]byte, namesize)
	if _, err := io.ReadFull(c.br, nameBuf); err != nil {
		return h, c.fail(h.start, "", "truncated name")
	}
	c.off += namesize
	if nameBuf[namesize-1] != 0 {
		return h, c.fail(h.start, "", "name not NUL-terminated")
	}
	h.name = string(nameBuf[:namesize-1])
	return h, c.pad(h, "truncated name padding")
}

// pad skips the padding to the next 4-byte boundary.
func (c *initramfsCheck) pad(h checkedHeader, truncated string) error {
	if n := (c.off+3)&^3 - c.off; n > 0 {
		if _, err := c.br.Discard(int(n)); err != nil {
			return c.fail(h.start, h.name, "%s", truncated)
		}
		c.off += n
	}
	return nil
}

// data reads h's data and its padding, checks the 070702 sum, and returns
// the target if h is a symlink.
func (c *initramfsCheck) data(h checkedHeader) ([]byte, error) {
	var sum uint32
	var target []byte
	isSymlink := h.mode&modeTypeMask == modeSymlink
	if isSymlink && h.size > pathx.PathMax {
		return nil, c.fail(h.start, h.name, "symlink target of %d bytes exceeds PATH_MAX", h.size)
	}
	for remaining := h.size; remaining > 0; {
		n := int(min(remaining, int64(len(c.buf))))
		k, err := io.ReadFull(c.br, c.buf[:n])
		if err != nil {
			return nil, c.fail(h.start, h.name, "truncated data")
		}
		for _, b := range c.buf[:k] {
			sum += uint32(b)
		}
		if isSymlink {
			target = append(target, c.buf[:k]...)
		}
		remaining -= int64(k)
	}
	c.off += h.size
	if err := c.pad(h, "truncated data padding"); err != nil {
		return nil, err
	}
	if h.magic == magicCRC && h.mode&modeTypeMask == modeRegular && sum != h.check {
		return nil, c.fail(h.start, h.name, "bad data checksum")
	}
	return target, nil
}

// entry checks what the kernel needs of an entry other than a trailer: its
// parent made before it, and a symlink's target not empty.
func (c *initramfsCheck) entry(h checkedHeader, target []byte) error {
	c.st.Entries++
	clean := path.Clean(h.name)
	if clean != "." {
		if parent := path.Dir(clean); !c.dirs[parent] {
			return c.fail(h.start, h.name, "parent directory %q does not precede it", parent)
		}
	}
	if h.mode&modeTypeMask == modeDir {
		c.dirs[clean] = true
	} else {
		delete(c.dirs, clean)
	}
	if h.mode&modeTypeMask == modeSymlink && len(target) == 0 {
		return c.fail(h.start, h.name, "empty symlink")
	}
	return nil
}
