package bigbuf

import (
	"runtime"
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

func TestHeld(t *testing.T) {
	type owner struct{ h *Held }
	o := &owner{}
	o.h = Hold(o)
	b := o.h.Grow(0, 100)
	copy(b, "kept")
	b = o.h.Grow(4, 3<<20)
	if len(b) != 3<<20 || cap(b) != 4<<20 || string(b[:4]) != "kept" {
		t.Fatalf("Grow to 3 MiB: len %d cap %d, first bytes %q; want 3 MiB, 4 MiB, \"kept\"", len(b), cap(b), b[:4])
	}
	if again := o.h.Grow(4, 1<<20); &again[0] != &b[0] {
		t.Error("a Grow within the capacity changed the buffer")
	}
	o.h.Release()
	if got := Get(3 << 20); &got[0] != &b[0] {
		t.Error("Release did not hand the buffer back")
	} else {
		Put(got)
	}
}

// A holder dropped without Release hands its buffer back once the
// collector finds it unreachable.
func TestHeldDropped(t *testing.T) {
	type owner struct{ h *Held }
	o := &owner{}
	o.h = Hold(o)
	first := &o.h.Grow(0, 8<<20)[0]
	o = nil
	for range 100 {
		runtime.GC()
		runtime.Gosched()
		pool.mu.Lock()
		n := len(pool.free[8<<20])
		var back bool
		if n > 0 {
			back = &pool.free[8<<20][n-1][0] == first
		}
		pool.mu.Unlock()
		if back {
			return
		}
	}
	t.Error("the buffer of a dropped holder never came back to the pool")
}
