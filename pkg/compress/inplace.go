package compress

import (
	"errors"
	"fmt"
	"io"
)

// InPlaceReader is a source that can hand out its next bytes where they
// sit in memory, a file mapped with mmap, instead of copying them: the
// legacy lz4 decoder's read() and the first touch of its buffers were a
// tenth of a no-change repack's CPU time (make bench: repack-lz4).
//
// Mapped bytes fault (SIGBUS) if the file shrinks, and the Go runtime
// cannot recover a fault inside the lz4 library's assembly (no stack map
// for its frame): the source keeps the file from shrinking while it is
// read in place, and Check says when it no longer can.
type InPlaceReader interface {
	io.Reader
	// InPlace prepares reading in place and reports whether Next works.
	// Bytes read before stay read: Next continues where Read left off.
	InPlace() bool
	// Next consumes and returns the next n bytes, valid until the source
	// is released, after the decoder is closed; near the end fewer, with
	// io.EOF if there were none and io.ErrUnexpectedEOF otherwise.
	Next(n int) ([]byte, error)
	// Check reports an error once bytes returned by Next may no longer
	// be read: the decoder calls it before each block it reads in
	// place, and then reads that block at once.
	Check() error
	// Done says the decoder no longer needs p, a slice Next returned, so
	// that its pages leave the resident memory, which would else grow
	// with the archive.
	Done(p []byte)
}

// errInputChanged reports a fault on mapped input, in Go code where it
// can be caught: the file shrank while it was read.
var errInputChanged = errors.New("the input file shrank while it was read")

// faultError turns the value recovered from a panic into an error: a
// memory fault (which debug.SetPanicOnFault makes a panic) into
// errInputChanged, anything else into ErrDecoderPanic.
func faultError(v any) error {
	if _, ok := v.(interface{ Addr() uintptr }); ok {
		return fmt.Errorf("%w (a fault reading it in place)", errInputChanged)
	}
	return fmt.Errorf("%w: %v", ErrDecoderPanic, v)
}
