package bigbuf

import (
	"testing"
)

func TestGetPut(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		wantCap int
		pooled  bool
	}{
		{"small on the heap", 100, 100, false},
		{"just under Min", Min - 1, Min - 1, false},
		{"Min", Min, Min, true},
		{"rounded up to a power of two", 3 << 20, 4 << 20, true},
		{"an lz4 block and its output", 16<<20 + 64<<10, 32 << 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Get(tt.n)
			if len(b) != tt.n || cap(b) != tt.wantCap {
				t.Fatalf("Get(%d): len %d cap %d, want len %d cap %d", tt.n, len(b), cap(b), tt.n, tt.wantCap)
			}
			// Every byte is writable, the last page too.
			b[0], b[len(b)-1] = 1, 2
			Put(b)
			again := Get(tt.n)
			reused := &again[0] == &b[0]
			if reused != tt.pooled {
				t.Errorf("a Get after Put reused the buffer: %v, want %v", reused, tt.pooled)
			}
			if tt.pooled && (again[0] != 1 || again[len(again)-1] != 2) {
				t.Errorf("a reused buffer holds %d..%d, want its last user's 1..2", again[0], again[len(again)-1])
			}
			Put(again)
		})
	}
}

// A buffer cut short keeps its capacity, and so its class: Put takes it
// back whole.
func TestPutShortened(t *testing.T) {
	b := Get(2 << 20)
	Put(b[:10])
	again := Get(2 << 20)
	if &again[0] != &b[0] {
		t.Errorf("a buffer put back shortened was not reused")
	}
	Put(again)
}

// A slice whose capacity is no class (of a buffer sliced from the front)
// is not pooled: a later Get of that class would get less than it asked.
func TestPutForeign(t *testing.T) {
	Put(make([]byte, 3<<20))
	b := Get(3 << 20)
	if cap(b) != 4<<20 {
		t.Errorf("Get(3 MiB) after Put of a 3 MiB slice: cap %d, want 4 MiB", cap(b))
	}
	Put(b)
}
