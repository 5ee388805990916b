package compress

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// LevelHint is what the header of a compressed stream says of the level
// that wrote it: the levels, on the scale of the codec's CLI, that write
// such a header. Lo == 0 says nothing.
type LevelHint struct {
	Lo, Hi int
	// Field is the header's field that said it, for a note:
	// "XFL 2", "dictionary 8 MiB", "window 4 MiB".
	Field string
	// Recorded: the field records the level (gzip's XFL, at 1 and 9). A
	// dictionary or a window is a hint: options set it too (dracut's `xz
	// --lzma2=dict=1MiB` is preset 6; zstd's --fast and --long).
	Recorded bool
}

// ReadLevelHint reads the level hint of a c stream from its first bytes
// (HintBytes are enough). A header it cannot read says nothing.
//
//   - gzip: XFL is 2 only at level 9 and 4 only at level 1, in gzip(1)
//     (deflate.c, lm_init), pigz and Go's compress/flate; 0 is any other.
//   - xz: the LZMA2 dictionary size of the first block, which each
//     preset sets (xz's lzma_lzma_preset); two presets share some sizes.
//   - zstd: the frame's window size, which each level sets for a large
//     input (zstd's ZSTD_defaultCParameters, lib/compress/clevels.h),
//     unless the input's size was known and smaller: then the window fits
//     the content and says nothing of the level.
//   - lz4: nothing.
func ReadLevelHint(c Codec, head []byte) LevelHint {
	if hint := spec(c).Hint; hint != nil {
		return hint(head)
	}
	return LevelHint{}
}

// HintBytes is how much of a stream ReadLevelHint needs at most.
const HintBytes = 64

func gzipHint(b []byte) LevelHint {
	if len(b) < 10 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 {
		return LevelHint{}
	}
	return gzipXFL[b[8]]
}

// gzipXFL are the hints of gzip's XFL byte (ReadLevelHint says why).
var gzipXFL = map[byte]LevelHint{2: {9, 9, "XFL 2", true}, 4: {1, 1, "XFL 4", true}, 0: {2, 8, "XFL 0", false}}

// xzPresets are the xz presets that write a dictionary of dict bytes
// (xzDictSizes turned round).
func xzPresets(dict int) (lo, hi int) {
	for l := 1; l < len(xzDictSizes); l++ {
		if xzDictSizes[l] == dict {
			if lo == 0 {
				lo = l
			}
			hi = l
		}
	}
	return lo, hi
}

func xzHint(b []byte) LevelHint {
	// The stream header (12 bytes), then the first block's header, whose
	// last filter is LZMA2 (xz-file-format.txt, 3.1).
	if len(b) < 14 || !bytes.HasPrefix(b, magicXz) || b[12] == 0 {
		return LevelHint{}
	}
	end := 12 + (int(b[12])+1)*4
	if end > len(b) {
		return LevelHint{}
	}
	_, filters, err := parseXzBlockHeader(b[12 : end-4])
	if err != nil {
		return LevelHint{}
	}
	if f := filters[len(filters)-1]; f.id == 0x21 && len(f.props) == 1 && f.props[0] < 40 {
		dict := int(lzma2DictSize(f.props[0]))
		if lo, hi := xzPresets(dict); lo != 0 { // else set by hand: it says nothing
			return LevelHint{lo, hi, "dictionary " + sizeName(int64(dict), " "), false}
		}
	}
	return LevelHint{}
}

// zstdWindowLevels are the levels by the window log they write for an
// input larger than 256 KiB (zstd 1.5's default table; checked against
// the zstd tool in TestZstdHintByTool).
var zstdWindowLevels = map[int][2]int{19: {1, 1}, 20: {2, 2}, 21: {3, 8}, 22: {9, 16}, 23: {17, 19}, 25: {20, 20}, 26: {21, 21}, 27: {22, 22}}

func zstdHint(b []byte) LevelHint {
	if len(b) < 6 || binary.LittleEndian.Uint32(b) != 0xfd2fb528 {
		return LevelHint{}
	}
	fhd := b[4]
	if fhd&0x20 != 0 { // single segment: the window is the content size
		return LevelHint{}
	}
	wlog := 10 + int(b[5]>>3)
	window := int64(1)<<wlog + (int64(1)<<wlog/8)*int64(b[5]&7)
	var content int64
	if _, at, n := zstdHeaderLen(fhd); n > 0 && len(b) >= at+n {
		var v [8]byte
		copy(v[:], b[at:at+n])
		if content = int64(min(binary.LittleEndian.Uint64(v[:]), 1<<62)); n == 2 {
			content += 256
		}
	}
	r, ok := zstdWindowLevels[wlog]
	if !ok || b[5]&7 != 0 || (content > 0 && content <= window) {
		return LevelHint{}
	}
	return LevelHint{r[0], r[1], "window " + sizeName(window, " "), false}
}

// sizeName writes n, a dictionary or a window and so a multiple of 1 KiB,
// in MiB where exact, else KiB, the unit after sep: "8 MiB" for a note,
// "8MiB" as xz --list writes it (src/xz/message.c, message_filters_to_str).
func sizeName(n int64, sep string) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d%sMiB", n>>20, sep)
	}
	return fmt.Sprintf("%d%sKiB", n>>10, sep)
}

// producer is a tool that writes compressed initrds or root file system
// archives, each codec at the level of its column of Levels (the table's
// comment says where they were read). Debian's and dracut's layout (an
// early cpio, then one compressed) is an initrd of several segments.
type producer struct {
	owner string // the name's possessive: "Buildroot's"
	level func(Levels) int
}

var (
	buildroot      = producer{"Buildroot's", func(l Levels) int { return l.Buildroot }}
	initramfsTools = producer{"initramfs-tools'", func(l Levels) int { return l.InitramfsTools }}
	dracut         = producer{"dracut's", func(l Levels) int { return l.Dracut }}
)

// LevelChoice is the level a stream compressed anew without --level gets,
// and why, for the note and the manifest.
type LevelChoice struct {
	Level int
	Why   string
	// Guess: the input does not say it; a note says what was chosen.
	Guess bool
}

// ChooseLevel chooses the level of a c stream compressed anew in place of
// the input's, whose first bytes are head: the input's level where its
// header says it exactly; else the default of the likeliest producer
// (segmented: initramfs-tools, dracut; else Buildroot) that writes such a
// header; else the lowest level that does.
func ChooseLevel(c Codec, head []byte, segmented bool) LevelChoice {
	if !c.CanWrite() || c == None {
		return LevelChoice{}
	}
	hint := ReadLevelHint(c, head)
	if hint.Recorded {
		return LevelChoice{Level: hint.Lo, Why: fmt.Sprintf("the input's: its %s", hint.Field)}
	}
	likely := []producer{buildroot, initramfsTools, dracut}
	if segmented {
		likely = []producer{initramfsTools, dracut, buildroot}
	}
	if l := spec(c).Levels; l.Buildroot == l.InitramfsTools && l.Buildroot == l.Dracut {
		return LevelChoice{Level: l.Buildroot, Why: "what Buildroot, initramfs-tools and dracut all write"}
	}
	says := "the input does not record its level"
	if hint.Lo > 0 {
		says = fmt.Sprintf("the input's %s is written at levels %d-%d", hint.Field, hint.Lo, hint.Hi)
		if hint.Lo == hint.Hi {
			says = fmt.Sprintf("the input's %s is written at level %d", hint.Field, hint.Lo)
		}
	}
	for _, p := range likely { // with no hint, the likeliest
		if l := p.level(spec(c).Levels); hint.Lo == 0 || (l >= hint.Lo && l <= hint.Hi) {
			return LevelChoice{Level: l, Why: fmt.Sprintf("%s default; %s", p.owner, says), Guess: true}
		}
	}
	// One level writes such a header by default: no surprise to note.
	return LevelChoice{Level: hint.Lo, Why: says, Guess: hint.Lo != hint.Hi}
}

// StreamHead reads the first bytes of the stream at off of r, as many as
// ChooseLevel reads.
func StreamHead(r io.ReaderAt, off int64) []byte {
	b := make([]byte, HintBytes)
	n, _ := r.ReadAt(b, off)
	return b[:n]
}
