// Command genimage makes a multi-layer OCI image layout of a tree (one
// bench/genrootfs made), as an image build would: the tree's top-level
// directories spread over -layers layers, in name order, and a last layer
// that removes a file of the first (a whiteout) and adds one, each layer
// gzip'd, with go-containerregistry. bench/run.sh's apply-image case
// times rootfs-trim apply on it against umoci unpack, rm, umoci repack.
package main

import (
	"archive/tar"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func main() {
	tree := flag.String("tree", "", "the tree to make an image of")
	out := flag.String("out", "", "the OCI layout to write (must not exist)")
	ref := flag.String("ref", "bench", "its org.opencontainers.image.ref.name")
	layers := flag.Int("layers", 4, "layers of the tree's top-level directories")
	flag.Parse()
	if *tree == "" || *out == "" || *layers < 1 {
		log.Fatal("usage: genimage -tree DIR -out LAYOUT [-ref NAME] [-layers N]")
	}
	tops, err := os.ReadDir(*tree)
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, d := range tops {
		names = append(names, d.Name())
	}
	sort.Strings(names)
	img := mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1)
	per := (len(names) + *layers - 1) / *layers
	var first string
	for i := 0; i < len(names); i += per {
		group := names[i:min(i+per, len(names))]
		if first == "" {
			first = firstFile(*tree, group)
		}
		img = appendLayer(img, func(w io.Writer) error { return writeTree(w, *tree, group) }, fmt.Sprintf("COPY %v /", group))
	}
	last := func(w io.Writer) error {
		tw := tar.NewWriter(w)
		dir, base := filepath.Split(first)
		for _, h := range []*tar.Header{{Name: dir + ".wh." + base, Typeflag: tar.TypeReg, Mode: 0o644}, {Name: "etc/bench-release", Typeflag: tar.TypeReg, Mode: 0o644, Size: 6}} {
			h.ModTime = time.Unix(1700000000, 0)
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
		}
		if _, err := tw.Write([]byte("bench\n")); err != nil {
			return err
		}
		return tw.Close()
	}
	img = appendLayer(img, last, "RUN rm /"+first+" && echo bench > /etc/bench-release")
	cf, err := img.ConfigFile()
	if err != nil {
		log.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		log.Fatal(err)
	}
	p, err := layout.Write(*out, empty.Index)
	if err != nil {
		log.Fatal(err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": *ref})); err != nil {
		log.Fatal(err)
	}
}

// appendLayer adds the layer write makes, streamed each time
// go-containerregistry reads it.
func appendLayer(img v1.Image, write func(io.Writer) error, createdBy string) v1.Image {
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(write(pw)) }()
		return pr, nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		log.Fatal(err)
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{CreatedBy: createdBy, Created: v1.Time{Time: time.Unix(1700000000, 0)}}})
	if err != nil {
		log.Fatal(err)
	}
	return img
}

// writeTree writes the tops of root as a tar, in walk order.
func writeTree(w io.Writer, root string, tops []string) error {
	tw := tar.NewWriter(w)
	for _, top := range tops {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			link := ""
			if fi.Mode()&fs.ModeSymlink != 0 {
				if link, err = os.Readlink(p); err != nil {
					return err
				}
			}
			h, err := tar.FileInfoHeader(fi, link)
			if err != nil {
				return nil // a socket or the like: not in an image
			}
			rel, _ := filepath.Rel(root, p)
			h.Name, h.Uname, h.Gname = filepath.ToSlash(rel), "", ""
			if d.IsDir() {
				h.Name += "/"
			}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if fi.Mode().IsRegular() {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				_, err = io.Copy(tw, f)
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return tw.Close()
}

// firstFile is the first regular file of the tops, for the last layer to
// remove.
func firstFile(root string, tops []string) string {
	var found string
	for _, top := range tops {
		filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err == nil && found == "" && d.Type().IsRegular() {
				found, _ = filepath.Rel(root, p)
				return fs.SkipAll
			}
			return err
		})
	}
	return filepath.ToSlash(found)
}
