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
// without panicking, and Clean never lets a name out of the root.
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
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewTarReader(bytes.NewReader(in))
		for {
			e, err := r.Next()
			if err != nil {
				return
			}
			io.Copy(io.Discard, r)
			if c, err := pathx.Clean(e.Name); err == nil {
				if strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") {
					t.Fatalf("pathx.Clean(%q) = %q escapes the root", e.Name, c)
				}
			}
		}
	})
}
