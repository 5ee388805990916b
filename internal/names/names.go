package names

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quote returns name as it may be shown: unchanged when it is valid UTF-8,
// every rune is printable (unicode.IsPrint: the ASCII space but no other
// space, no control or format character) and it does not start with a
// double quote; otherwise in Go's double-quoted form (strconv.Quote: \n,
// \r, \x1b, \xff, \u202e), as `ls -b` and %q do. A shown name starts with
// a double quote exactly when it was quoted, so the two forms cannot be
// confused.
func Quote(name string) string {
	if plain(name) && !strings.HasPrefix(name, `"`) {
		return name
	}
	return strconv.Quote(name)
}

// Text escapes, in free text (a reason, a message that may hold a name),
// every rune Quote would, newlines included, without adding quotes.
func Text(s string) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// plain reports whether s needs no escaping, with a fast path for ASCII:
// listing a million entries calls this a million times.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			for _, r := range s[i:] {
				if r == utf8.RuneError || !unicode.IsPrint(r) {
					// RuneError is also what a real U+FFFD decodes to:
					// quoting that one too is harmless.
					return false
				}
			}
			return true
		}
	}
	return true
}

// B64 returns name in standard base64 when it is not valid UTF-8, and ""
// otherwise: the value of a "<field>_b64" key beside the readable field,
// which JSON can only give with U+FFFD in place of the bad bytes.
func B64(name string) string {
	if utf8.ValidString(name) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(name))
}

// Exact returns the name a JSON document carries: from b64 when set (see
// B64), else the readable form.
func Exact(readable, b64 string) (string, error) {
	if b64 == "" {
		return readable, nil
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", err
	}
	return string(raw), nil
}
