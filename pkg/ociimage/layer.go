package ociimage

import (
	"bufio"
	"bytes"
	"fmt"
	"hash"
	"io"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// layerStream is one layer being read: its blob hashed as it is read,
// decompressed, the tar hashed again (the diff_id), and its entries.
type layerStream struct {
	l        *Layer
	blob     io.ReadCloser
	blobHash hash.Hash
	dec      io.ReadCloser
	diff     io.Reader // dec, hashed into diffHash, within MaxSize
	diffHash hash.Hash
	archive.Reader
}

// openLayer starts reading layer l. A layer that is not a tar (after its
// compression, any pkg/compress reads) is refused, naming it.
func (img *Image) openLayer(l *Layer) (*layerStream, error) {
	rc, _, err := img.store.open(l.blob)
	if err != nil {
		return nil, errMissing(l.String(), l.blobOrDigest(), err)
	}
	s := &layerStream{l: l, blob: rc, blobHash: digest.New(), diffHash: digest.New()}
	dec, codec, err := compress.NewReader(io.TeeReader(rc, s.blobHash), compress.ReaderOptions{Backend: img.opt.Backend})
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("%s: %w", l, err)
	}
	l.codec, s.dec = codec, dec
	max := img.opt.MaxSize
	if max <= 0 {
		max = 32 << 30
	}
	budget := archive.NewBudget(io.TeeReader(dec, s.diffHash), max)
	// What finish drains past the tar's end counts against MaxSize too: a
	// bomb after the end-of-archive blocks is still a bomb.
	s.diff = budget
	br := bufio.NewReaderSize(budget, 256<<10)
	head, _ := br.Peek(512)
	if len(head) == 0 || len(head) == 512 && bytes.Count(head, []byte{0}) == 512 {
		// An empty layer: no entry, or only the end-of-archive blocks.
		s.Reader = emptyReader{}
		s.diff = io.MultiReader(br, s.diff)
		return s, nil
	}
	f, err := archive.SniffFormat(br)
	if err != nil || f.Kind != archive.KindTar {
		s.close()
		if err == nil {
			err = fmt.Errorf("it is %s", f.Kind)
		}
		return nil, fmt.Errorf("%s: not a tar: %w", l, err)
	}
	s.Reader = archive.NewReaderFor(br, f, budget)
	return s, nil
}

type emptyReader struct{}

func (emptyReader) Next() (*archive.Entry, error) { return nil, io.EOF }
func (emptyReader) Read([]byte) (int, error)      { return 0, io.EOF }

// finish reads the rest of the layer and checks both digests. The first
// pass learns a legacy layer's blob digest; the second checks it.
func (s *layerStream) finish() error {
	defer s.close()
	if _, err := io.Copy(io.Discard, s.diff); err != nil {
		return fmt.Errorf("%s: %w", s.l, err)
	}
	if _, err := io.Copy(io.Discard, io.TeeReader(s.blob, s.blobHash)); err != nil {
		return fmt.Errorf("%s: %w", s.l, err)
	}
	blob := "sha256:" + digest.Sum(s.blobHash)
	if !s.l.digestKnown {
		s.l.Digest, s.l.digestKnown = blob, true
	} else if blob != s.l.Digest {
		return fmt.Errorf("%s: digest mismatch: the blob's sha256 is %s", s.l, blob)
	}
	if diff := "sha256:" + digest.Sum(s.diffHash); diff != s.l.DiffID {
		return fmt.Errorf("%s: diff_id mismatch: the config says %s, the uncompressed layer's sha256 is %s", s.l, s.l.DiffID, diff)
	}
	return nil
}

func (s *layerStream) close() {
	if s.dec != nil {
		s.dec.Close()
	}
	s.blob.Close()
}

// sameData says whether the data of entry k is r's. It reads k's layer
// up to k again, for the rare entry written back as it was.
func (img *Image) sameData(k key, r io.Reader) (bool, error) {
	ls, err := img.openLayer(img.Layers[k.layer])
	if err != nil {
		return false, err
	}
	defer ls.close()
	for ord := 0; ord <= k.ord; ord++ {
		if _, err := ls.Next(); err != nil {
			return false, fmt.Errorf("%s: %w", ls.l, err)
		}
	}
	return sameBytes(ls, r)
}

func sameBytes(a, b io.Reader) (bool, error) {
	ba, bb := make([]byte, 32<<10), make([]byte, 32<<10)
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		aEnd := ea == io.EOF || ea == io.ErrUnexpectedEOF
		bEnd := eb == io.EOF || eb == io.ErrUnexpectedEOF
		switch {
		case ea != nil && !aEnd:
			return false, ea
		case eb != nil && !bEnd:
			return false, eb
		case aEnd || bEnd:
			return aEnd && bEnd, nil
		}
	}
}
