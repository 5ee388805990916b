package compress

import (
	"errors"
	"fmt"
	"strings"
)

// Codec identifies a compression format.
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
	// Lzma and Lzo are read only as segments of an initrd (NewStreamReader,
	// NewLzoReader): Sniff reports them unsupported in a single stream, as
	// before, and they are not in Codecs, which are the single-stream
	// codecs.
	Lzma // lzma-alone (`lzma`), the kernel's "lzma"
	Lzo  // lzop's format, the kernel's "lzo"
)

// Codecs lists every codec, in declaration order.
var Codecs = []Codec{None, Gzip, Xz, Lz4Legacy, Lz4Frame, Zstd, Bzip2}

var codecNames = [...]string{
	None:      "none",
	Gzip:      "gzip",
	Xz:        "xz",
	Lz4Legacy: "lz4-legacy",
	Lz4Frame:  "lz4",
	Zstd:      "zstd",
	Bzip2:     "bzip2",
	Lzma:      "lzma",
	Lzo:       "lzo",
}

// Aliases that ParseCodec accepts besides the canonical names; they are the
// usual file suffixes, so that configuration can say "zst" like the file does.
var codecAliases = map[string]Codec{
	"gz":  Gzip,
	"zst": Zstd,
	"bz2": Bzip2,
}

func (c Codec) String() string {
	if int(c) < len(codecNames) {
		return codecNames[c]
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

// CanWrite reports whether NewWriter supports c.
func (c Codec) CanWrite() bool {
	switch c {
	case None, Gzip, Xz, Lz4Legacy, Lz4Frame, Zstd:
		return true
	}
	return false
}

// ParseCodec returns the codec called s. Names are those of Codec.String
// plus the aliases "gz", "zst" and "bz2"; case is ignored. Note that "lz4"
// is the frame format: the kernel needs "lz4-legacy".
func ParseCodec(s string) (Codec, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for c, n := range codecNames[:Lzma] {
		if n == name {
			return Codec(c), nil
		}
	}
	if c, ok := codecAliases[name]; ok {
		return c, nil
	}
	return None, fmt.Errorf("compress: unknown codec %q (want one of %s)", s, strings.Join(codecNames[:Lzma], ", "))
}

// MarshalText implements encoding.TextMarshaler so that codecs can appear in
// configuration files and flags by name.
func (c Codec) MarshalText() ([]byte, error) {
	if int(c) >= len(codecNames) {
		return nil, fmt.Errorf("compress: invalid codec %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler using ParseCodec.
func (c *Codec) UnmarshalText(text []byte) error {
	v, err := ParseCodec(string(text))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// ErrUnsupported is wrapped by errors about formats that are recognised but
// not handled: lzma and lzo, which Buildroot can produce, and writing bzip2.
var ErrUnsupported = errors.New("unsupported")

// ErrDecoderPanic is wrapped by the error a reader returns when the
// underlying decoder library panicked on malformed input. The panic is
// turned into an error so that one bad image cannot crash a build, but it is
// a library bug all the same: the fuzz tests treat it as a failure.
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

// suffixCodecs are the file-name suffixes that say a compression. .lz4 is
// lz4-legacy: Buildroot's rootfs.cpio.lz4 is the frame the kernel reads, so
// an lz4 frame under that name is an image the kernel cannot unpack.
var suffixCodecs = []struct {
	suffix string
	codec  Codec
}{{".gz", Gzip}, {".xz", Xz}, {".zst", Zstd}, {".lz4", Lz4Legacy}, {".bz2", Bzip2}}

// NamedCodec returns the codec the suffix of a file name says (case
// ignored) and that suffix; ok is false for a name with none of them.
// Only output names are judged by it: what is read is always detected
// from its content.
func NamedCodec(name string) (c Codec, suffix string, ok bool) {
	lower := strings.ToLower(name)
	for _, s := range suffixCodecs {
		if strings.HasSuffix(lower, s.suffix) {
			return s.codec, name[len(name)-len(s.suffix):], true
		}
	}
	return None, "", false
}
