package container

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// initrdView is an initrd of several files of an ISO image as the kernel
// gets it: the files one after the other, each starting at a multiple of
// 4 bytes, the gap filled with zeros. GRUB's grub_initrd_load
// (grub-core/loader/linux.c) zeroes ALIGN_UP_OVERHEAD (cursize, 4) bytes
// after each file; syslinux's initramfs_load_archive
// (com32/lib/syslinux/initramfs_archive.c) adds each file with an
// alignment of 4, which initramfs_size (com32/include/syslinux/linux.h)
// rounds up to before the next.
type initrdView struct {
	r     io.ReaderAt // the image
	files []viewFile
	size  int64
}

// viewFile is one file of the view: where it starts in the view, its
// size, and where its extent is in the image.
type viewFile struct {
	Path               string
	Start, Size, Image int64
}

func newInitrdView(r io.ReaderAt, parts []Part) *initrdView {
	v := &initrdView{r: r}
	for i, p := range parts {
		if i > 0 {
			v.size = pad4(v.size)
		}
		v.files = append(v.files, viewFile{Path: p.Path, Start: v.size, Size: p.Size, Image: p.Offset})
		v.size += p.Size
	}
	return v
}

// ReadAt reads the view: the files' bytes from their extents, zeros
// between them.
func (v *initrdView) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= v.size {
			return n, io.EOF
		}
		f, ok := v.fileAt(at)
		if !ok { // the bootloader's padding before the next file
			next := v.size
			if i := v.after(at); i < len(v.files) {
				next = v.files[i].Start
			}
			k := int(min(int64(len(p)-n), next-at))
			clear(p[n : n+k])
			n += k
			continue
		}
		k := int(min(int64(len(p)-n), f.Start+f.Size-at))
		got, err := v.r.ReadAt(p[n:n+k], f.Image+at-f.Start)
		n += got
		if got < k {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
	}
	return n, nil
}

// fileAt is the file holding the view's byte at: a binary search, as the
// files are in view order and every read asks (a list scanned from the
// start at each read made reading the view quadratic in its files).
func (v *initrdView) fileAt(at int64) (viewFile, bool) {
	i := v.after(at) - 1
	if i >= 0 && at < v.files[i].Start+v.files[i].Size {
		return v.files[i], true
	}
	return viewFile{}, false
}

// after is the index of the first file that starts after at.
func (v *initrdView) after(at int64) int {
	return sort.Search(len(v.files), func(i int) bool { return v.files[i].Start > at })
}

// fileOf is the file of the view holding at: the whole input for a file
// of its own, or where no file holds at.
func (s *segReader) fileOf(at int64) viewFile {
	if s.view != nil {
		if f, ok := s.view.fileAt(at); ok {
			return f
		}
	}
	return viewFile{Size: s.size}
}

// fileEnd is where the file holding at ends in the view: the end of the
// initrd for a file of its own.
func (s *segReader) fileEnd(at int64) int64 {
	f := s.fileOf(at)
	return f.Start + f.Size
}

// lengthOf is segment i's length, or, while its end is not yet known (a
// compressed one read on), what is left of the file holding it: a
// segment never runs on into the next file of an initrd, nor into the
// rest of the ISO image.
func (s *segReader) lengthOf(i int) int64 {
	seg := s.segs[i]
	if seg.Length > 0 {
		return seg.Length
	}
	return s.fileEnd(seg.Offset) - seg.Offset
}

// inFile is where the view's byte at is in the input file (the image):
// at itself for a file of its own.
func (s *segReader) inFile(at int64) int64 {
	f := s.fileOf(at)
	return f.Image + at - f.Start
}

// openISOSegments reads the files of an ISO's initrd as the kernel gets
// them, segment by segment; ok is false when they are one stream after
// all (openSegments).
func openISOSegments(im io.ReaderAt, parts []Part, opt OpenOptions) (*Input, bool, error) {
	v := newInitrdView(im, parts)
	var head [16]byte
	n, _ := v.ReadAt(head[:], 0)
	if !segmentStart(head[:n]) {
		return nil, false, nil
	}
	return openSegments(v, v.size, opt)
}

// isoSegOut is an ISO image whose initrd is several files: the segments
// as segWriter writes them, but each file of the initrd on its own
// (segWriter.joinFiles), only those that change put in the image, what
// apply adds at the end of the last one.
type isoSegOut struct {
	*segWriter
	path, work string
	iso        *isoOutput // once the files are written
}

func createISOSegments(w writing) (sink, error) {
	in := w.in
	if w.out.Kind != in.Format.Kind {
		return nil, fmt.Errorf("%s: its initrd is %d files (%s): written back in its own archive format only, %s", in.Path, len(in.Parts), names.Quote(in.ISO.Initrd.Where), in.Format.Kind)
	}
	work, err := tempDir(w.path)
	if err != nil {
		return nil, err
	}
	f := w.out.Format
	sw := &segWriter{in: in, final: filepath.Join(work, "initrd"), format: f, asked: f.Codec != in.Format.Codec, opt: w.opt, matchers: w.matchers,
		files: in.segs().view.files}
	return &isoSegOut{segWriter: sw, path: w.path, work: work}, nil
}

func (o *isoSegOut) Commit() error {
	if err := o.segWriter.Commit(); err != nil {
		return err
	}
	o.iso = &isoOutput{placement: placement{Path: o.path, tmp: o.work}, from: o.in, digest: o.opt.Digest,
		Compressor: o.segWriter.Compressor, files: o.isoFiles}
	return o.iso.Commit()
}

func (o *isoSegOut) Abort() {
	o.segWriter.Abort()
	os.RemoveAll(o.work)
}

func (o *isoSegOut) report(res *Result, note func(string)) {
	o.segWriter.report(res, note)
	o.iso.report(res, note)
}

// isoFile is one file of the initrd in the image written: New is its new
// content, "" when it is the input's, kept as it is.
type isoFile struct {
	Path, New string
}

// joinFiles writes the segments back file by file, for an ISO's initrd
// of several files (segWriter.files): each file's segments in their
// place, the zeros between them as they were, a raw one at a multiple of
// 4, what apply adds at the end of the last file, where the kernel reads
// it last. A file none of whose segments changed is not written: the
// image keeps it as it is.
func (w *segWriter) joinFiles() error {
	segs, byIn := w.in.Segments(), w.byNumber()
	w.isoFiles = make([]isoFile, len(w.files))
	k, count := 0, 0
	var base int64 // where file i starts in the output's files one after the other
	for i, f := range w.files {
		path := fmt.Sprintf("%s.%d", w.final, i+1)
		j, err := newJoined(path, base)
		if err != nil {
			return err
		}
		changed, n, err := w.joinFile(j, f, segs, k, byIn)
		if err == nil && i == len(w.files)-1 && w.added != nil {
			err, changed, n = w.addTo(j), true, n+1
		}
		base += j.at
		if cerr := j.out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return err
		}
		k += n
		count += n
		w.isoFiles[i].Path = f.Path
		if changed {
			w.isoFiles[i].New = path
		} else {
			os.Remove(path)
		}
	}
	w.Compressor = fmt.Sprintf("%d segments in %d files", count, len(w.files))
	if count == 1 && len(w.parts) == 1 {
		// One file of one stream (minikube's): say how that stream was
		// written, as for a lone initrd.
		w.Compressor = w.parts[0].o.Compressor
	}
	return nil
}

// joinFile writes file f's segments, from segs[k] on, to j: n of them;
// changed says whether its bytes are not the input's.
func (w *segWriter) joinFile(j *joined, f viewFile, segs []Segment, k int, byIn map[int]*segOut) (changed bool, n int, err error) {
	end, pos := f.Start+f.Size, f.Start
	for ; k+n < len(segs) && segs[k+n].Offset < end; n++ {
		s := segs[k+n]
		if s.Offset+s.Length > end {
			return false, n, fmt.Errorf("segment %d (%s at offset %d) runs on from %s into the next file: an initrd of several files is written back file by file", k+n+1, s.Codec, s.Offset, names.Quote(f.Path))
		}
		if err := j.zeros(s.Offset - pos); err != nil {
			return false, n, err
		}
		pos = s.Offset + s.Length
		p := byIn[k+n+1]
		if p == nil { // no entry came from it (an empty gzip member): its bytes
			w.Results = append(w.Results, copiedResult(k+n+1, s, j.base+j.at))
			m, err := j.out.ReadFrom(io.NewSectionReader(w.in.segs().src, s.Offset, s.Length))
			j.at += m
			if err != nil {
				return false, n, err
			}
			continue
		}
		at, m, c, err := j.part(p)
		if err != nil {
			return false, n, err
		}
		changed = changed || c
		w.Results = append(w.Results, w.result(p, at, m))
	}
	return changed, n, j.zeros(end - pos)
}

// byNumber is the parts by their input segment's number.
func (w *segWriter) byNumber() map[int]*segOut {
	byIn := map[int]*segOut{}
	for _, p := range w.parts {
		byIn[p.seg] = p
	}
	return byIn
}

// addTo appends what apply adds to j.
func (w *segWriter) addTo(j *joined) error {
	at, n, _, err := j.part(w.added)
	w.Results = append(w.Results, w.result(w.added, at, n))
	return err
}

// joined is a file being put together from parts and zeros; base is
// where it starts in the files of the initrd one after the other.
type joined struct {
	out  *os.File
	at   int64
	base int64
}

func newJoined(path string, base int64) (*joined, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return &joined{out: f, base: base}, nil
}

func (j *joined) zeros(n int64) error {
	var zeros [4096]byte
	for n > 0 {
		k, err := j.out.Write(zeros[:min(n, int64(len(zeros)))])
		j.at += int64(k)
		n -= int64(k)
		if err != nil {
			return err
		}
	}
	return nil
}

// part appends p's output, a raw one at a multiple of 4: n bytes at off
// (from j.base); changed says whether that is other bytes than the input
// segment's where it was.
func (j *joined) part(p *segOut) (off, n int64, changed bool, err error) {
	if p.codec == compress.None && j.at%4 != 0 {
		changed = true
		if err := j.zeros(4 - j.at%4); err != nil {
			return 0, 0, false, err
		}
	}
	tmp, err := p.finish()
	if err != nil {
		return 0, 0, false, err
	}
	off = j.base + j.at
	n, err = appendFile(j.out, tmp)
	p.abort()
	j.at += n
	return off, n, changed || p.o.Compressor != CompressorCopy, err
}
