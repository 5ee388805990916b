package bigbuf

import (
	"math/bits"
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
