package ociimage

import (
	"bytes"
	"fmt"
	"io"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// Reader is the merged filesystem as archive entries, in layer order. A
// directory comes where its last incarnation first appears, with its last
// header; a file comes where its last entry is. A layer read again for a
// file's data is read on to its end when the Reader leaves it, where both
// digests are checked again: an image changed since Open fails there.
type Reader struct {
	img  *Image
	next int // in img.tree.order
	data io.Reader
	// again is a layer being read again for data the first pass did not
	// keep, and at the number of its entries read.
	again *layerStream
	at    int
}

// Reader starts the pass over the merged view.
func (img *Image) Reader() *Reader {
	img.emitted = map[any]archive.Entry{}
	return &Reader{img: img}
}

func (r *Reader) Next() (*archive.Entry, error) {
	s := r.img.tree
	r.data = nil
	if r.next >= len(s.order) {
		if err := r.leave(-1); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	k := s.order[r.next]
	r.next++
	if err := r.leave(k.layer); err != nil {
		return nil, err
	}
	return r.yield(k, s.plan[k]), nil
}

// yield is entry k as the plan says, noted so that Write knows it when it
// comes back unchanged.
func (r *Reader) yield(k key, p *planned) *archive.Entry {
	e, asRead := p.entry()
	r.data = r.dataOf(k, p, e, asRead)
	r.img.emitted[e.Format] = *e
	return e
}

// entry is the header the Reader yields for p, and the name its data has
// in its layer ("" for none).
func (p *planned) entry() (e *archive.Entry, asRead string) {
	switch {
	case p.as != "":
		// The data of a hard link whose first name is gone: that entry's
		// header, under the link's name.
		e = p.node.linkHdr.Clone()
		asRead = e.Name
		e.Name = p.as
	case p.hdr != nil:
		// A directory's last header, or a hard link pointing elsewhere:
		// neither has data.
		e = p.hdr.Clone()
	default:
		e = p.node.hdr.Clone() // the entry at k, as read
		asRead = e.Name
	}
	if e.Format == nil {
		e.Format = &archive.TarFormat{}
	} else if tf, ok := e.Format.(*archive.TarFormat); ok {
		c := *tf
		e.Format = &c
	}
	return e, asRead
}

// dataOf is the data of entry k, yielded as e: what the first pass kept,
// or its layer read again.
func (r *Reader) dataOf(k key, p *planned, e *archive.Entry, asRead string) io.Reader {
	switch b, ok := r.img.tree.data[k]; {
	case p.hdr != nil || e.Size <= 0:
		return archive.NoData{}
	case ok:
		return bytes.NewReader(b)
	}
	return &readAgain{r: r, k: k, name: asRead}
}

// File is an entry of the merged view and its data (Image.Files).
type File struct {
	Entry *archive.Entry
	Data  []byte
}

// Files returns the entries of the merged view whose clean names want
// says, as the Reader yields them, each with at most max bytes of its
// data: what an image records about itself (its dpkg database, owners
// lists), read before the pass that judges it, as a container sees them
// (whiteouts applied as containerd's applyNaive, archive/tar.go behind
// archive.Apply, applies them), not the files of any one layer.
func (img *Image) Files(want func(name string) bool, max int64) ([]File, error) {
	var files []File
	err := img.EachFile(func(name string, _ *archive.Entry) bool { return want(name) }, func(e *archive.Entry, data io.Reader) error {
		b, err := io.ReadAll(io.LimitReader(data, max))
		if err != nil {
			return fmt.Errorf("%s: %w", names.Quote(e.Name), err)
		}
		files = append(files, File{Entry: e, Data: b})
		return nil
	})
	return files, err
}

// EachFile gives fn each entry of the merged view that want takes (by its
// clean name and its entry, as Files yields them), with its data, in
// order, without holding it: a layer is read again only up to the last
// file wanted from it.
func (img *Image) EachFile(want func(name string, e *archive.Entry) bool, fn func(e *archive.Entry, data io.Reader) error) error {
	r := &Reader{img: img}
	defer r.Close()
	s := img.tree
	for _, k := range s.order {
		p := s.plan[k]
		e, asRead := p.entry()
		if !want(p.node.name, e) {
			continue
		}
		if err := r.leave(k.layer); err != nil {
			return err
		}
		if err := fn(e, r.dataOf(k, p, e, asRead)); err != nil {
			return err
		}
	}
	return r.leave(-1)
}

// readAgain is the data of entry k that the first pass did not keep: its
// layer is read again once the data is.
type readAgain struct {
	r    *Reader
	k    key
	name string // as the layer has it
	src  io.Reader
}

func (d *readAgain) Read(p []byte) (int, error) {
	if d.src == nil {
		src, err := d.r.seek(d.k, d.name)
		if err != nil {
			return 0, err
		}
		d.src = src
	}
	return d.src.Read(p)
}

// seek reads k's layer again up to entry k, whose name was name.
func (r *Reader) seek(k key, name string) (io.Reader, error) {
	if r.again == nil {
		ls, err := r.img.openLayer(r.img.Layers[k.layer])
		if err != nil {
			return nil, err
		}
		r.again, r.at = ls, 0
	}
	if r.at > k.ord+1 {
		return nil, fmt.Errorf("%s: entry %d read after entry %d", r.again.l, k.ord, r.at-1)
	}
	for r.at <= k.ord {
		e, err := r.again.Next()
		if err == nil && r.at == k.ord && e.Name != name {
			err = fmt.Errorf("entry %d is %q, not %q as it was", k.ord, e.Name, name)
		}
		if err != nil {
			// A layer that changed since Open says so (finish).
			l := r.again.l
			if ferr := r.leave(-1); ferr != nil {
				return nil, ferr
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%s: %w", l, err)
		}
		r.at++
	}
	return r.again, nil
}

// leave ends the layer read again, checking its digests, unless it is
// layer (-1: whichever it is).
func (r *Reader) leave(layer int) error {
	if r.again == nil || r.again.l.Index == layer {
		return nil
	}
	err := r.again.finish()
	r.again = nil
	return err
}

func (r *Reader) Read(p []byte) (int, error) {
	if r.data == nil {
		return 0, io.EOF
	}
	return r.data.Read(p)
}

func (r *Reader) Close() error {
	if r.again != nil {
		r.again.close()
		r.again = nil
	}
	return nil
}
