package progress

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// interval is how often the line is redrawn: often enough to look alive,
// rarely enough to cost nothing.
const interval = 250 * time.Millisecond

// Meter draws one status line, rewritten in place with \r.
type Meter struct {
	w     io.Writer
	label string
	total int64 // bytes, 0 if unknown
	bytes func() int64

	mu      sync.Mutex
	entries int64
	start   time.Time
	stop    chan struct{}
	done    chan struct{}
	drawn   bool
}

// New returns a meter that reads the byte count from bytes (the compressed
// bytes consumed, so that it compares with the file size).
func New(w io.Writer, label string, total int64, bytes func() int64) *Meter {
	return &Meter{w: w, label: label, total: total, bytes: bytes}
}

// Start begins redrawing in the background.
func (m *Meter) Start() {
	m.start = time.Now()
	m.draw() // at once: a short run shows it ran, too
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.draw()
			}
		}
	}()
}

// Entry counts one entry.
func (m *Meter) Entry() {
	m.mu.Lock()
	m.entries++
	m.mu.Unlock()
}

// Stop ends the display and clears the line.
func (m *Meter) Stop() {
	if m.stop == nil {
		return
	}
	close(m.stop)
	<-m.done
	m.stop = nil
	if m.drawn {
		fmt.Fprint(m.w, "\r\033[K")
	}
}

func (m *Meter) draw() {
	m.mu.Lock()
	entries := m.entries
	m.mu.Unlock()
	fmt.Fprint(m.w, "\r\033[K"+m.Line(m.bytes(), entries, time.Since(m.start)))
	m.drawn = true
}

// Line formats the status for done bytes and entries after elapsed.
func (m *Meter) Line(done, entries int64, elapsed time.Duration) string {
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	s := fmt.Sprintf("%s: %s", m.label, size(done))
	if m.total > 0 {
		pct := float64(done) * 100 / float64(m.total)
		s += fmt.Sprintf(" of %s (%.0f%%)", size(m.total), pct)
	}
	s += fmt.Sprintf(", %d entries, %s/s", entries, size(int64(rate)))
	if m.total > 0 && rate > 0 && done < m.total {
		eta := time.Duration(float64(m.total-done) / rate * float64(time.Second))
		s += ", ETA " + eta.Round(time.Second).String()
	}
	return s
}

func size(n int64) string {
	for i, unit := range []string{"GiB", "MiB", "KiB"} {
		if shift := 30 - 10*i; n >= 1<<shift {
			return fmt.Sprintf("%.1f %s", float64(n)/float64(int64(1)<<shift), unit)
		}
	}
	return fmt.Sprintf("%d B", n)
}
