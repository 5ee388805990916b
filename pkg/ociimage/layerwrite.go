package ociimage

import (
	"hash"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// layerWriter writes a new layer to a scratch file: tar, compressed as
// asked (gzip with no name and no time in its header; zstd at level 3, as
// the zstd CLI's default and containers/image's, on one thread, since
// zstd's output depends on the thread count), hashed on both sides: the
// same entries give the same bytes.
type layerWriter struct {
	archive.Writer
	file     *os.File
	blobHash hash.Hash
	diffHash hash.Hash
	comp     io.WriteCloser // the compressor; nil for none
	codec    compress.Codec
}

func newLayer(dir string, codec compress.Codec) (*layerWriter, error) {
	f, err := os.CreateTemp(dir, ".layer-")
	if err != nil {
		return nil, err
	}
	lw := &layerWriter{file: f, blobHash: digest.New(), diffHash: digest.New(), codec: codec}
	var w io.Writer = io.MultiWriter(f, lw.blobHash)
	switch codec {
	case compress.Gzip:
		lw.comp = gzip.NewWriter(w)
	case compress.Zstd:
		if lw.comp, _, err = compress.NewWriter(w, compress.Zstd, compress.WriterOptions{Level: 3, Threads: 1, Backend: compress.PureGo}); err != nil {
			lw.abort()
			return nil, err
		}
	}
	if lw.comp != nil {
		w = lw.comp
	}
	lw.Writer = archive.NewTarWriter(io.MultiWriter(w, lw.diffHash), 0)
	return lw, nil
}

// finish ends the layer; the file stays, for the image to take.
func (lw *layerWriter) finish() (*Layer, error) {
	if err := lw.Writer.Close(); err != nil {
		return nil, err
	}
	if lw.comp != nil {
		if err := lw.comp.Close(); err != nil {
			return nil, err
		}
	}
	fi, err := lw.file.Stat() // a new file: its size is the blob's
	if err == nil {
		err = lw.file.Close()
	}
	if err != nil {
		return nil, err
	}
	return &Layer{Digest: "sha256:" + digest.Sum(lw.blobHash), DiffID: "sha256:" + digest.Sum(lw.diffHash),
		size: fi.Size(), codec: lw.codec, blob: lw.file.Name(), digestKnown: true}, nil
}

func (lw *layerWriter) abort() {
	lw.file.Close()
	os.Remove(lw.file.Name())
}
