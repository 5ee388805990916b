package compress

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// A stream of several zstd frames (pzstd writes one every few MiB, `cat
// a.zst b.zst` two) is decoded a frame per core, in order: the frames are
// found by walking their block headers (RFC 8878, 3.1.1: a frame header,
// blocks that each say their size, an optional checksum), which costs no
// decoding, and each frame is decoded whole (zstd.Decoder.DecodeAll).
// Anything else, or anything the walk does not take for a plain frame (a
// frame too big to hold, a dictionary, a reserved block type, a cut, junk
// after the last frame), goes from its first byte on to the one sequential
// decoder the stream had before: what it decodes and the errors it reports
// are the sequential decoder's own, in stream order. So is a frame whose
// DecodeAll fails: the frame is decoded again, sequentially, and what that
// says is what the reader says.
const (
	// zstdFrameIn bounds the compressed bytes of a frame held to be
	// decoded whole: pzstd's frames at its default level are 6 MiB. A
	// bigger frame (a single-frame `zstd -19` image is one) is read by
	// the sequential decoder, after at most this much was held.
	zstdFrameIn = 8 << 20
	// zstdFrameOut bounds what one frame may decode to when decoded
	// whole (a bomb in one frame stops there, and the sequential decoder,
	// whose output the budget counts as it is read, takes it over).
	zstdFrameOut = 64 << 20
	// zstdSkipMax bounds a skippable frame between frames that the walk
	// steps over (pzstd writes 12-byte ones); a bigger one is left to the
	// sequential decoder.
	zstdSkipMax = 1 << 20
)

// zstdWorkers is how many frames are decoded at once: one a core; 1
// decodes sequentially, as before (the tests compare the two).
var zstdWorkers = func() int { return min(max(runtime.GOMAXPROCS(0), 1), 8) }

// newZstdStream is the sequential decoder, as NewReader has always made it.
// Concurrency 1 decodes in the caller's goroutine, where a panic can be
// recovered, and leaves no goroutines behind if a caller forgets Close.
func newZstdStream(r io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(r,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(ZstdMaxWindow),
		zstd.WithDecoderLowmem(true),
	)
}

// zstdFrames is the reader of a zstd stream that decodes its frames on
// several cores where it can.
type zstdFrames struct {
	br      *bufio.Reader
	whole   *zstd.Decoder // DecodeAll, for the frames held whole
	workers int
	jobs    []*zstdJob // frames being decoded, in stream order
	cur     []byte     // output of the frame at the head, still to read
	walked  bool       // no more frames are held: what follows is seq's
	held    []byte     // bytes the walk took from br and gave up on
	seq     *zstd.Decoder
	err     error
	decoded int // frames decoded whole, for the tests
	// spent are buffers of frames read out, for the next ones: a fresh
	// 8 MiB each frame kept the collector busy.
	spent, spentRaw [][]byte
	last            *zstdJob // the frame cur is the output of
}

type zstdJob struct {
	raw  []byte
	out  []byte
	err  error
	done chan struct{}
}

// newZstdFrames reads the zstd stream in br; workers frames at a time.
func newZstdFrames(br *bufio.Reader, workers int) (*zstdFrames, error) {
	whole, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(workers),
		zstd.WithDecoderMaxWindow(ZstdMaxWindow),
		zstd.WithDecoderMaxMemory(zstdFrameOut),
	)
	if err != nil {
		return nil, err
	}
	return &zstdFrames{br: br, whole: whole, workers: workers}, nil
}

func (z *zstdFrames) Read(p []byte) (int, error) {
	for {
		if len(z.cur) > 0 {
			n := copy(p, z.cur)
			z.cur = z.cur[n:]
			return n, nil
		}
		if z.err != nil {
			return 0, z.err
		}
		if z.seq != nil {
			return z.seq.Read(p)
		}
		z.fill()
		if len(z.jobs) == 0 {
			if z.held == nil && z.atEOF() {
				z.err = io.EOF
				continue
			}
			z.sequential(z.held)
			continue
		}
		j := z.jobs[0]
		<-j.done
		if j.err != nil {
			// From this frame on, sequentially, with what was held.
			var rest []byte
			for _, k := range z.jobs {
				rest = append(rest, k.raw...)
			}
			z.wait()
			z.jobs = nil
			z.sequential(append(rest, z.held...))
			continue
		}
		z.jobs = z.jobs[1:]
		z.recycle()
		z.cur, z.last = j.out, j
		z.decoded++
	}
}

// recycle keeps the buffers of the frame read out.
func (z *zstdFrames) recycle() {
	if j := z.last; j != nil {
		z.spent = append(z.spent, j.out[:0])
		z.spentRaw = append(z.spentRaw, j.raw[:0])
		z.last = nil
	}
}

func pop(l *[][]byte) []byte {
	if len(*l) == 0 {
		return nil
	}
	b := (*l)[len(*l)-1]
	*l = (*l)[:len(*l)-1]
	return b
}

// atEOF reports whether br has nothing left.
func (z *zstdFrames) atEOF() bool {
	_, err := z.br.Peek(1)
	return err == io.EOF
}

// sequential hands the stream, from held on, to the sequential decoder.
func (z *zstdFrames) sequential(held []byte) {
	z.walked, z.held = true, nil
	dec, err := newZstdStream(io.MultiReader(bytes.NewReader(held), z.br))
	if err != nil {
		z.err = err
		return
	}
	z.seq = dec
}

// fill starts frames until workers are in flight or the walk stops.
func (z *zstdFrames) fill() {
	for !z.walked && len(z.jobs) < z.workers {
		raw, ok := z.nextFrame(pop(&z.spentRaw))
		if !ok {
			z.walked, z.held = true, raw
			if raw == nil && !z.atEOF() {
				z.held = []byte{} // junk, or a frame not walked: seq's
			}
			return
		}
		j := &zstdJob{raw: raw, out: pop(&z.spent), done: make(chan struct{})}
		z.jobs = append(z.jobs, j)
		go z.decode(j)
	}
}

func (z *zstdFrames) decode(j *zstdJob) {
	defer close(j.done)
	defer func() {
		if v := recover(); v != nil {
			j.err = fmt.Errorf("%w: %v", ErrDecoderPanic, v)
		}
	}()
	j.out, j.err = z.whole.DecodeAll(j.raw, j.out)
}

// wait lets the frames in flight finish, so none outlives the reader.
func (z *zstdFrames) wait() {
	for _, j := range z.jobs {
		<-j.done
	}
}

// Close releases the decoders; it does not close the source.
func (z *zstdFrames) Close() error {
	z.wait()
	z.jobs = nil
	if z.seq != nil {
		z.seq.Close()
	}
	z.whole.Close()
	return nil
}

var errFrameWalk = errors.New("not a frame the walk holds")

// nextFrame takes the next frame from br, stepping over small skippable
// frames before it: its bytes and true. At the end of the stream it
// returns nil, false; where it gives up, the bytes it took and false.
func (z *zstdFrames) nextFrame(buf []byte) ([]byte, bool) {
	for {
		head, err := z.br.Peek(8)
		if len(head) < 4 {
			return nil, false
		}
		if isSkippable(head) {
			if err != nil || binary.LittleEndian.Uint32(head[4:8]) > zstdSkipMax {
				return nil, false
			}
			n := 8 + int(binary.LittleEndian.Uint32(head[4:8]))
			if b, err := z.br.Peek(n); err != nil || len(b) < n {
				return nil, false
			}
			z.br.Discard(n)
			continue
		}
		if binary.LittleEndian.Uint32(head) != zstdMagic {
			return nil, false
		}
		raw, err := walkZstdFrame(z.br, buf)
		return raw, err == nil
	}
}

const zstdMagic = 0xFD2FB528

// walkZstdFrame reads one frame from br by its headers, up to
// zstdFrameIn bytes; err says why it stopped short of the frame's end
// (its bytes so far are returned all the same).
func walkZstdFrame(br *bufio.Reader, raw []byte) ([]byte, error) {
	raw = raw[:0]
	take := func(n int) ([]byte, error) {
		if len(raw)+n > zstdFrameIn {
			return nil, errFrameWalk
		}
		start := len(raw)
		raw = slices.Grow(raw, n)[:start+n]
		if k, err := io.ReadFull(br, raw[start:]); err != nil {
			raw = raw[:start+k] // taken from br: the sequential decoder's
			return nil, errFrameWalk
		}
		return raw[start:], nil
	}
	h, err := take(5)
	if err != nil {
		return raw, err
	}
	fhd := h[4]
	if fhd&0x08 != 0 || fhd&0x03 != 0 {
		return raw, errFrameWalk // reserved bit, or a dictionary
	}
	n := 0
	if fhd&0x20 == 0 {
		n++ // window descriptor
	}
	n += [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && fhd&0x20 != 0 {
		n++
	}
	if _, err := take(n); err != nil {
		return raw, err
	}
	for {
		b, err := take(3)
		if err != nil {
			return raw, err
		}
		bh := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
		size := int(bh >> 3)
		switch (bh >> 1) & 3 {
		case 1:
			size = 1 // RLE: one byte, repeated
		case 3:
			return raw, errFrameWalk
		}
		if _, err := take(size); err != nil {
			return raw, err
		}
		if bh&1 != 0 {
			break
		}
	}
	if fhd&0x04 != 0 {
		if _, err := take(4); err != nil {
			return raw, err
		}
	}
	return raw, nil
}
