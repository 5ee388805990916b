package ociimage

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// An input is an image only when nothing in it is other than what image
// writers put there: a Buildroot target or a rootfs tar that happens to
// hold an oci-layout or a manifest.json at its top is the tree or archive
// it is, and judged as one; the image view never replaces the tree view.
// The whole member list decides, not its first members: skopeo finds
// manifest.json wherever it is (findTarComponent reads to the end).

// imageFile matches the name of a file image writers put in a layout or
// a tarball:
//   - the OCI layout (image-spec image-layout.md): oci-layout, index.json,
//     blobs/<alg>/<encoded>;
//   - docker save (moby's image/tarexport): manifest.json, repositories,
//     the config <hex>.json, and the legacy <id>/json, <id>/VERSION,
//     <id>/layer.tar;
//   - containers/image's docker-archive writer (skopeo, podman save;
//     docker/internal/tarfile/writer.go): the layers <hex>.tar;
//   - go-containerregistry's tarball.Write: the config sha256:<hex>, the
//     layers <hex>.tar.gz, .tar.zst, .tar.
var imageFile = regexp.MustCompile(`^(?:oci-layout|index\.json|manifest\.json|repositories|` +
	`blobs/[a-z0-9]+(?:[+._-][a-z0-9]+)*/[a-zA-Z0-9=_-]+|` +
	`[0-9a-f]{64}/(?:json|VERSION|layer\.tar)|` +
	`(?:sha256:)?[0-9a-f]{64}(?:\.json|\.tar|\.tar\.gz|\.tar\.zst)?)$`)

// imageDir matches a directory image writers make: blobs, blobs/<alg>,
// docker save's legacy <id>.
var imageDir = regexp.MustCompile(`^(?:\.|blobs|blobs/[a-z0-9]+(?:[+._-][a-z0-9]+)*|[0-9a-f]{64})$`)

// errNotImage stops a walk at the first name no image writer makes.
var errNotImage = errors.New("not an image")

// imageMember says whether a member named name, of type typ (a tar
// typeflag), is one an image writer makes, its name cleaned as
// findTarComponent cleans it (path.Clean: "./x" and "a/../x" are "x",
// "/x" and "../x" are no member of an image).
func imageMember(name string, typ byte) bool {
	clean := path.Clean(name)
	if strings.HasPrefix(clean, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
		return false
	}
	switch typ {
	case tar.TypeDir:
		return imageDir.MatchString(clean)
	case tar.TypeReg, tar.TypeSymlink:
		// A symlink: docker save's and containers/image's <id>/layer.tar
		// naming the layer another <id> holds.
		return imageFile.MatchString(clean)
	}
	return false
}

// IsImage says whether path is an image (Detect), or would be but for
// files no image writer makes: Open then refuses it.
func IsImage(path string, fi os.FileInfo) bool {
	ok, err := Detect(path, fi)
	return ok || err != nil
}

// Detect says whether path is an image: a directory holding a regular
// oci-layout, or a tar file holding manifest.json or oci-layout, in which
// every name is one an image writer makes (imageMember). One that also
// holds other files but whose index still names an image is both, to
// rootfs-trim and to skopeo, podman load and containerd's importer: one
// view would go unjudged, and it is refused.
func Detect(path string, fi os.FileInfo) (bool, error) {
	var stray string
	var marked bool
	switch {
	case fi.IsDir():
		stray, marked = layoutDir(path)
	case fi.Mode().IsRegular():
		stray, marked = imageTar(path)
	}
	switch {
	case !marked:
		return false, nil
	case stray == "":
		return true, nil
	}
	kind, st, err := openRawStore(path, fi)
	if err != nil {
		// A name twice, which consumers read differently.
		return false, fmt.Errorf("%s: %w", path, err)
	}
	defer st.Close()
	img := &Image{Path: path, Kind: kind, store: st}
	entry, cands, err := img.candidates()
	if err != nil || len(cands) == 0 {
		return false, nil
	}
	as := map[Kind]string{Layout: "a tree", Archive: "a plain archive"}[kind]
	return false, fmt.Errorf("%s: both an image and %s: its %s names an image, and it holds %q, which no image writer puts there", path, as, entry, stray)
}

// layoutDir walks the directory to the first name no image writer makes
// (stray; a tree's first entry, bin or etc, stops it there). marked says
// that it holds a regular oci-layout: an OCI layout to podman load
// (containers/common libimage/load.go tries an OCI directory first).
func layoutDir(dir string) (stray string, marked bool) {
	fi, err := os.Lstat(filepath.Join(dir, "oci-layout"))
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		typ := byte(tar.TypeReg)
		switch {
		case d.IsDir():
			typ = tar.TypeDir
		case !d.Type().IsRegular():
			// The store opens nothing through a symlink (O_NOFOLLOW).
			typ = tar.TypeChar
		}
		if !imageMember(rel, typ) {
			stray = rel
			return errNotImage
		}
		return nil
	})
	if err != nil && stray == "" {
		stray = "(unreadable)"
	}
	return stray, true
}

// Marker says whether a tar member named name marks its tar as an image
// (manifest.json, oci-layout, wherever they are): what a reader of a
// stream, which cannot read the tar again by name, must refuse.
func Marker(name string) bool {
	switch path.Clean(name) {
	case "manifest.json", "oci-layout":
		return true
	}
	return false
}

// imageTar reads the tar's whole member list: marked says that it holds
// a Marker, stray is the first name no image writer makes. A file that is
// no tar is neither.
func imageTar(name string) (stray string, marked bool) {
	f, err := os.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	tr := tar.NewReader(&bufSeeker{f: f, buf: make([]byte, 1<<16)})
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return stray, marked
		}
		if err != nil {
			return "", false
		}
		if stray == "" && !imageMember(h.Name, h.Typeflag) {
			stray = h.Name
		}
		if Marker(h.Name) {
			marked = true
		}
	}
}

// bufSeeker reads f through a buffer, and seeks within it where it can:
// archive/tar skips a member's data by seeking (and reads its last byte),
// which on the file itself costs three system calls a member; a rootfs
// tar of small files has hundreds of thousands.
type bufSeeker struct {
	f    io.ReadSeeker
	buf  []byte
	r, w int   // buf[r:w] is what is read and not yet taken
	off  int64 // the file's offset: where buf[w] comes from
}

func (b *bufSeeker) Read(p []byte) (int, error) {
	if b.r == b.w {
		n, err := b.f.Read(b.buf)
		b.r, b.w, b.off = 0, n, b.off+int64(n)
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, b.buf[b.r:b.w])
	b.r += n
	return n, nil
}

// Seek moves from the current offset only, as archive/tar does.
func (b *bufSeeker) Seek(offset int64, whence int) (int64, error) {
	if whence != io.SeekCurrent {
		return 0, errors.New("bufSeeker: only io.SeekCurrent")
	}
	cur := b.off - int64(b.w-b.r)
	to := cur + offset
	if to >= b.off-int64(b.w) && to <= b.off {
		b.r = b.w - int(b.off-to)
		return to, nil
	}
	if _, err := b.f.Seek(to, io.SeekStart); err != nil {
		return cur, err
	}
	b.r, b.w, b.off = 0, 0, to
	return to, nil
}
