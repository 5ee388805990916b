package bigbuf

import (
	"math/bits"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// Min is the smallest buffer that is mapped; smaller ones are made on the
// Go heap, where they cost little, and Put lets them go.
const Min = 1 << 20

var pool struct {
	mu   sync.Mutex
	free map[int][][]byte // by capacity, a power of two
}

// Get returns a buffer of length n. Its bytes are not zeroed: a buffer
// handed back by Put holds what its last user left in it.
func Get(n int) []byte {
	if n < Min {
		return make([]byte, n)
	}
	size := 1 << bits.Len(uint(n-1))
	pool.mu.Lock()
	if list := pool.free[size]; len(list) > 0 {
		b := list[len(list)-1]
		pool.free[size] = list[:len(list)-1]
		pool.mu.Unlock()
		return b[:n]
	}
	pool.mu.Unlock()
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, n, size)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // a hint; refused on some kernels
	return b[:n]
}

// Put hands b, from Get, back for the next Get; nothing may use it after.
// A buffer of less than Min is left to the collector. Mapped memory is
// never unmapped: what the pool holds is what the process once used at
// the same time.
func Put(b []byte) {
	size := cap(b)
	if size < Min || size&(size-1) != 0 {
		return
	}
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.free == nil {
		pool.free = map[int][][]byte{}
	}
	pool.free[size] = append(pool.free[size], b[:size])
}

// Held is one buffer that grows for its holder: a splicer's pending
// bytes, a Matcher's window. Release hands it back; so does the cleanup
// once the holder is unreachable, after an error that skipped Release.
type Held struct {
	b []byte
}

// Hold returns an empty Held, whose buffer goes back to the pool once
// owner is unreachable. The buffer is only owner's: a slice of it must
// not outlive owner.
func Hold[T any](owner *T) *Held {
	h := new(Held)
	runtime.AddCleanup(owner, func(h *Held) { Put(h.b) }, h)
	return h
}

// Grow returns the buffer with length n, its first keep bytes kept: the
// same buffer if it has the room, else one from Get, the old one handed
// back.
func (h *Held) Grow(keep, n int) []byte {
	if n > cap(h.b) {
		grown := Get(n)
		copy(grown, h.b[:keep])
		Put(h.b)
		h.b = grown
	}
	return h.b[:n]
}

// Release hands the buffer back; a Grow after it starts a new one.
func (h *Held) Release() {
	Put(h.b)
	h.b = nil
}
