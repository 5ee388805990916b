package pinflate

// stream decodes DEFLATE in order from a known window, handing out its
// output a buffer at a time: the sequential decoder, and what the
// parallel one falls back to where a guess did not hold.
type stream struct {
	s    state
	buf  []byte // window (up to 32 KiB), then the output not yet handed out
	keep int    // bytes of buf that are window, already handed out
}

// newStream starts at bit off of src with the window hist (at most 32 KiB),
// decoding into buf if it has room for bufSize bytes after a window.
func newStream(src []byte, off int64, hist []byte, buf []byte, bufSize int) *stream {
	if cap(buf) < windowSize+bufSize {
		buf = make([]byte, 0, windowSize+bufSize)
	}
	st := &stream{buf: buf[:0]}
	st.s.br = newBitReader(src, off)
	st.buf = append(st.buf, hist...)
	st.keep = len(hist)
	return st
}

// next decodes up to the buffer's size, or to the first block that
// starts at or after stopAt, and returns the new output (valid until the
// next call).
func (st *stream) next(stopAt int64) ([]byte, error) {
	if st.keep > windowSize {
		st.buf = st.buf[:copy(st.buf, st.buf[len(st.buf)-windowSize:])]
		st.keep = windowSize
	}
	out, err := decode(&st.s, st.buf, false, stopAt)
	st.buf = out
	piece := out[st.keep:]
	st.keep = len(out)
	return piece, err
}

// ended reports whether the stream stopped: its last block ended, or a
// block starts at or after stopAt.
func (st *stream) ended(stopAt int64) bool {
	at, between := st.s.blockStart()
	return st.s.done || between && at >= stopAt
}

// Inflate decodes the whole DEFLATE stream in src from bit 0 and returns
// its output and the bit at which it ends.
func Inflate(src []byte) ([]byte, int64, error) {
	st := newStream(src, 0, nil, nil, 1<<20)
	var out []byte
	for {
		p, err := st.next(1 << 62)
		out = append(out, p...)
		if err != nil || st.s.done {
			return out, st.s.br.bitPos(), err
		}
	}
}
