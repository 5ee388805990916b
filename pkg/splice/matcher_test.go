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
	if got := m.Footprint(); got != 0 {
		t.Errorf("new: %d bytes held", got)
	}
	in := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
	m.Feed(in)
	if got := m.Footprint(); got > 64<<10 {
		t.Errorf("fed 1 KiB: %d bytes held", got)
	}
	for range 5 * window / len(in) {
		m.Feed(in)
	}
	if got := m.Footprint(); got > 2*window {
		t.Errorf("fed 5 windows: %d bytes held, over twice the window", got)
	}
	// What it keeps is still the input's last bytes, where they were.
	end := m.InputLen()
	if b, ok := m.Bytes(end-int64(len(in)), end); !ok || !bytes.Equal(b, in) {
		t.Errorf("last bytes: %q %v", b, ok)
	}
	m.Disable()
	if got := m.Footprint(); got != 0 {
		t.Errorf("disabled: %d bytes held", got)
	}
}
