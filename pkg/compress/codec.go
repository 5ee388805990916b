package compress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Codec identifies a compression format: its row in the codec table.
type Codec uint8

// The codecs that Buildroot can wrap a rootfs archive in and that the
// kernel's initramfs unpacker understands (bzip2 aside, which we only read).
const (
	None      Codec = iota // uncompressed
	Gzip                   // RFC 1952, possibly several members
	Xz                     // .xz container with LZMA2
	Lz4Legacy              // lz4 legacy frame (`lz4 -l`), what the kernel reads
	Lz4Frame               // lz4 frame format (`lz4`), not readable by the kernel
	Zstd                   // Zstandard frames
	Bzip2                  // bzip2, read only
	// Lzma and Lzo are read only as an initrd's segments: no Decode, so
	// Sniff refuses them in a single stream and they are not in Codecs.
	Lzma // lzma-alone (`lzma`), the kernel's "lzma"
	Lzo  // lzop's format, the kernel's "lzo"
)

// Spec is one codec, end to end: its row in the codec table (table.go),
// which every function of the package reads; only its splicer is elsewhere
// (pkg/container). TestEveryCodecHandled walks the table.
type Spec struct {
	Name    string   // Codec.String, ParseCodec
	Aliases []string // ParseCodec's other names: the usual suffixes
	Suffix  string   // what an output's name ends with to say it (NamedCodec)
	// Magic: b (4 to 13 bytes) starts a stream of it (Sniff), which
	// Sniff refuses as Format ("lzop") where it has no Decode.
	Magic  func(b []byte) bool
	Format string
	// KernelMagic starts a segment of it as the kernel's
	// decompress_method (lib/decompress.c) matches it; KernelName is the
	// kernel's name for it.
	KernelMagic []byte
	KernelName  string
	// Decode reads a stream of it (concatenated streams as one) from br,
	// which buffers src; close, if set, releases the decoder. nil: only
	// read as a segment (not in Codecs). ReadAhead: on another core.
	Decode    func(br *bufio.Reader, src io.Reader) (r io.Reader, close func() error, err error)
	ReadAhead bool
	// DecodeOne reads one stream and nothing after, for a segment whose
	// end only decoding finds (NewStreamReader); over may be nil.
	DecodeOne func(br *bufio.Reader) (r io.ReadCloser, over func() int64, err error)
	// SegmentLen is a segment's length read from its structure.
	SegmentLen func(r io.ReaderAt, size int64) (int64, error)
	// Encode writes it in process (CanWrite), at a level of Levels.
	Encode func(w io.Writer, level, threads int) (io.WriteCloser, error)
	Levels Levels
	// Hint is what a stream's first bytes say of its level (ReadLevelHint).
	Hint func(head []byte) LevelHint
	// Tool writes a stream of it from stdin to stdout, and with -d reads
	// one: the table test's reference.
	Tool []string
	// Compressors run in place of Encode, the first on PATH.
	Compressors func(level, threads int, single bool) [][]string
	// Decompressor reads it with --backend external, and with auto where
	// ToolFaster (make bench, list-*); NewSegmentReader without Decode.
	Decompressor func(threads int) []string
	ToolFaster   bool
	Layer        bool // an image's new layer may be compressed with it
}

// Levels are a codec's levels, 1 to Max on the scale of its CLI (none has
// none), and each producer's default (level.go), Buildroot's NewWriter's.
type Levels struct {
	Max, Buildroot, InitramfsTools, Dracut int
}

// spec is c's row; an unknown codec has an empty one.
func spec(c Codec) *Spec {
	if int(c) < len(table) {
		return &table[c]
	}
	return &Spec{}
}

// Codecs are the single-stream codecs (with Decode), in the table's order.
var Codecs = singleStream()

func singleStream() []Codec {
	return slices.DeleteFunc(All(), func(c Codec) bool { return table[c].Decode == nil })
}

// All is every codec of the table, in its order.
func All() []Codec {
	out := make([]Codec, len(table))
	for c := range table {
		out[c] = Codec(c)
	}
	return out
}

// Register adds a codec to the table. Like image.RegisterFormat, it is
// for init time: the table is read without a lock.
func Register(s Spec) Codec {
	table = append(table, s)
	Codecs = singleStream()
	return Codec(len(table) - 1)
}

// SpecOf returns c's row, a copy.
func SpecOf(c Codec) Spec { return *spec(c) }

func (c Codec) String() string {
	if int(c) < len(table) {
		return table[c].Name
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

// CanWrite reports whether NewWriter supports c.
func (c Codec) CanWrite() bool { return spec(c).Encode != nil }

// IsLayer reports whether an image's new layer may be compressed with c.
func (c Codec) IsLayer() bool { return spec(c).Layer }

// LayerCodecs are the codecs a new layer may be compressed with, none
// aside: "gzip, zstd".
func LayerCodecs() string {
	return strings.Join(names(func(c Codec, s *Spec) bool { return c != None && s.Layer }), ", ")
}

// names are the names of the table's rows that keep keeps, in its order.
func names(keep func(c Codec, s *Spec) bool) []string {
	var out []string
	for c := range table {
		if keep(Codec(c), &table[c]) {
			out = append(out, table[c].Name)
		}
	}
	return out
}

// ParseCodec returns the codec called s: the name of one of Codecs or
// one of its aliases ("gz", "zst", "bz2"); case is ignored. Note that
// "lz4" is the frame format: the kernel needs "lz4-legacy".
func ParseCodec(s string) (Codec, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, c := range Codecs {
		if table[c].Name == name || slices.Contains(table[c].Aliases, name) {
			return c, nil
		}
	}
	single := names(func(_ Codec, s *Spec) bool { return s.Decode != nil })
	return None, fmt.Errorf("compress: unknown codec %q (want one of %s)", s, strings.Join(single, ", "))
}

// ErrUnsupported is wrapped by errors about formats that are recognised but
// not handled: lzma and lzo, which Buildroot can produce, and writing bzip2.
var ErrUnsupported = errors.New("unsupported")

// ErrDecoderPanic is wrapped by the error of a decoder library's panic on
// malformed input, so that one bad image cannot crash a build; a library
// bug all the same, which the fuzz tests fail on.
var ErrDecoderPanic = errors.New("decoder panic")

// Error is the error type of readers and writers: it names the codec so that
// a failure deep inside a pipeline still says which layer broke.
type Error struct {
	Codec Codec
	Err   error
}

// libraryPrefixes are the prefixes the decoder libraries put on their own
// messages; Error drops them so that messages read "xz: bad header", not
// "xz: xz: bad header" or "lz4-legacy: lz4: ...".
var libraryPrefixes = []string{"gzip: ", "xz: ", "lzma: ", "lz4: ", "zstd: ", "bzip2 data invalid: "}

func (e *Error) Error() string {
	msg := e.Err.Error()
	for _, p := range libraryPrefixes {
		if strings.HasPrefix(msg, p) {
			msg = msg[len(p):]
			break
		}
	}
	return e.Codec.String() + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

func wrapErr(c Codec, err error) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) && ce.Codec == c {
		return err
	}
	return &Error{Codec: c, Err: err}
}

// NamedCodec returns the codec the suffix of a file name says (Spec.Suffix,
// case ignored) and that suffix; ok is false for a name with none of them.
// Only output names are judged by it: what is read is always detected
// from its content.
func NamedCodec(name string) (c Codec, suffix string, ok bool) {
	lower := strings.ToLower(name)
	for c := range table {
		if s := table[c].Suffix; s != "" && strings.HasSuffix(lower, s) {
			return Codec(c), name[len(name)-len(s):], true
		}
	}
	return None, "", false
}
