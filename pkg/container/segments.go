package container

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/splice"
)

// Segment is one part of an initrd as the kernel's unpack_to_rootfs
// (init/initramfs.c) reads the file: a raw cpio archive, which starts with
// a "0" at an offset that is a multiple of 4, or a compressed stream whose
// magic decompress_method (lib/decompress.c) knows, decompressed to its
// end; zero bytes between them are skipped one by one.
type Segment struct {
	// Offset is where it starts in the file; Length how many bytes it
	// takes (a raw one's zeros after its trailer included).
	Offset, Length int64
	// Pad counts the zero bytes after it, outside any stream, before the
	// next segment or the end of the file.
	Pad   int64
	Codec compress.Codec
	// Entries counts the entries read from it, trailers included.
	Entries int
	// Applied: it holds the index of an earlier apply (which only apply
	// writes): the segment an earlier apply added.
	Applied bool
}

// segReader reads an initrd's segments one after the other as one stream
// of entries, each tagged with its segment's number (Entry.Segment).
type segReader struct {
	// src is the initrd as the kernel gets it: the file, or the files of
	// an ISO's initrd as the bootloader concatenates them (initrdView).
	src  io.ReaderAt
	view *initrdView // nil for a file of its own
	size int64
	opt  OpenOptions
	segs []Segment
	cur  *segPart
	next int64 // where the search for the next segment starts
	left int64 // decompressed bytes the size limit still allows
	// gzLays: the block maps of the gzip segments read for a reuse, by
	// segment (0-based), which their decoders made as they read them.
	gzLays map[int]*splice.GzipLayout
}

// segPart is the segment being read.
type segPart struct {
	cr    *archive.CpioReader
	dec   io.ReadCloser // nil for a raw segment
	src   *countingReader
	br    *bufio.Reader // the compressed bytes, for a stream decoded to its end
	over  func() int64
	known bool            // the segment's Length is known (cut to it)
	out   *countingReader // decompressed bytes, for the size limit
}

// segmentStart reports whether the file's first bytes start what the
// segmented reader reads: a raw cpio, or a compressed stream the kernel
// knows (lz4 frames and tar, which no kernel reads, go the single-stream
// way).
func segmentStart(head []byte) bool {
	if bytes.HasPrefix(head, []byte("07070")) {
		return true
	}
	_, _, ok := compress.KernelMagic(head)
	return ok
}

// segmentsContainer is an initrd of segments, as the kernel reads one:
// raw cpios and compressed streams one after the other (Segment).
type segmentsContainer struct{ plain }

func (segmentsContainer) Name() string { return "segments" }

// Is: it starts with what the segmented reader reads (segmentStart); Open
// still reads it as one stream when it is one after all.
func (segmentsContainer) Is(path string, fi os.FileInfo) bool {
	return fi.Mode().IsRegular() && sniff(path, func(f io.ReaderAt) bool {
		var head [16]byte
		n, _ := f.ReadAt(head[:], 0)
		return segmentStart(head[:n])
	})
}

func (segmentsContainer) Open(path string, fi os.FileInfo, opt OpenOptions) (*Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	in, ok, err := openSegments(f, fi.Size(), opt)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !ok {
		return streamFile(path, f, fi, opt)
	}
	return fileInput(in, path, f, fi)
}

// create writes the output segment by segment (segout.go): what a
// segment's entries leave unchanged is copied, what changes is written
// anew in its own compression, what apply adds goes in a new segment at
// the end.
func (segmentsContainer) create(w writing) (sink, error) {
	return &segWriter{in: w.in, final: w.path, format: w.out.Format, asked: w.out.Codec != w.in.Format.Codec, opt: w.opt, matchers: w.matchers}, nil
}

// openSegments opens the file as an initrd of segments. ok is false when
// it is no such thing after all (its first segment holds a tar, or is one
// stream to the end of a codec the single-stream reader reads in place):
// the caller opens it as a single stream.
func openSegments(f io.ReaderAt, size int64, opt OpenOptions) (in *Input, ok bool, err error) {
	s := &segReader{src: f, size: size, opt: opt, left: opt.MaxSize}
	if v, isView := f.(*initrdView); isView {
		s.view = v
	}
	seg, cut, found, err := s.find()
	if err != nil || !found {
		return nil, false, err
	}
	if cut && seg.Codec != compress.None && s.onlyZerosAfter(seg.Offset+seg.Length) {
		// One stream and padding: the single-stream reader's, which maps
		// an lz4 input and hands xz to its tool.
		return nil, false, nil
	}
	head, err := s.probe(seg, cut)
	if err != nil {
		return nil, false, err
	}
	if !bytes.HasPrefix(head, []byte("070701")) && !bytes.HasPrefix(head, []byte("070702")) {
		return nil, false, nil // a tar, another cpio, no archive: the single-stream reader says
	}
	if err := s.open(seg, cut); err != nil {
		return nil, false, err
	}
	format := archive.Format{Kind: archive.KindCpio, Codec: seg.Codec}
	if bytes.HasPrefix(head, []byte("070702")) {
		format.Kind = archive.KindCpioCRC
	}
	return &Input{Reader: s, Format: Shape{segmentsContainer{}, format}, src: s}, true, nil
}

// probe returns the first bytes of the segment's payload, decoded apart
// from the reader that the taps watch.
func (s *segReader) probe(seg Segment, cut bool) ([]byte, error) {
	head := make([]byte, 6)
	if seg.Codec == compress.None {
		n, _ := s.src.ReadAt(head, seg.Offset)
		return head[:n], nil
	}
	p, err := s.decode(seg, cut, false)
	if err != nil {
		return nil, err
	}
	dec := p.dec
	defer dec.Close()
	n, err := io.ReadFull(dec, head)
	if n == 0 && err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("segment 1 (%s at offset %d): %w", seg.Codec, seg.Offset, err)
	}
	return head[:n], nil
}

// onlyZerosAfter reports whether the file holds nothing but zeros from at on.
func (s *segReader) onlyZerosAfter(at int64) bool {
	n, _ := s.zerosAt(at)
	return at+n >= s.size
}

// zerosAt counts the zero bytes at at.
func (s *segReader) zerosAt(at int64) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for at+n < s.size {
		k, err := s.src.ReadAt(buf[:min(int64(len(buf)), s.size-at-n)], at+n)
		if k == 0 && err != nil {
			return n, err
		}
		for i := 0; i < k; i++ {
			if buf[i] != 0 {
				return n + int64(i), nil
			}
		}
		n += int64(k)
	}
	return n, nil
}

// start finds the next segment at or after s.next and opens it; s.cur
// stays nil at the end of the file.
func (s *segReader) start() error {
	seg, cut, found, err := s.find()
	if err != nil || !found {
		return err
	}
	return s.open(seg, cut)
}

// find finds the next segment at or after s.next: where it starts, its
// codec and, when cut, its length.
func (s *segReader) find() (seg Segment, cut, found bool, err error) {
	zeros, err := s.zerosAt(s.next)
	if err != nil {
		return seg, false, false, err
	}
	if len(s.segs) > 0 {
		s.segs[len(s.segs)-1].Pad = zeros
	}
	at := s.next + zeros
	if at >= s.size {
		return seg, false, false, nil
	}
	if err := checkSegments(len(s.segs), at); err != nil {
		return seg, false, false, err
	}
	var head [16]byte
	n, _ := s.src.ReadAt(head[:], at)
	b := head[:n]
	seg = Segment{Offset: at, Codec: compress.None}
	k := len(s.segs) + 1
	where := fmt.Sprintf("segment %d at offset %d", k, at)
	if k > 1 {
		prev := s.segs[k-2]
		where += fmt.Sprintf(" (after segment %d, %s at offset %d)", k-1, prev.Codec, prev.Offset)
	}
	rest := io.NewSectionReader(s.src, at, s.size-at)
	if b[0] == '0' {
		if at%4 != 0 {
			return seg, false, false, fmt.Errorf("%s: invalid magic at start of compressed archive: a cpio header at an offset that is not a multiple of 4", where)
		}
		// A raw one ends with its file at the latest: what the
		// bootloader pads the file with is no part of it.
		seg.Length = rawLen(rest, s.fileEnd(at)-at)
		return seg, true, true, nil
	}
	c, name, ok := compress.KernelMagic(b)
	if !ok {
		return seg, false, false, fmt.Errorf("%s: invalid magic at start of compressed archive (%s)", where, hex.EncodeToString(b[:min(len(b), 4)]))
	}
	if c == compress.None {
		return seg, false, false, fmt.Errorf("%s: %s: no decoder for this method here", where, name)
	}
	seg.Codec = c
	seg.Length, cut, err = compress.SegmentLen(c, rest, s.size-at)
	if err != nil {
		return seg, false, false, fmt.Errorf("segment %d (%s at offset %d): %w", k, c, at, err)
	}
	return seg, cut, true, nil
}

// mappedGzip decodes one gzip member with the splice's reader, and keeps
// its block map for the segment's reuse (gzipLayout).
func (s *segReader) mappedGzip(br *bufio.Reader) (io.ReadCloser, func() int64, error) {
	r, err := splice.NewGzipReader(br)
	if errors.Is(err, splice.ErrUnhandled) {
		return compress.NewStreamReader(br, compress.Gzip)
	}
	if err != nil {
		return nil, nil, err
	}
	if s.gzLays == nil {
		s.gzLays = map[int]*splice.GzipLayout{}
	}
	s.gzLays[len(s.segs)-1] = r.Layout()
	return compress.WrapStreamDecoder(compress.Gzip, r), func() int64 { return 0 }, nil
}

// decode sets up the decoding of seg in a new part.
//
// mapped: a reuse may splice the segment, so a gzip member is decoded by
// splice.NewGzipReader, which maps its deflate blocks on the way (the
// splicer's map, from the one decode: gzipLayout).
func (s *segReader) decode(seg Segment, cut, mapped bool) (*segPart, error) {
	p := &segPart{known: cut}
	var err error
	if cut {
		section := io.NewSectionReader(s.src, seg.Offset, seg.Length)
		p.dec, err = compress.NewSegmentReader(seg.Codec, section, compress.ReaderOptions{Backend: s.opt.Backend})
	} else {
		p.src = &countingReader{r: io.NewSectionReader(s.src, seg.Offset, s.size-seg.Offset)}
		p.br = bufio.NewReaderSize(p.src, 64<<10)
		if mapped && seg.Codec == compress.Gzip {
			p.dec, p.over, err = s.mappedGzip(p.br)
		} else {
			p.dec, p.over, err = compress.NewStreamReader(p.br, seg.Codec)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("segment %d (%s at offset %d): %w", len(s.segs)+1, seg.Codec, seg.Offset, err)
	}
	return p, nil
}

// open sets up the cpio reader of the segment just found.
func (s *segReader) open(seg Segment, cut bool) error {
	raw := seg.Codec == compress.None
	s.segs = append(s.segs, seg)
	k := len(s.segs)
	var p *segPart
	var dec io.Reader
	tap := s.opt.taps.at(k - 1)
	if raw {
		p = &segPart{known: true}
		dec = io.NewSectionReader(s.src, seg.Offset, seg.Length)
	} else {
		var err error
		if p, err = s.decode(seg, cut, tap != nil); err != nil {
			return err
		}
		dec = p.dec
	}
	p.out = &countingReader{r: dec}
	var src io.Reader = archive.NewBudget(p.out, s.left)
	if tap != nil {
		src = &tapReader{r: src, tap: tap}
	}
	p.cr = archive.NewSegmentCpioReader(bufio.NewReaderSize(src, 256<<10), raw)
	s.cur = p
	return nil
}

// Next returns the next entry of the current segment, going on to the
// next segment at the end of one.
func (s *segReader) Next() (*archive.Entry, error) {
	for s.cur != nil {
		e, err := s.cur.cr.Next()
		if err == nil {
			k := len(s.segs)
			e.Segment = k
			s.segs[k-1].Entries++
			if p, err := pathx.Clean(e.Name); err == nil && p == contract.IndexPath {
				s.segs[k-1].Applied = true
			}
			return e, nil
		}
		if err != io.EOF {
			return nil, s.segErr(err)
		}
		if err := s.end(); err != nil {
			return nil, err
		}
		if err := s.start(); err != nil {
			return nil, err
		}
	}
	return nil, io.EOF
}

func (s *segReader) Read(p []byte) (int, error) {
	if s.cur == nil {
		return 0, io.EOF
	}
	n, err := s.cur.cr.Read(p)
	if err != nil && err != io.EOF {
		err = s.segErr(err)
	}
	return n, err
}

// segErr names the segment an error happened in, and says a compressed
// stream that ends within an entry as the kernel does.
func (s *segReader) segErr(err error) error {
	seg := s.segs[len(s.segs)-1]
	var fe *archive.FormatError
	var ce *compress.Error // the decoder's own: the stream was cut, not ended early
	if seg.Codec != compress.None && errors.As(err, &fe) && errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &ce) {
		err = fmt.Errorf("%w: %w", archive.ErrJunkAtEnd, err)
	}
	if len(s.segs) == 1 {
		return err
	}
	return fmt.Errorf("segment %d (%s at offset %d): %w", len(s.segs), seg.Codec, seg.Offset, err)
}

// end closes the current segment, whose entries are over, and works out
// where it ended when it was decoded to its end.
func (s *segReader) end() error {
	p := s.cur
	k := len(s.segs)
	seg := &s.segs[k-1]
	if seg.Codec != compress.None {
		// The cpio stream is over: the decompressed one must be too.
		var one [1]byte
		if n, _ := p.out.Read(one[:]); n > 0 {
			return fmt.Errorf("segment %d (%s at offset %d): %w", k, seg.Codec, seg.Offset, archive.ErrJunkWithin)
		}
	}
	if !p.known {
		seg.Length = p.src.n - int64(p.br.Buffered()) - p.over()
	}
	s.left -= p.out.n
	s.next = seg.Offset + seg.Length
	s.closePart()
	return nil
}

func (s *segReader) closePart() {
	if s.cur != nil && s.cur.dec != nil {
		s.cur.dec.Close()
	}
	s.cur = nil
}

// consumed, digest and close make the segment reader an input's source:
// its digest is the whole file's, read again, as its bytes are read by
// several readers, none of which sees them all.
func (s *segReader) consumed() int64         { return s.next }
func (s *segReader) digest() (string, error) { return fileDigest(s.src, s.size) }
func (s *segReader) close() error {
	s.closePart()
	return nil
}

// rawLen is the length of the raw cpio segment at the start of r: its
// entries and the zeros after them, up to a byte that starts no header.
// A header it cannot walk ends it at the end of the file, where the cpio
// reader says what is wrong with it.
func rawLen(r io.ReaderAt, size int64) int64 {
	var at int64
	var h [110]byte
	zero := make([]byte, 4096)
	for at < size {
		if n, _ := r.ReadAt(h[:1], at); n == 1 && h[0] == 0 {
			n, _ := r.ReadAt(zero[:min(int64(len(zero)), size-at)], at)
			i := 0
			for i < n && zero[i] == 0 {
				i++
			}
			at += int64(i)
			continue
		}
		if at%4 != 0 {
			return size
		}
		if n, _ := r.ReadAt(h[:], at); n < len(h) || string(h[:5]) != "07070" {
			if n > 0 && h[0] != '0' {
				return at
			}
			return size
		}
		namesize, err1 := strconv.ParseUint(string(h[94:102]), 16, 32)
		filesize, err2 := strconv.ParseUint(string(h[54:62]), 16, 32)
		if err1 != nil || err2 != nil {
			return size
		}
		at += pad4(110+int64(namesize)) + pad4(int64(filesize))
	}
	return min(at, size)
}

func pad4(n int64) int64 { return (n + 3) &^ 3 }

// fileDigest is "sha256:<hex>" of the whole file, read again.
func fileDigest(f io.ReaderAt, size int64) (string, error) {
	d, err := digest.Reader(io.NewSectionReader(f, 0, size))
	if err != nil {
		return "", err
	}
	return "sha256:" + d, nil
}
