package archive

import (
	"bufio"
	"fmt"
	"io"
	"path"

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
// It deliberately shares no parsing code with CpioReader so that it checks
// CpioWriter's output independently.
func CheckInitramfs(r io.Reader) (InitramfsStats, error) {
	var st InitramfsStats
	br := bufio.NewReaderSize(r, 64<<10)
	var off int64
	dirs := map[string]bool{".": true}
	inMember := false
	fail := func(at int64, name string, format string, args ...any) (InitramfsStats, error) {
		return st, &FormatError{Offset: at, Entry: name, Err: fmt.Errorf(format, args...)}
	}
	for {
		// Zeros between members are allowed; the next header must be aligned.
		for !inMember {
			b, err := br.ReadByte()
			if err == io.EOF {
				if st.Members == 0 {
					return fail(off, "", "no archive member")
				}
				return st, nil
			}
			if err != nil {
				return st, err
			}
			if b != 0 {
				br.UnreadByte()
				if off%4 != 0 {
					return fail(off, "", "header not 4-byte aligned")
				}
				inMember = true
				break
			}
			off++
		}
		start := off
		var hdr [newcHeaderLen]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return fail(start, "", "truncated header (no trailer)")
		}
		off += newcHeaderLen
		magic := string(hdr[:6])
		if magic != magicNewc && magic != magicCRC {
			return fail(start, "", "magic %s is not 070701 or 070702", printable(hdr[:6]))
		}
		var f [13]uint32
		for i := range f {
			v, ok := parseHex8(hdr[6+8*i : 14+8*i])
			if !ok {
				return fail(start, "", "field %s is not hex", newcFields[i])
			}
			f[i] = v
		}
		mode, size, namesize, check := f[1], int64(f[6]), int64(f[11]), f[12]
		if namesize < 1 || namesize > pathx.PathMax+1 {
			return fail(start, "", "name size %d outside 1..PATH_MAX+1", namesize)
		}
		nameBuf := make([]byte, namesize)
		if _, err := io.ReadFull(br, nameBuf); err != nil {
			return fail(start, "", "truncated name")
		}
		off += namesize
		if nameBuf[namesize-1] != 0 {
			return fail(start, "", "name not NUL-terminated")
		}
		name := string(nameBuf[:namesize-1])
		if n := pad4(off) - off; n > 0 {
			if _, err := br.Discard(int(n)); err != nil {
				return fail(start, name, "truncated name padding")
			}
			off += n
		}
		var sum uint32
		var target []byte
		isSymlink := mode&modeTypeMask == modeSymlink
		if isSymlink && size > pathx.PathMax {
			return fail(start, name, "symlink target of %d bytes exceeds PATH_MAX", size)
		}
		remaining := size
		buf := make([]byte, 32<<10)
		for remaining > 0 {
			n := int(min(remaining, int64(len(buf))))
			k, err := io.ReadFull(br, buf[:n])
			if err != nil {
				return fail(start, name, "truncated data")
			}
			sum = sumBytes(sum, buf[:k])
			if isSymlink {
				target = append(target, buf[:k]...)
			}
			remaining -= int64(k)
		}
		off += size
		if n := pad4(off) - off; n > 0 {
			if _, err := br.Discard(int(n)); err != nil {
				return fail(start, name, "truncated data padding")
			}
			off += n
		}
		if magic == magicCRC && mode&modeTypeMask == modeRegular && sum != check {
			return fail(start, name, "%v", ErrChecksum)
		}
		if name == trailerName {
			st.Members++
			inMember = false
			continue
		}
		st.Entries++
		clean := path.Clean(name)
		if clean != "." {
			if parent := path.Dir(clean); !dirs[parent] {
				return fail(start, name, "parent directory %q does not precede it", parent)
			}
		}
		if mode&modeTypeMask == modeDir {
			dirs[clean] = true
		} else {
			delete(dirs, clean)
		}
		if isSymlink && len(target) == 0 {
			return fail(start, name, "empty symlink")
		}
	}
}
