package compress

import (
	"io"
	"sync"
)

// readahead runs a decoder in a goroutine of its own, a few buffers ahead
// of the consumer, so that a single-stream decoder (gzip, xz in Go) on one
// core overlaps what parses its output on another: worth it where decoding
// is slow enough to pay for one more copy of every byte (see NewReader).
type readahead struct {
	src   io.Reader
	full  chan *aheadBuf
	empty chan *aheadBuf
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	close func() error // the decoder's own Close, after the goroutine ends
	onErr error        // what Read returns after Close

	started bool
	cur     *aheadBuf
	pos     int
	err     error
}

type aheadBuf struct {
	b   []byte
	n   int
	err error // after the n bytes
}

const (
	aheadBufSize = 1 << 20
	aheadBufs    = 3
)

func newReadahead(src io.Reader, close func() error, closedErr error) *readahead {
	r := &readahead{
		src:   src,
		full:  make(chan *aheadBuf, aheadBufs),
		empty: make(chan *aheadBuf, aheadBufs),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		close: close,
		onErr: closedErr,
	}
	for range aheadBufs {
		r.empty <- &aheadBuf{}
	}
	return r
}

func (r *readahead) fill() {
	defer close(r.done)
	for {
		var b *aheadBuf
		select {
		case b = <-r.empty:
		case <-r.stop:
			return
		}
		if b.b == nil {
			b.b = make([]byte, aheadBufSize)
		}
		b.n, b.err = io.ReadFull(r.src, b.b)
		if b.err == io.ErrUnexpectedEOF {
			b.err = io.EOF // a short last buffer, not a short stream
		}
		select {
		case r.full <- b:
		case <-r.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

func (r *readahead) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if !r.started {
		r.started = true
		go r.fill()
	}
	for r.cur == nil || r.pos == r.cur.n {
		if r.cur != nil {
			if r.cur.err != nil {
				r.err = r.cur.err
				return 0, r.err
			}
			r.empty <- r.cur
		}
		r.cur, r.pos = <-r.full, 0
	}
	n := copy(p, r.cur.b[r.pos:r.cur.n])
	r.pos += n
	return n, nil
}

// Close stops the goroutine, waits for the read it may be in, and closes
// the decoder.
func (r *readahead) Close() error {
	var err error
	r.once.Do(func() {
		close(r.stop)
		if r.started {
			<-r.done
		}
		r.cur = nil
		err = r.close()
	})
	r.err = r.onErr
	return err
}
