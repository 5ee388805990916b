package compress

import (
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// toolPipeSize is the pipe an external decompressor writes into, 1 MiB
// instead of Linux's 64 KiB (fs.pipe-max-size allows it unprivileged).
const toolPipeSize = 1 << 20

// Pauses of the batched reader: the shortest worth a timer, and the
// longest, a bound on the latency a slow tool sees.
const (
	minPipePause = 250 * time.Microsecond
	maxPipePause = 16 * time.Millisecond
)

// batchedPipe reads a tool's output in batches of about half the pipe.
//
// xz writes 8 KiB at a time (IO_BUFFER_SIZE in src/xz/file_io.h), and a
// reader woken by every write made 53,000 context switches for a 400 MiB
// rootfs, a fifth of all CPU cycles (perf: finish_task_switch). So the
// read end is blocking and outside the Go netpoller (whose edge-triggered
// epoll would wake on every write even while the reader sleeps), and after
// a read that found the pipe mostly empty the reader pauses, doubling the
// pause while reads stay small and halving it once they are large. A tool
// that outruns the reader fills the pipe and is read without pausing
// (docs/performance.md, "Reading xz").
type batchedPipe struct {
	f        *os.File
	src      io.Reader // f, but for tests that count the reads
	capacity int       // the pipe's, as the kernel reports it
	pause    time.Duration
	last     time.Time // when the last read returned
	buf      []byte
	next     []byte // buffered, not yet returned
}

// newToolPipe makes the pipe for a tool's output: the write end for the
// tool's stdout, the read end wrapped as a batchedPipe.
func newToolPipe() (r *batchedPipe, w *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	// Best effort: a smaller pipe only means smaller batches.
	unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, toolPipeSize)
	capacity, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETPIPE_SZ, 0)
	if err != nil || capacity <= 0 {
		capacity = 64 << 10
	}
	// A blocking descriptor is read by os.File with plain read(2) calls,
	// never registered with the netpoller.
	rf := os.NewFile(uintptr(fds[0]), "|decompressor stdout")
	wf := os.NewFile(uintptr(fds[1]), "|decompressor stdin")
	return &batchedPipe{f: rf, src: rf, capacity: capacity, buf: make([]byte, capacity)}, wf, nil
}

func (b *batchedPipe) Read(p []byte) (int, error) {
	if len(b.next) == 0 {
		if len(p) >= len(b.buf) {
			return b.read(p) // straight into a big enough buffer
		}
		n, err := b.read(b.buf)
		b.next = b.buf[:n]
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, b.next)
	b.next = b.next[n:]
	return n, nil
}

// read does one read(2), at least the pause the last one called for
// after it.
func (b *batchedPipe) read(p []byte) (int, error) {
	if b.pause > 0 {
		// The time spent on the last batch counts towards the pause.
		if wait := b.pause - time.Since(b.last); wait > 0 {
			time.Sleep(wait)
		}
	}
	n, err := b.src.Read(p)
	b.last = time.Now()
	switch {
	case n >= b.capacity*3/4:
		if b.pause /= 2; b.pause < minPipePause {
			b.pause = 0
		}
	case n < b.capacity/4 && err == nil:
		b.pause = min(max(2*b.pause, minPipePause), maxPipePause)
	}
	return n, err
}

func (b *batchedPipe) Close() error { return b.f.Close() }

var _ io.ReadCloser = (*batchedPipe)(nil)
