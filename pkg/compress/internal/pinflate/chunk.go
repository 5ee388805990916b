package pinflate

import "errors"

// chunk is the decoding of one stretch of the compressed stream: from the
// first block found at or after its first byte (for the first chunk, the
// stream's start) to the first block boundary at or after the next
// chunk's first byte, or the end of the stream.
type chunk struct {
	k     int
	base  int64 // absolute bit of src[0]
	src   []byte
	stop  int64 // bit of src at or after which a block boundary ends it
	first bool  // the stream starts at src's bit 0, with no window

	// Results, read after done is closed.
	ok         bool
	start, end int64    // absolute bits: where its first block started, where it ended
	final      bool     // the stream's last block ended in it
	u          []uint16 // output while the window was unknown, with markers
	b          []byte   // b[:hist] repeats the tail of u; b[hist:] follows u
	hist       int
	done       chan struct{}

	st state
}

var errTooBig = errors.New("chunk output over its cap")

// decodeChunk fills c's results; a failure is no error of the stream,
// only a guess that did not hold: ok stays false and the reader decodes
// the stretch itself.
func decodeChunk(c *chunk, outCap int, stopped func() bool) {
	c.ok, c.final, c.hist = false, false, 0
	// Fixed buffers, allocated once for the reader's life: growing them
	// cost a quarter of the CPU time (copies, clearing, collections).
	if cap(c.u) < outCap/4 {
		c.u = make([]uint16, 0, outCap/4)
		c.b = make([]byte, 0, outCap/2+windowSize)
	}
	c.u, c.b = c.u[:0], c.b[:0]
	if c.first {
		c.st = state{br: newBitReader(c.src, 0)}
		c.start = c.base
		c.ok = c.bytes() == nil
		return
	}
	limit := min(c.stop, int64(len(c.src))*8)
	for cand := int64(0); cand < limit; cand++ {
		// Most positions fail on their first three bits (not last,
		// dynamic): test eight of them per load before the full test.
		if cand&7 == 0 && int(cand>>3)+9 <= len(c.src) && !anyDynamicStart(c.src[cand>>3:]) {
			cand += 7
			continue
		}
		if !plausible(c.src, cand) {
			continue
		}
		if stopped() {
			return
		}
		if !c.firstBlock(cand) {
			continue
		}
		c.start = c.base + cand
		c.ok = c.markers(stopped) == nil
		return
	}
}

// firstBlock reports whether a block decodes from cand to its end, with
// markers: the test that a plausible start is one.
func (c *chunk) firstBlock(cand int64) bool {
	c.st = state{br: newBitReader(c.src, cand)}
	var err error
	c.u, err = decode(&c.st, c.u[:0], true, cand+1)
	_, between := c.st.blockStart()
	return err == nil && between
}

// markers decodes a block at a time into u until the last 32 KiB of it
// hold no marker, then goes on in bytes.
func (c *chunk) markers(stopped func() bool) error {
	for {
		if c.ended() {
			return nil
		}
		if n := len(c.u); n >= windowSize && clean(c.u[n-windowSize:]) {
			for _, v := range c.u[n-windowSize:] {
				c.b = append(c.b, byte(v))
			}
			c.hist = windowSize
			return c.bytes()
		}
		if stopped() {
			return errTooBig
		}
		if cap(c.u)-len(c.u) < maxMatch {
			return errTooBig
		}
		var err error
		if c.u, err = decode(&c.st, c.u, true, c.st.br.bitPos()+1); err != nil {
			return err
		}
	}
}

// bytes decodes into b up to the chunk's end; b's capacity is the cap.
func (c *chunk) bytes() error {
	var err error
	if c.b, err = decode(&c.st, c.b, false, c.stop); err != nil {
		return err
	}
	if !c.ended() {
		return errTooBig
	}
	return nil
}

// ended reports whether the decoding reached the chunk's end, and if so
// records it.
func (c *chunk) ended() bool {
	at, between := c.st.blockStart()
	if !c.st.done && !(between && at >= c.stop) {
		return false
	}
	c.end, c.final = c.base+at, c.st.done
	return true
}

func clean(u []uint16) bool {
	var or uint16
	for _, v := range u {
		or |= v
	}
	return or&marker == 0
}
