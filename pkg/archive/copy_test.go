package archive

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func tarOf(t *testing.T, hdrs ...*tar.Header) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hdrs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	tw.Close()
	return &buf
}

// Hostile tar hard links: out of the archive, to themselves, to nothing.
// Each is refused with the entry's name, for tar and for cpio output.
func TestCopyRefusesBadHardLinks(t *testing.T) {
	file := &tar.Header{Name: "etc/f", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3}
	tests := []struct {
		name string
		link *tar.Header
		want string
	}{
		{"outside", &tar.Header{Name: "etc/l", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"}, `hard link "etc/l": target: unsafe path`},
		{"absolute", &tar.Header{Name: "etc/l", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}, `hard link "etc/l": target: unsafe path`},
		{"itself", &tar.Header{Name: "etc/l", Typeflag: tar.TypeLink, Linkname: "etc/l"}, `hard link "etc/l": target "etc/l" is not in the output`},
		{"missing", &tar.Header{Name: "etc/l", Typeflag: tar.TypeLink, Linkname: "etc/nope"}, `hard link "etc/l": target "etc/nope" is not in the output`},
	}
	for _, tc := range tests {
		for _, dest := range []Kind{KindTar, KindCpio} {
			t.Run(tc.name+"/"+dest.String(), func(t *testing.T) {
				in := tarOf(t, file, tc.link)
				var opt CopyOptions
				opt.Dest = dest
				if dest.IsCpio() {
					scan, err := ScanLinks(NewTarReader(bytes.NewReader(in.Bytes())))
					if err != nil {
						if !strings.Contains(err.Error(), "unsafe path") {
							t.Fatalf("scan: %v", err)
						}
						return // refused already in the first pass
					}
					opt.Links = scan
				}
				var w Writer = NewTarWriter(io.Discard, tar.FormatPAX)
				if dest.IsCpio() {
					w = NewCpioWriter(io.Discard, Newc)
				}
				err := Copy(w, NewTarReader(in), opt)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want %q", err, tc.want)
				}
			})
		}
	}
}

// Two names for one path: the later entry wins, as in the kernel.
func TestDirWriterLaterEntryWins(t *testing.T) {
	root := t.TempDir()
	w, err := NewDirWriter(root, DirWriterOptions{CreateParents: true})
	if err != nil {
		t.Fatal(err)
	}
	entries := []*Entry{
		{Name: ".", Type: TypeDir, Mode: 0o755},
		{Name: "etc", Type: TypeDir, Mode: 0o755},
		{Name: "etc/x", Type: TypeRegular, Mode: 0o644, Size: 5},
		{Name: "./etc//x", Type: TypeRegular, Mode: 0o600, Size: 6},
	}
	data := map[string]string{"etc/x": "first", "./etc//x": "second"}
	writeAll(t, w, entries, data)
	r, _ := NewDirReader(root, DirReaderOptions{})
	got, gotData := readAll(t, r)
	if len(got) != 3 || gotData["etc/x"] != "second" || got[2].Mode != 0o600 {
		t.Fatalf("entries %v, data %v", got, gotData)
	}
}

// countingReader counts the data bytes read from its entries.
type countingReader struct {
	Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	c.n += int64(n)
	return n, err
}

// discardingWriter is a Discarder that wants none of the data of the
// entries named in skip, and counts the data it is given.
type discardingWriter struct {
	skip    map[string]bool
	cur     string
	written map[string]int64
}

func (w *discardingWriter) WriteHeader(e *Entry) error { w.cur = e.Name; return nil }
func (w *discardingWriter) Write(p []byte) (int, error) {
	w.written[w.cur] += int64(len(p))
	return len(p), nil
}
func (w *discardingWriter) Close() error   { return nil }
func (w *discardingWriter) Discards() bool { return w.skip[w.cur] }

// TestCopyLeavesDiscardedDataUnread: the data of an entry the writer
// discards (an image writer given back an entry of a layer it keeps) is
// not read from the source, which skips it; the others' is copied whole.
func TestCopyLeavesDiscardedDataUnread(t *testing.T) {
	buf := tarOf(t, &tar.Header{Name: "a", Typeflag: tar.TypeReg, Size: 100, Mode: 0o644},
		&tar.Header{Name: "b", Typeflag: tar.TypeReg, Size: 1 << 20, Mode: 0o644},
		&tar.Header{Name: "c", Typeflag: tar.TypeReg, Size: 10, Mode: 0o644})
	src := &countingReader{Reader: NewTarReader(buf)}
	dst := &discardingWriter{skip: map[string]bool{"b": true}, written: map[string]int64{}}
	if err := Copy(dst, src, CopyOptions{Dest: KindTar}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]int64{"a": 100, "c": 10}, dst.written); d != "" {
		t.Errorf("data written (-want +got):\n%s", d)
	}
	if src.n != 110 {
		t.Errorf("read %d data bytes from the source, want 110 (b's left unread)", src.n)
	}
}
