package ociimage

import (
	"fmt"
	"io"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// Reader is the second pass: the merged filesystem as archive entries, in
// layer order. A directory comes where its last incarnation first
// appears, with its last header; a file comes where its last entry is.
// Each layer's digests are checked when its end is read: an image whose
// bytes changed since Open fails there.
type Reader struct {
	img   *Image
	layer int
	cur   *layerStream
	ord   int
	data  io.Reader
}

// Reader starts the second pass.
func (img *Image) Reader() *Reader {
	img.emitted = map[any]emitted{}
	return &Reader{img: img, layer: -1}
}

// Next returns the next entry of the merged view.
func (r *Reader) Next() (*archive.Entry, error) {
	for {
		if r.cur == nil {
			if r.layer+1 >= len(r.img.Layers) {
				return nil, io.EOF
			}
			r.layer++
			ls, err := r.img.openLayer(r.img.Layers[r.layer])
			if err != nil {
				return nil, err
			}
			r.cur, r.ord = ls, 0
		}
		e, err := r.cur.Next()
		if err == io.EOF {
			err := r.cur.finish()
			r.cur = nil
			if err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.cur.l, err)
		}
		k := key{r.layer, r.ord}
		r.ord++
		p := r.img.tree.plan[k]
		if p == nil {
			continue
		}
		return r.yield(e, p), nil
	}
}

// yield is entry e as the plan says, noted so that Write knows it when it
// comes back unchanged.
func (r *Reader) yield(e *archive.Entry, p *planned) *archive.Entry {
	r.data = r.cur
	switch {
	case p.as != "":
		e = e.Clone()
		e.Name = p.as
	case p.hdr != nil:
		// A directory's last header, or a hard link pointing elsewhere:
		// neither has data.
		e = p.hdr.Clone()
		r.data = eofReader{}
	}
	if e.Format == nil {
		e.Format = &archive.TarFormat{}
	} else if tf, ok := e.Format.(*archive.TarFormat); ok {
		c := *tf
		e.Format = &c
	}
	r.img.emitted[e.Format] = emitted{node: p.node, entry: *e}
	return e
}

// emitted is an entry the Reader yielded: what Write compares an entry
// that comes back with.
type emitted struct {
	node  *node
	entry archive.Entry
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// Read returns the data of the entry Next returned.
func (r *Reader) Read(p []byte) (int, error) {
	if r.data == nil {
		return 0, io.EOF
	}
	return r.data.Read(p)
}

// Close stops the pass.
func (r *Reader) Close() error {
	if r.cur != nil {
		r.cur.close()
		r.cur = nil
	}
	return nil
}
