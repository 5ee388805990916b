package names

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quote returns name as it may be shown: unchanged when it is valid UTF-8,
// every rune is printable (unicode.IsPrint: the ASCII space but no other
// space, no control or format character), it does not start with a
// double quote and no workflow command could be read in it (see
// Command); otherwise in Go's double-quoted form (strconv.Quote: \n,
// \r, \x1b, \xff, \u202e), as `ls -b` and %q do, with the "[" of "##["
// written \x5b. A shown name starts with a double quote exactly when it
// was quoted, so the two forms cannot be confused, and the quoted form
// still unquotes (strconv.Unquote) to the name.
func Quote(name string) string {
	if plain(name) && !strings.HasPrefix(name, `"`) && !Command(name) {
		return name
	}
	return breakOldCommand(strconv.Quote(name))
}

// Text escapes, in free text (a reason, a message that may hold a name),
// every rune Quote would, newlines included, without adding quotes; and
// what a workflow runner would act on: the "[" of "##[" as \x5b, and the
// first ":" of a leading "::" (after spaces) as \x3a.
func Text(s string) string {
	if plain(s) && !Command(s) {
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
	out := breakOldCommand(b.String())
	if lead := len(out) - len(strings.TrimLeft(out, " ")); Command(out) {
		out = out[:lead] + `\x3a` + out[lead+1:]
	}
	return out
}

// Command reports whether a GitHub Actions runner would read line (one
// line of a step's output, as it splits them at \n and \r) as a workflow
// command. actions/runner's ActionCommandManager.TryProcessCommand tries,
// on every line, ActionCommand.TryParseV2 (src/Runner.Common/
// ActionCommand.cs): the line, after TrimStart (leading whitespace),
// starts with "::" and holds "::" again after it; then
// ActionCommand.TryParse: the old form "##[command]", anywhere in the
// line. Either can be "::error ...", "::add-mask::" or
// "::stop-commands::TOKEN", after which the runner ignores every command
// until TOKEN, rootfs-trim's own annotations included. Command does not
// look at the command's name (the runner's list of names can grow): a
// line shaped like one is enough. The only leading whitespace a plain
// string (one Quote and Text leave as it is) can hold is the ASCII space:
// every other whitespace rune is escaped.
func Command(line string) bool {
	if strings.Contains(line, "##[") {
		return true
	}
	t := strings.TrimLeftFunc(line, unicode.IsSpace)
	return strings.HasPrefix(t, "::") && strings.Contains(t[2:], "::")
}

// breakOldCommand writes the "[" of every "##[" as \x5b: in a quoted
// string, an escape strconv.Unquote reads back; no escape strconv.Quote
// writes holds "#" or "[", so none is split.
func breakOldCommand(s string) string {
	if !strings.Contains(s, "##[") {
		return s
	}
	return strings.ReplaceAll(s, "##[", `##\x5b`)
}

// JSON breaks, in an encoded JSON document, the runner's older command
// form "##[" (see Command): "#" occurs in JSON only inside a string, so
// every "##[" is in one, where \u005b is the same "[" to every decoder.
// A JSON line cannot be the newer form: it starts, after its indent, with
// a bracket, a brace or a string's opening quote.
func JSON(doc []byte) []byte {
	if !bytes.Contains(doc, []byte("##[")) {
		return doc
	}
	return bytes.ReplaceAll(doc, []byte("##["), []byte(`##\u005b`))
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
