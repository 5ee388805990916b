package splice

import (
	"bytes"
	"testing"
)

// TestMatcherGrowsWithItsInput: a Matcher holds what it was fed, up to
// twice its window, not twice its window up front (an initrd has one per
// segment: 16 MiB each made 64 microcode-sized segments cost 1 GiB).
func TestMatcherGrowsWithItsInput(t *testing.T) {
	const window = 1 << 20
	m := NewMatcher(window)
	if got := cap(m.buf); got != 0 {
		t.Errorf("new: %d bytes held", got)
	}
	in := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
	m.Feed(in)
	if got := cap(m.buf); got > 64<<10 {
		t.Errorf("fed 1 KiB: %d bytes held", got)
	}
	for range 5 * window / len(in) {
		m.Feed(in)
	}
	if got := cap(m.buf); got > 2*window {
		t.Errorf("fed 5 windows: %d bytes held, over twice the window", got)
	}
	// What it keeps is still the input's last bytes, where they were.
	end := m.InputLen()
	if b, ok := m.Bytes(end-int64(len(in)), end); !ok || !bytes.Equal(b, in) {
		t.Errorf("last bytes: %q %v", b, ok)
	}
	m.Disable()
	if got := cap(m.buf); got != 0 {
		t.Errorf("disabled: %d bytes held", got)
	}
}

// FuzzMatcher feeds any input in chunks up to half the window through a
// Matcher of any window, and matches each chunk as the output right
// after, as a repack does: every run is found at its own offset, the
// streams are identical, and the buffer never holds more than twice the
// window.
func FuzzMatcher(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef"), uint16(3), uint16(0))
	f.Add(bytes.Repeat([]byte{0}, 5000), uint16(700), uint16(100))
	f.Fuzz(func(t *testing.T, in []byte, chunk, window uint16) {
		w := int(window%4096) + 64
		m := NewMatcher(w)
		step := int(chunk)%(w/2) + 1
		var out int64
		for i := 0; i < len(in); i += step {
			p := in[i:min(i+step, len(in))]
			m.Feed(p)
			err := m.Match(p, func(run []byte, src int64) error {
				if src != out {
					t.Fatalf("a run of %d bytes found at %d, want %d", len(run), src, out)
				}
				out += int64(len(run))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := cap(m.buf); got > 2*w {
				t.Fatalf("%d bytes held, window %d", got, w)
			}
		}
		if !m.Identical() || m.out != int64(len(in)) || m.InputLen() != int64(len(in)) {
			t.Errorf("identical %v, output %d, input %d, want %d", m.Identical(), m.out, m.InputLen(), len(in))
		}
	})
}
