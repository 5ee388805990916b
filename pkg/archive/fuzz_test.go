package archive

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// FuzzTarReader: whatever archive/tar accepts, our reader maps to entries
// without panicking, and Clean never lets a name out of the root; a sparse
// file yields its Size, holes charged to the budget; the tar writer takes
// what was read (or refuses it) without panicking. The corpus
// (testdata/fuzz/FuzzTarReader) holds GNU tar's sparse forms (gnu, PAX
// 0.0, 0.1, 1.0), bsdtar's, and git archive's global header; the seeds
// add the tars whose name sources disagree (archivetest.HostileTars) and
// one with a capability in both xattr forms.
func FuzzTarReader(f *testing.F) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "./etc/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "./etc/crictl.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4},
		{Name: "../escape", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		{Name: "etc/link", Typeflag: tar.TypeLink, Linkname: "./etc/crictl.yaml"},
	} {
		tw.WriteHeader(h)
		if h.Size > 0 {
			tw.Write([]byte("data"))
		}
	}
	tw.Close()
	f.Add(buf.Bytes())
	buf.Reset()
	tw = tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader,
		PAXRecords: map[string]string{"comment": "c0ffee", "uid": "1000", "mtime": "1700000000.5", "SCHILY.xattr.user.a": "b"}})
	tw.WriteHeader(&tar.Header{Name: "f", Typeflag: tar.TypeReg, Mode: 0o644})
	tw.Close()
	f.Add(buf.Bytes())
	for _, h := range archivetest.HostileTars() {
		f.Add(h.Tar)
	}
	buf.Reset()
	tw = tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "usr/bin/ping", Typeflag: tar.TypeReg, Mode: 0o755, Format: tar.FormatPAX, PAXRecords: map[string]string{
		"SCHILY.xattr.security.capability":     "\x01\x00\x00\x02\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
		"LIBARCHIVE.xattr.security.capability": "AQAAAgAgAAAAAAAAAAAAAAAAAAA",
		"LIBARCHIVE.xattr.user.a%3Db":          "dg",
	}})
	tw.Close()
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewTarReader(bytes.NewReader(in))
		const budget = 1 << 20
		r.holes = &limitReader{left: budget, max: budget}
		var out bytes.Buffer
		w := NewTarWriter(&out, tar.FormatUnknown)
		var read []tarFuzzEntry
		whole := true // every entry read was written, data and all
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
			if tf := e.Format.(*TarFormat); tf.Sparse != nil && (tf.Sparse.Stored < 0 || tf.Sparse.Stored > e.Size) {
				t.Fatalf("%q: %d bytes stored of %d", e.Name, tf.Sparse.Stored, e.Size)
			}
			XattrsText(e.Xattrs) // list's and diff's view of them: no panic
			if c, err := pathx.Clean(e.Name); err == nil {
				if strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") {
					t.Fatalf("pathx.Clean(%q) = %q escapes the root", e.Name, c)
				}
			}
			if !whole || w.WriteHeader(e) != nil {
				whole = false
				io.Copy(io.Discard, r)
				continue
			}
			var data bytes.Buffer
			n, err := io.Copy(io.MultiWriter(w, &data), r)
			if err != nil {
				whole = false
				continue
			}
			if e.Type == TypeRegular && n != e.Size {
				t.Fatalf("%q: read %d bytes of %d", e.Name, n, e.Size)
			}
			read = append(read, tarFuzzEntry{e.Name, e.Type, data.String()})
		}
		if !whole || w.Close() != nil {
			return
		}
		// What was written whole reads back the same: names, types, data.
		back := NewTarReader(bytes.NewReader(out.Bytes()))
		for i := 0; ; i++ {
			e, err := back.Next()
			if err == io.EOF && i == len(read) {
				return
			}
			if err != nil || i >= len(read) {
				t.Fatalf("reading back entry %d of %d: %v", i, len(read), err)
			}
			data, err := io.ReadAll(back)
			if err != nil {
				t.Fatalf("reading back %q: %v", e.Name, err)
			}
			if got := (tarFuzzEntry{e.Name, e.Type, string(data)}); got != read[i] {
				t.Fatalf("entry %d read back as %q %s (%d bytes), written as %q %s (%d bytes)",
					i, got.name, got.typ, len(got.data), read[i].name, read[i].typ, len(read[i].data))
			}
		}
	})
}

type tarFuzzEntry struct {
	name string
	typ  Type
	data string
}
