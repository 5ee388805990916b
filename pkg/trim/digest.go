package trim

import (
	"fmt"
	"io"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// TreeDigest is the digest of a directory tree's canonical listing: every
// entry's name, type, mode, owner, size, mtime, link target and device
// numbers, plus the sha256 of each regular file's content, in Buildroot's
// sort order. Two trees with the same digest give the same image.
func TreeDigest(root string) (string, int, error) {
	r, err := archive.NewDirReader(root, archive.DirReaderOptions{})
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	h := digest.New()
	n := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			return "sha256:" + digest.Sum(h), n, nil
		}
		if err != nil {
			return "", 0, err
		}
		n++
		content := ""
		if e.Type == archive.TypeRegular && e.Size > 0 {
			if content, err = digest.Reader(r); err != nil {
				return "", 0, fmt.Errorf("%s: %w", names.Quote(e.Name), err)
			}
		}
		fmt.Fprintf(h, "%s\x00%s\x00%o\x00%d\x00%d\x00%d\x00%d\x00%s\x00%d,%d\x00%d\x00%s\n",
			e.Name, e.Type, e.Mode, e.UID, e.GID, e.Size, e.ModTime.UnixNano(), e.Linkname,
			e.RdevMajor, e.RdevMinor, e.Nlink, content)
	}
}
