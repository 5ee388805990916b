package container

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// docTable returns the rows of the table in docs/formats.md whose header
// starts with header, keyed by their first cell (backticks dropped).
func docTable(t *testing.T, header string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/formats.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows[strings.Trim(cells[0], "`")] = cells
		case in:
			return rows
		}
	}
	if !in {
		t.Fatalf("docs/formats.md has no table %q", header)
	}
	return rows
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestEveryCodecHandled: every codec of compress.Codecs has its row in
// codecs, and its row in docs/formats.md; each row's columns agree with
// pkg/compress (name, output suffix, sniffing, reader, writer) and with the
// codec's own tool, which reads what compress writes.
func TestEveryCodecHandled(t *testing.T) {
	doc := docTable(t, "| `--compress` |")
	for i, c := range compress.Codecs {
		if i >= len(codecs) || codecs[i].Codec != c {
			t.Fatalf("codec %s has no row at %d in codecs (pkg/container/codecs.go), in compress.Codecs' order", c, i)
		}
	}
	if len(codecs) != len(compress.Codecs) {
		t.Fatalf("codecs has %d rows, compress.Codecs %d codecs", len(codecs), len(compress.Codecs))
	}
	if len(doc) != len(codecs) {
		t.Errorf("docs/formats.md's compressions table has %d rows, codecs %d", len(doc), len(codecs))
	}
	data := bytes.Repeat([]byte("070701 a rootfs, compressed by every codec\n"), 300)
	for _, row := range codecs {
		t.Run(row.Name, func(t *testing.T) {
			checkCodecRow(t, row, doc[row.Name])
			stream := data
			if row.Tool != nil {
				stream = runTool(t, data, row.Tool...)
			}
			checkCodecStream(t, row, doc[row.Name], stream, data)
			if !row.Write {
				return
			}
			var buf bytes.Buffer
			w, _, err := compress.NewWriter(&buf, row.Codec, compress.WriterOptions{Backend: compress.PureGo})
			mustDo(t, err)
			_, err = w.Write(data)
			mustDo(t, err)
			mustDo(t, w.Close())
			if row.Tool != nil && !bytes.Equal(runTool(t, buf.Bytes(), row.Tool[0], "-d", "-c"), data) {
				t.Errorf("%s -d does not read back what compress writes", row.Tool[0])
			}
		})
	}
}

// checkCodecRow checks a row's names and flags against pkg/compress and
// its row in the document.
func checkCodecRow(t *testing.T, row codecRow, cells []string) {
	t.Helper()
	if got := row.Codec.String(); got != row.Name {
		t.Errorf("Name %q, but the codec's name is %q", row.Name, got)
	}
	if c, err := compress.ParseCodec(row.Name); err != nil || c != row.Codec {
		t.Errorf("ParseCodec(%q) = %v, %v", row.Name, c, err)
	}
	named, _, ok := compress.NamedCodec("rootfs.cpio" + row.Suffix)
	if row.Suffix == "" && ok || row.Suffix != "" && (!ok || named != row.Codec) {
		t.Errorf("NamedCodec(rootfs.cpio%s) = %v, %v; the row says %q", row.Suffix, named, ok, row.Suffix)
	}
	if row.Codec.CanWrite() != row.Write {
		t.Errorf("Write %v, CanWrite %v", row.Write, row.Codec.CanWrite())
	}
	if len(cells) != 6 {
		t.Fatalf("no row (of 6 cells) for %q in docs/formats.md's compressions table: %q", row.Name, cells)
	}
	suffix := ""
	if row.Suffix != "" {
		suffix = "`" + row.Suffix + "`"
	}
	want := []string{"`" + row.Name + "`", suffix, cells[2], "yes", yesNo(row.Write), yesNo(row.Splice != nil)}
	for i := range want {
		if cells[i] != want[i] {
			t.Errorf("docs/formats.md, column %d: %q, the table says %q", i+1, cells[i], want[i])
		}
	}
}

// checkCodecStream checks that compress sniffs and reads what the codec's
// tool wrote, and that it starts with the signature the document gives.
func checkCodecStream(t *testing.T, row codecRow, cells []string, stream, data []byte) {
	t.Helper()
	sig := strings.ReplaceAll(strings.Trim(cells[2], "`"), " ", "")
	if magic, err := hex.DecodeString(sig); err == nil && !bytes.HasPrefix(stream, magic) {
		t.Errorf("%s's stream starts % x, not with the signature %s", row.Tool[0], stream[:min(len(stream), 8)], cells[2])
	}
	want := compress.None
	if row.Sniffed {
		want = row.Codec
	}
	if got, err := compress.Sniff(bufio.NewReader(bytes.NewReader(stream))); err != nil || got != want {
		t.Errorf("Sniff = %v, %v; want %v", got, err, want)
	}
	r, got, err := compress.NewReader(bytes.NewReader(stream), compress.ReaderOptions{Backend: compress.PureGo})
	mustDo(t, err)
	defer r.Close()
	back, err := io.ReadAll(r)
	if err != nil || got != row.Codec || !bytes.Equal(back, data) {
		t.Errorf("NewReader: codec %v, %d bytes, %v; want %v and the %d bytes", got, len(back), err, row.Codec, len(data))
	}
}

func runTool(t *testing.T, stdin []byte, argv ...string) []byte {
	t.Helper()
	archivetest.RequireTool(t, argv[0])
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v: %s", argv, err, stderr.String())
	}
	return out.Bytes()
}
