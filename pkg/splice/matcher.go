package splice

import (
	"bytes"

	"github.com/rootfs-trim/rootfs-trim/internal/bigbuf"
)

// DefaultWindow is how much of the input's decompressed stream a Matcher
// keeps. The output lags the input by what the archive reader buffers
// (256 KiB) plus the entries being removed; 8 MiB covers both with room.
const DefaultWindow = 8 << 20

// keepBehind is how much input before the output's place a Matcher keeps:
// a gzip splice's dictionary, the data from the start of the deflate
// block holding the first change, 32 KiB before it. GNU gzip and pigz end
// a block every 32 Ki symbols, well under 1 MiB of data in a rootfs; a
// longer block only costs the fallback to full recompression.
const keepBehind = 2 << 20

// minNeedle is the shortest output run worth searching the input for: a
// cpio header is 110 bytes, and shorter needles mostly find padding.
const minNeedle = 32

// literalStep is how many new bytes go by before the input is searched
// again: a search costs up to the whole window, so not at every byte.
const literalStep = 256

// maxNeedle bounds the bytes searched for when resynchronising.
const maxNeedle = 128

// Matcher maps an output stream onto the input stream it was made from.
// Feed and End take the input's decompressed bytes as they are read; Match
// takes the output's bytes. Both run in the goroutine that copies entries,
// so the output never runs ahead of the input it is matched against.
type Matcher struct {
	window int
	off    bool         // Disable was called
	buf    []byte       // input [base, base+len(buf))
	held   *bigbuf.Held // buf's buffer
	base   int64
	ended  bool

	next      int64 // input offset expected for the next output byte
	out       int64 // output bytes matched so far
	identical bool  // every output byte so far sat at its own offset
}

// NewMatcher returns a Matcher keeping window bytes of input (0 means
// DefaultWindow). Its buffer grows with what it is fed, up to twice the
// window: an initrd has a Matcher per segment, most of them a microcode
// cpio of a few KiB, and 16 MiB each up front made an initrd of many
// segments cost gigabytes before a byte was read. A buffer of a MiB or
// more comes from bigbuf and goes back there on Disable, or once the
// Matcher is dropped.
func NewMatcher(window int) *Matcher {
	if window <= 0 {
		window = DefaultWindow
	}
	m := &Matcher{window: window, identical: true}
	m.held = bigbuf.Hold(m)
	return m
}

// Disable makes Feed a no-op, for an input whose output turned out not to
// need matching (another format or codec), or is done with: it hands the
// buffer back.
func (m *Matcher) Disable() {
	m.held.Release()
	m.off, m.buf = true, nil
}

// Feed records input bytes, in stream order.
func (m *Matcher) Feed(p []byte) {
	if m.off {
		return
	}
	if len(p) >= m.window {
		m.base += int64(len(m.buf) + len(p) - m.window)
		m.buf = append(m.grow(m.window)[:0], p[len(p)-m.window:]...)
		return
	}
	if len(m.buf)+len(p) > 2*m.window {
		// Slide: keep the last window bytes in front, so that the window
		// stays contiguous for bytes.Index. Of the bytes behind the
		// output's place, keep only keepBehind: find never looks there,
		// and while the output follows the input closely (a repack, an
		// apply before its first change) the slide then copies little.
		drop := len(m.buf) + len(p) - m.window
		if behind := int(min(m.next-m.base, int64(len(m.buf)))) - keepBehind; behind > drop {
			drop = behind
		}
		m.base += int64(drop)
		m.buf = m.buf[:copy(m.buf, m.buf[drop:])]
	}
	m.buf = append(m.grow(len(m.buf)+len(p)), p...)
}

// grow returns the buffer with room for n bytes: doubled as needed, never
// beyond twice the window.
func (m *Matcher) grow(n int) []byte {
	if n <= cap(m.buf) {
		return m.buf
	}
	c := min(max(n, 2*cap(m.buf), 64<<10), 2*m.window)
	return m.held.Grow(len(m.buf), max(c, n))[:len(m.buf)]
}

// End records that the input stream ended.
func (m *Matcher) End() { m.ended = true }

// InputLen is the number of input bytes fed so far.
func (m *Matcher) InputLen() int64 { return m.base + int64(len(m.buf)) }

// Identical reports whether the output so far equals the input's first
// bytes; with InputEnded and as many output bytes given to Match as InputLen,
// the streams are equal.
func (m *Matcher) Identical() bool { return m.identical }

// Bytes returns the input's bytes [from, to) if the window still holds
// them; the slice is only valid until the next Feed or Disable.
func (m *Matcher) Bytes(from, to int64) ([]byte, bool) {
	if from < m.base || to > m.InputLen() || from > to {
		return nil, false
	}
	return m.buf[from-m.base : to-m.base], true
}

// InputEnded reports whether End was called.
func (m *Matcher) InputEnded() bool { return m.ended }

// Match splits output bytes p into runs and calls emit for each, in order,
// with the input offset the run was found at, or -1 for bytes the input
// does not hold where they were looked for.
func (m *Matcher) Match(p []byte, emit func(run []byte, src int64) error) error {
	for len(p) > 0 {
		if k := m.common(p, m.next); k > 0 {
			if m.identical && m.next != m.out {
				m.identical = false
			}
			if err := emit(p[:k], m.next); err != nil {
				return err
			}
			m.next += int64(k)
			m.out += int64(k)
			p = p[k:]
			continue
		}
		if at := m.find(p); at >= 0 {
			m.next = at
			continue
		}
		// New bytes. Look again a little further on: an insertion ends
		// somewhere, and writes need not end where it does.
		m.identical = false
		k := min(len(p), literalStep)
		if err := emit(p[:k], -1); err != nil {
			return err
		}
		m.out += int64(k)
		p = p[k:]
	}
	return nil
}

// common is how many leading bytes of p equal the input from offset at.
func (m *Matcher) common(p []byte, at int64) int {
	if at < m.base || at >= m.InputLen() {
		return 0
	}
	w := m.buf[at-m.base:]
	n := min(len(p), len(w))
	// Compare in chunks so that a long equal run costs memcmp, not a loop.
	k := 0
	for k < n {
		c := min(n-k, 4096)
		if bytes.Equal(p[k:k+c], w[k:k+c]) {
			k += c
			continue
		}
		for p[k] == w[k] {
			k++
		}
		return k
	}
	return k
}

// find looks for the start of p in the input at or after the expected
// offset, since an output made by removing entries only moves forward in
// its input. It returns -1 when p is too short to be told from padding or
// is not there.
func (m *Matcher) find(p []byte) int64 {
	if len(p) < minNeedle {
		return -1
	}
	from := max(m.next, m.base)
	if from >= m.InputLen() {
		return -1
	}
	needle := p[:min(len(p), maxNeedle)]
	i := bytes.Index(m.buf[from-m.base:], needle)
	if i < 0 {
		return -1
	}
	return from + int64(i)
}
