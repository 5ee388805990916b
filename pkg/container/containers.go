package container

import (
	"os"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
)

// containerRow is one kind of container of a root filesystem: how it is
// recognised, how its parts are found and read, and how it is rewritten.
// Open and Create read the table; TestEveryContainerHandled fails while an
// output format no row writes, a row with a column unset, or one without
// its row in docs/formats.md ("Containers and compressions") is there.
//
// The ISO 9660 image's parts are the files of the initrd its boot
// configuration names (Input.Parts); its Create writes the image back
// around the rewritten initrd (iso.go, isowrite.go). The segmented initrd
// and the OCI image of the issues to come are rows whose Open finds
// several parts too.
type containerRow struct {
	// Name is its name in docs/formats.md's containers table.
	Name string
	// Is recognises it, from the input's os.Stat.
	Is func(fi os.FileInfo) bool
	// Content, when set, recognises it from the file's bytes too, once Is
	// said yes (an ISO image is a regular file); nil takes what Is takes.
	Content func(path string) bool
	// Open finds its parts and returns them as one Input.
	Open func(path string, fi os.FileInfo, opt OpenOptions) (*Input, error)
	// Writes says whether an output of format f is this container.
	Writes func(f archive.Format) bool
	// Create starts o, at o.Path, in a temporary beside it (dir, base:
	// o.Path split), which Output.Commit checks and renames into place.
	Create func(o *Output, dir, base string, opt OutputOptions) error
}

// containers: the first row whose Is or Writes says yes is the one.
var containers = []containerRow{
	{Name: "image", Is: isDirOrRegular, Content: isImagePath, Open: openImage, Writes: isImage, Create: createImage},
	{Name: "tree", Is: os.FileInfo.IsDir, Open: openTree, Writes: isTree, Create: createTree},
	{Name: "iso9660", Is: isRegular, Content: isISOFile, Open: openISO, Writes: isISO, Create: createISO},
	{Name: "stream", Is: isRegular, Open: openFile, Writes: isStream, Create: createStream},
}

func isRegular(fi os.FileInfo) bool { return fi.Mode().IsRegular() }
func isTree(f archive.Format) bool  { return f.Kind == archive.KindDir }
func isStream(f archive.Format) bool {
	return f.Kind != archive.KindDir && f.Container == "" && f.Image == ""
}
func isImage(f archive.Format) bool { return f.Image != "" }

// isDirOrRegular: an image is a layout directory or a save tarball.
func isDirOrRegular(fi os.FileInfo) bool { return fi.IsDir() || fi.Mode().IsRegular() }

// isImagePath says whether the layout or tarball at path is an image; its
// content says so (an oci-layout file, a manifest.json member, and no name
// an image writer does not make: ociimage.Detect). An input that is an
// image and a tree at once is taken here too, and ociimage.Open refuses it.
func isImagePath(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && ociimage.IsImage(path, fi)
}

// containerOf returns the container the input at path, with fi, is;
// false for none.
func containerOf(path string, fi os.FileInfo) (containerRow, bool) {
	for _, row := range containers {
		if row.Is(fi) && (row.Content == nil || row.Content(path)) {
			return row, true
		}
	}
	return containerRow{}, false
}

// containerWriting returns the container an output of format f is: the
// last row writes whatever another does not.
func containerWriting(f archive.Format) containerRow {
	for _, row := range containers {
		if row.Writes(f) {
			return row
		}
	}
	return containers[len(containers)-1]
}
