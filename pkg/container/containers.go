package container

import (
	"io"
	"os"
	"path/filepath"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
)

// Container is one kind of container of a root filesystem: how it is
// recognised, how its parts are found and read, and how an output of it
// is written. TestEveryContainerHandled walks the table: every row's
// samples are recognised by it, read back, and rewritten by Rewrite, and
// each has its row in docs/formats.md ("Containers and compressions").
type Container interface {
	// Name is its name in docs/formats.md's containers table.
	Name() string
	// Is says whether the input at path, with fi, is one; Open asks the
	// rows in their order (containers), and the first that says yes
	// opens it.
	Is(path string, fi os.FileInfo) bool
	// Open finds its parts and reads them as one Input.
	Open(path string, fi os.FileInfo, opt OpenOptions) (*Input, error)
	// Output is the output written from in, one of this container, as
	// want asks: its archive's format, and the container that writes it
	// (this one, another, or what holds the same archive otherwise: an
	// ISO image's initrd alone). note gets what the user should hear of
	// a choice made for them; errors are UsageErrors.
	Output(in *Input, want Want, note func(string)) (Shape, error)
	// writer is the container that writes an output of format f from in
	// once this one was chosen (outputIn).
	writer(in *Input, f archive.Format) Container
	// create starts an output of this container, from what w says.
	create(w writing) (sink, error)
	// describe says what f in it is (Shape.String); formatName names it
	// in the manifest (Shape.FormatName).
	describe(f archive.Format) string
	formatName(f archive.Format) string
	// ownersUnknown says why a user should hear that the owners of an
	// input of it are unknown, when no database names them
	// (OwnersUnknown); "" when that is not worth saying.
	ownersUnknown() string
}

// writing is what an output is made from: the input, where the output
// goes (beside its final path until committed), its archive format, and
// the rewrite's options with the taps that watch the input's streams.
type writing struct {
	in       *Input
	path     string
	out      Shape
	opt      RewriteOptions
	matchers taps
}

// noReuse lets the input's tap go: what is not a stream reuses nothing.
func (w writing) noReuse() {
	if m := w.matchers[0]; m != nil {
		m.Disable()
	}
}

// containers is the order Open tries them in; TestContainerOrder holds
// why each is where it is: an image is a directory or a tar file, so it
// comes before the tree and the stream; an ISO image and an initrd of
// segments are regular files, so they come before the stream, which
// takes every regular file.
var containers = []Container{imageContainer{}, treeContainer{}, isoContainer{}, segmentsContainer{}, streamContainer{}}

// containerOf returns the container the input at path, with fi, is;
// false for none.
func containerOf(path string, fi os.FileInfo) (Container, bool) {
	for _, c := range containers {
		if c.Is(path, fi) {
			return c, true
		}
	}
	return nil, false
}

// sniff says what is of the file at path; false when it cannot be opened.
func sniff(path string, is func(io.ReaderAt) bool) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return is(f)
}

// OwnersUnknown is why the owners of the input at path are worth a note
// when no database names them, as its container says
// (Container.ownersUnknown); "" when nothing need be said. Only the
// containers with something to say are asked whether it is theirs.
func OwnersUnknown(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	for _, c := range containers {
		if why := c.ownersUnknown(); why != "" && c.Is(path, fi) {
			return why
		}
	}
	return ""
}

// streamContainer is a single stream: one archive, raw or compressed.
type streamContainer struct{ plain }

func (streamContainer) Name() string                     { return "stream" }
func (streamContainer) Is(_ string, fi os.FileInfo) bool { return fi.Mode().IsRegular() }
func (streamContainer) Open(path string, fi os.FileInfo, opt OpenOptions) (*Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return streamFile(path, f, fi, opt)
}

func (streamContainer) create(w writing) (sink, error) {
	level := loneLevel(w.in, w.out.Format, w.opt)
	o, err := createStream(w.path, w.out.Format, OutputOptions{Compress: compressOptions(w.opt, level),
		Digest: w.opt.Digest, Reuse: reuseFor(w.matchers[0], w.in, w.out, w.opt)})
	if err != nil {
		return nil, err
	}
	o.level = level
	return o, nil
}

// treeContainer is a directory tree: its one part is the tree.
type treeContainer struct{ plain }

func (treeContainer) Name() string                     { return "tree" }
func (treeContainer) Is(_ string, fi os.FileInfo) bool { return fi.IsDir() }
func (treeContainer) Open(path string, _ os.FileInfo, _ OpenOptions) (*Input, error) {
	r, err := archive.NewDirReader(path, archive.DirReaderOptions{})
	if err != nil {
		return nil, err
	}
	return &Input{Reader: r, Path: path, Format: Shape{treeContainer{}, archive.Format{Kind: archive.KindDir}}, src: treeSource{r}}, nil
}

// create starts a tree in a new directory beside its path; "tree/", as a
// shell completes a directory name, is the tree. What lands on disk is
// bounded by --max-size too, holes not counted: the budget on what is read
// counts them, this what is written (issue 37: a sparse file must not land
// dense).
func (treeContainer) create(w writing) (sink, error) {
	w.noReuse()
	maxData := w.opt.Open.MaxSize
	if maxData <= 0 {
		maxData = DefaultMaxSize
	}
	p, err := tempDirFor(filepath.Clean(w.path), true)
	if err != nil {
		return nil, err
	}
	dw, err := archive.NewDirWriter(p.tmp, archive.DirWriterOptions{MaxData: maxData})
	if err != nil {
		os.RemoveAll(p.tmp)
		return nil, err
	}
	return &treeOut{dw, p}, nil
}

// imageContainer is an OCI image layout or a `docker save` tarball (its
// kind; zero in the table, where either is recognised): its parts are its
// layers, read as the merged filesystem (ociimage.Reader).
type imageContainer struct {
	plain // its Output
	kind  ociimage.Kind
}

func (c imageContainer) describe(f archive.Format) string {
	return c.kind.String() + " image (tar layers), " + f.Codec.String()
}
func (c imageContainer) formatName(archive.Format) string        { return c.kind.String() }
func (c imageContainer) writer(*Input, archive.Format) Container { return c }

func (imageContainer) Name() string { return "image" }

// Is: the content says so (an oci-layout file, a manifest.json member,
// and no name an image writer does not make: ociimage.Detect). An input
// that is an image and a tree at once is taken here too, and
// ociimage.Open refuses it.
func (imageContainer) Is(path string, fi os.FileInfo) bool {
	return (fi.IsDir() || fi.Mode().IsRegular()) && ociimage.IsImage(path, fi)
}

func (imageContainer) Open(path string, _ os.FileInfo, opt OpenOptions) (*Input, error) {
	return openImage(path, opt)
}

// create starts an image in a new directory beside its path: the layout
// itself, or where the tarball is made.
func (c imageContainer) create(w writing) (sink, error) {
	w.noReuse()
	p, err := tempDirFor(w.path, c.kind == ociimage.Layout)
	if err != nil {
		return nil, err
	}
	img := w.opt.Image
	iw, err := ociimage.NewWriter(p.tmp, ociimage.WriteOptions{Kind: c.kind, Squash: img.Squash, CreatedBy: img.CreatedBy,
		Epoch: img.Epoch, Codec: w.out.Codec, Source: w.in.Image()})
	if err != nil {
		os.RemoveAll(p.tmp)
		return nil, err
	}
	return &imageOut{iw, p}, nil
}
