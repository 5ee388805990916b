package archive

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/pathx"
)

// FuzzTarReader: whatever archive/tar accepts, our reader maps to entries
// without panicking, and Clean never lets a name out of the root; a sparse
// file yields its Size, holes charged to the budget; the tar writer takes
// what was read (or refuses it) without panicking. The corpus
// (testdata/fuzz/FuzzTarReader) holds GNU tar's sparse forms (gnu, PAX
// 0.0, 0.1, 1.0), bsdtar's, and git archive's global header.
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
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewTarReader(bytes.NewReader(in))
		const budget = 1 << 20
		r.holes = &limitReader{left: budget, max: budget}
		w := NewTarWriter(io.Discard, tar.FormatUnknown)
		for {
			e, err := r.Next()
			if err != nil {
				return
			}
			if tf := e.Format.(*TarFormat); tf.Sparse != nil && (tf.Sparse.Stored < 0 || tf.Sparse.Stored > e.Size) {
				t.Fatalf("%q: %d bytes stored of %d", e.Name, tf.Sparse.Stored, e.Size)
			}
			if w.WriteHeader(e) == nil {
				n, err := io.Copy(w, r)
				if err == nil && e.Type == TypeRegular && n != e.Size {
					t.Fatalf("%q: read %d bytes of %d", e.Name, n, e.Size)
				}
			} else {
				io.Copy(io.Discard, r)
			}
			if c, err := pathx.Clean(e.Name); err == nil {
				if strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") {
					t.Fatalf("pathx.Clean(%q) = %q escapes the root", e.Name, c)
				}
			}
		}
	})
}
