package names

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestQuote(t *testing.T) {
	tests := []struct{ name, want string }{
		{"etc/cni/net.d/10-bridge.conflist", "etc/cni/net.d/10-bridge.conflist"},
		{"usr/share/doc with space/README", "usr/share/doc with space/README"},
		{"usr/share/ünïcødé/fichier", "usr/share/ünïcødé/fichier"},
		{`back\slash`, `back\slash`},
		{`mid"quote`, `mid"quote`},
		{`"leading quote`, `"\"leading quote"`},
		{"x\n::error file=README.md,line=1::pwned", `"x\n::error file=README.md,line=1::pwned"`},
		{"esc\x1b[31mred", `"esc\x1b[31mred"`},
		{"cr\rname", `"cr\rname"`},
		{"tab\tname", `"tab\tname"`},
		{"del\x7f", `"del\x7f"`},
		{"bidi\u202egnp.exe", `"bidi\u202egnp.exe"`},
		{"nbsp\u00a0x", `"nbsp\u00a0x"`},
		{"a\xff", `"a\xff"`},
		{"", ""},
		// Workflow commands (actions/runner ActionCommand.TryParse,
		// TryParseV2): the old form anywhere, the new one at the start.
		{"usr/share/##[error]x", `"usr/share/##\x5berror]x"`},
		{"###[warning]x", `"###\x5bwarning]x"`},
		{"::error::x", `"::error::x"`},
		{"  ::stop-commands::tok", `"  ::stop-commands::tok"`},
		{"x\n::error::y", `"x\n::error::y"`},
		{"usr/share/man/man3/File::Spec.3pm", "usr/share/man/man3/File::Spec.3pm"},
		{"::1", "::1"},
		{"##x[", "##x["},
	}
	for _, tc := range tests {
		if got := Quote(tc.name); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain reason: it pre-empts the CNI", "plain reason: it pre-empts the CNI"},
		{"two\nlines", `two\nlines`},
		{"esc\x1b[0m and \xff\xfe", `esc\x1b[0m and \xff\xfe`},
		{"bidi\u202e", `bidi\u202e`},
		{"ünï", "ünï"},
		{"layer 1 (##[error]x/layer.tar)", `layer 1 (##\x5berror]x/layer.tar)`},
		{"::error::x", `\x3a:error::x`},
		{"   ::stop-commands::tok", `   \x3a:stop-commands::tok`},
		{"\t::error::x", `\t::error::x`},
		{" ::1 localhost", " ::1 localhost"},
		{"a: b::c", "a: b::c"},
	}
	for _, tc := range tests {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestB64RoundTrip(t *testing.T) {
	for _, name := range []string{"etc/x", "a\xff", "\xc3\x28", "ünï", ""} {
		b64 := B64(name)
		if utf8.ValidString(name) != (b64 == "") {
			t.Errorf("B64(%q) = %q", name, b64)
		}
		readable, _ := json.Marshal(name)
		var back string
		json.Unmarshal(readable, &back)
		got, err := Exact(back, b64)
		if err != nil || got != name {
			t.Errorf("Exact(%q, %q) = %q, %v, want %q", back, b64, got, err, name)
		}
	}
}

// TestCommand: the lines a GitHub Actions runner reads as workflow
// commands (actions/runner ActionCommand.TryParseV2, then TryParse).
func TestCommand(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"::error file=a,line=1::x", true},
		{"   \t::stop-commands::tok", true},
		{"\u00a0::add-mask::x", true},
		{"::1 localhost", false},
		{":::", false},
		{"::::", true},
		{"x ::error::y", false},
		{"x ##[error]y", true},
		{"##[", true},
		{"# [error]", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := Command(tc.line); got != tc.want {
			t.Errorf("Command(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// FuzzQuote: Quote is lossless (what it quoted unquotes to the name) and
// its output holds nothing a terminal or CI log would act on: no line of
// it, alone or after spaces (the indent of a listing or a diff), is a
// workflow command.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"etc/x", "x\n::error::y", "\x1b[2J", "a\xff", `"q`, "\u202e",
		"::error::x", " ::stop-commands::t", "a##[error]b", "###[x]", "\u2003::x::", "::1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		q := Quote(name)
		if q != name {
			back, err := strconv.Unquote(q)
			if err != nil || back != name {
				t.Fatalf("Quote(%q) = %s does not unquote to the name", name, q)
			}
		}
		for _, out := range []string{q, Text(name)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%q: output %q is not UTF-8", name, out)
			}
			for _, r := range out {
				if r < 0x20 || r == 0x7f || r == '\u202e' {
					t.Fatalf("%q: output %q holds %U", name, out, r)
				}
			}
			for _, line := range []string{out, "  " + out, "rootfs-trim list: " + out} {
				if Command(line) {
					t.Fatalf("%q: %q is a workflow command", name, line)
				}
			}
		}
		if d := cmp.Diff(name, mustExact(t, string(jsonRoundTrip(t, name)), B64(name))); d != "" {
			t.Fatalf("JSON round trip (-want +got):\n%s", d)
		}
		checkJSON(t, map[string]string{"name": name})
	})
}

// TestJSON: a JSON document holds no "##[" once through JSON, and decodes
// to the same value.
func TestJSON(t *testing.T) {
	checkJSON(t, map[string]any{"name": "etc/##[error]x", "##[k]": []string{"###[", `\##[`, "ok"}})
	if got := string(JSON([]byte(`{"a":"b"}`))); got != `{"a":"b"}` {
		t.Errorf("JSON changed a document with no \"##[\": %s", got)
	}
}

func checkJSON(t *testing.T, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(data)
	for _, line := range strings.Split(string(out), "\n") {
		if Command(line) {
			t.Fatalf("%q: a workflow command in %q", v, line)
		}
	}
	want, got := any(nil), any(nil)
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("decoded after JSON (-want +got):\n%s", d)
	}
}

func jsonRoundTrip(t *testing.T, s string) string {
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back string
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

func mustExact(t *testing.T, readable, b64 string) string {
	s, err := Exact(readable, b64)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
