package container

import (
	"fmt"
	"io"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// producer is a tool that writes compressed initrds or root file system
// archives, with the level it compresses at by default for each codec.
type producer struct {
	name   string
	levels map[compress.Codec]int
}

// producers, read from their sources:
//   - Buildroot (fs/common.mk, ROOTFS_$(2)_COMPRESS_CMD, which fs/cpio
//     uses): `gzip -9 -c -n`, `xz -9 -C crc32`, `lz4 -l -9`, `zstd -19`;
//     a lone compressed cpio, as minikube's ISO holds.
//   - initramfs-tools 0.142 (mkinitramfs, its compresslevel case):
//     `zstd -q -9 -T0`, `lz4 -9 -l`, gzip/pigz and xz at their own
//     default, 6 (`xz --check=crc32`); an early raw cpio, then the main.
//   - dracut (dracut.sh, the compress case): `zstd -15 -q -T0`,
//     `lz4 -l -9`, `gzip -n -9` (or pigz -9), `xz --check=crc32
//     --lzma2=dict=1MiB` (preset 6 with a smaller dictionary).
//
// Debian's and dracut's layout (an early cpio, then one compressed) comes
// first for an initrd of several segments, Buildroot's for a lone stream.
var (
	buildroot      = producer{"Buildroot", map[compress.Codec]int{compress.Gzip: 9, compress.Xz: 9, compress.Lz4Legacy: 9, compress.Lz4Frame: 9, compress.Zstd: 19}}
	initramfsTools = producer{"initramfs-tools", map[compress.Codec]int{compress.Gzip: 6, compress.Xz: 6, compress.Lz4Legacy: 9, compress.Lz4Frame: 9, compress.Zstd: 9}}
	dracut         = producer{"dracut", map[compress.Codec]int{compress.Gzip: 9, compress.Xz: 6, compress.Lz4Legacy: 9, compress.Lz4Frame: 9, compress.Zstd: 15}}
	producers      = []producer{buildroot, initramfsTools, dracut}
)

// levelChoice is the level a stream compressed anew without --level gets,
// and why, for the note and the manifest.
type levelChoice struct {
	Level int
	Why   string
	// Guess: the input does not say it; a note says what was chosen.
	Guess bool
}

// chooseLevel chooses the level of a c stream compressed anew in place of
// the input's, whose first bytes are head: the input's level where its
// header says it exactly; else the default of the likeliest producer
// (segmented: initramfs-tools, dracut; else Buildroot) that writes such a
// header; else the lowest level that does.
func chooseLevel(c compress.Codec, head []byte, segmented bool) levelChoice {
	if !c.CanWrite() || c == compress.None {
		return levelChoice{}
	}
	hint := compress.ReadLevelHint(c, head)
	if hint.Recorded {
		return levelChoice{Level: hint.Lo, Why: fmt.Sprintf("the input's: its %s", hint.Field)}
	}
	likely := []producer{buildroot, initramfsTools, dracut}
	if segmented {
		likely = []producer{initramfsTools, dracut, buildroot}
	}
	if all := levelsOf(c); len(all) == 1 {
		return levelChoice{Level: likely[0].levels[c], Why: fmt.Sprintf("what %s all write", producerNames(producers))}
	}
	says := "the input does not record its level"
	if hint.Lo > 0 {
		says = fmt.Sprintf("the input's %s is written at levels %d-%d", hint.Field, hint.Lo, hint.Hi)
		if hint.Lo == hint.Hi {
			says = fmt.Sprintf("the input's %s is written at level %d", hint.Field, hint.Lo)
		}
	}
	for i, p := range likely {
		l := p.levels[c]
		if hint.Lo == 0 && i > 0 {
			break
		}
		if hint.Lo == 0 || (l >= hint.Lo && l <= hint.Hi) {
			return levelChoice{Level: l, Why: fmt.Sprintf("%s default; %s", possessive(p.name), says), Guess: true}
		}
	}
	// One level writes such a header by default: no surprise to note.
	return levelChoice{Level: hint.Lo, Why: says, Guess: hint.Lo != hint.Hi}
}

// possessive is name's: Buildroot's, initramfs-tools'.
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
}

// levelsOf is the set of the producers' default levels for c.
func levelsOf(c compress.Codec) map[int]bool {
	m := map[int]bool{}
	for _, p := range producers {
		m[p.levels[c]] = true
	}
	return m
}

func producerNames(ps []producer) string {
	s := ""
	for i, p := range ps {
		switch {
		case i == 0:
		case i == len(ps)-1:
			s += " and "
		default:
			s += ", "
		}
		s += p.name
	}
	return s
}

// streamHead reads the first bytes of the stream at off of r.
func streamHead(r io.ReaderAt, off int64) []byte {
	b := make([]byte, compress.HintBytes)
	n, _ := r.ReadAt(b, off)
	return b[:n]
}
