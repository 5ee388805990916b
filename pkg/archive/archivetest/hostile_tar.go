package archivetest

import (
	"fmt"
	"strconv"
)

// The names the hostile tars give one file: GNU tar extracts Shown, a CNI
// config, where a reader that picks another name source sees Decoy, a
// harmless document.
const (
	Shown = "etc/cni/net.d/10-evil.conflist"
	Decoy = "usr/share/doc/evil/README"
	// LinkShown and LinkDecoy are a symlink's two targets.
	LinkShown = "/etc/cni/net.d/10-evil.conflist"
	LinkDecoy = "/usr/share/doc/evil/README"
)

// HostileTar is a tar in which the sources of one entry's name (or link
// target) disagree: the header, a GNU long name or link ('L', 'K'), a PAX
// path or linkpath record, a PAX GNU.sparse.name record.
type HostileTar struct {
	Name string
	Tar  []byte
}

// HostileTars builds, block by block (no archiver writes them), the tars
// of issue 37's item 9.
func HostileTars() []HostileTar {
	data := "{\"cniVersion\":\"1.0.0\",\"plugins\":[]}\n"
	reg := func(name string) []byte { return tarEntry(tarHeader(name, '0', int64(len(data)), posixMagic), data) }
	gnuReg := func(name string) []byte { return tarEntry(tarHeader(name, '0', int64(len(data)), gnuMagic), data) }
	pax := func(recs ...string) []byte {
		var text string
		for i := 0; i < len(recs); i += 2 {
			text += paxRecord(recs[i], recs[i+1])
		}
		return tarEntry(tarHeader("PaxHeaders/x", 'x', int64(len(text)), posixMagic), text)
	}
	long := func(flag byte, name string) []byte {
		return tarEntry(tarHeader("././@LongLink", flag, int64(len(name)+1), gnuMagic), name+"\x00")
	}
	// A GNU header keeps atime and ctime where ustar has its prefix; when
	// they are not numbers archive/tar reads the field as a prefix.
	prefixed := tarHeader(Shown, '0', int64(len(data)), gnuMagic)
	copy(prefixed[345:], "usr/share/doc/evil")
	setChecksum(prefixed)
	symlink := func(target string) []byte { return tarHeader("usr/bin/link", '2', 0, gnuMagic, target) }
	return []HostileTar{
		{"pax-path-then-gnu-long-name", cat(pax("path", Shown), long('L', Decoy), gnuReg("short"))},
		{"gnu-long-name-then-pax-path", cat(long('L', Decoy), pax("path", Shown), gnuReg("short"))},
		{"sparse-name-on-plain-file", cat(pax("GNU.sparse.name", Shown, "path", Decoy), reg("short"))},
		{"sparse-name-over-header", cat(pax("GNU.sparse.name", Shown), reg(Decoy))},
		{"gnu-header-bad-atime", cat(prefixed, pad(data))},
		{"pax-linkpath-vs-gnu-long-link", cat(pax("linkpath", LinkShown), long('K', LinkDecoy), symlink("short"))},
		{"extended-header-before-global", cat(pax("path", Shown), globalHeader(), reg(Decoy))},
		{"two-extended-headers", cat(pax("path", Shown), pax("mtime", "1"), reg(Decoy))},
	}
}

const (
	posixMagic = "ustar\x0000"
	gnuMagic   = "ustar  \x00"
)

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return append(out, make([]byte, 1024)...)
}

func pad(data string) []byte {
	b := []byte(data)
	return append(b, make([]byte, (512-len(b)%512)%512)...)
}

func tarEntry(hdr []byte, data string) []byte { return append(hdr, pad(data)...) }

// globalHeader is a PAX global header with a comment only.
func globalHeader() []byte {
	text := paxRecord("comment", "c0ffee")
	return tarEntry(tarHeader("pax_global_header", 'g', int64(len(text)), posixMagic), text)
}

// tarHeader encodes one header block; link is the link field, if any.
func tarHeader(name string, flag byte, size int64, magic string, link ...string) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	octal := func(field []byte, v int64) { copy(field, fmt.Sprintf("%0*o", len(field)-1, v)) }
	octal(b[100:108], 0o644)
	octal(b[108:116], 0)
	octal(b[116:124], 0)
	octal(b[124:136], size)
	octal(b[136:148], 1704164645)
	b[156] = flag
	if len(link) > 0 {
		copy(b[157:257], link[0])
	}
	copy(b[257:265], magic)
	copy(b[265:], "root")
	copy(b[297:], "root")
	setChecksum(b)
	return b
}

func setChecksum(b []byte) {
	copy(b[148:156], "        ")
	var sum int64
	for _, c := range b {
		sum += int64(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
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
