package progress

import (
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	tests := []struct {
		total, done, entries int64
		elapsed              time.Duration
		want                 string
	}{
		{400 << 20, 100 << 20, 5000, 2 * time.Second, "apply: 100.0 MiB of 400.0 MiB (25%), 5000 entries, 50.0 MiB/s, ETA 6s"},
		{0, 3 << 30, 10, 3 * time.Second, "apply: 3.0 GiB, 10 entries, 1.0 GiB/s"},
		{1000, 1000, 1, time.Second, "apply: 1000 B of 1000 B (100%), 1 entries, 1000 B/s"},
		{1000, 0, 0, 0, "apply: 0 B of 1000 B (0%), 0 entries, 0 B/s"},
	}
	for _, tc := range tests {
		m := New(nil, "apply", tc.total, nil)
		if got := m.Line(tc.done, tc.entries, tc.elapsed); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
