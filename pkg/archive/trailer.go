package archive

import "io"

// TrailerReader passes on the entries of a stream but holds back its last
// trailer: where that trailer comes, Next returns io.EOF, and Trailer hands
// it back, for a writer that adds entries of its own before it (apply).
// A trailer between members comes out where it was, once the entry after
// it shows it is not the last. The idea is u-root's pkg/cpio EOFReader,
// which ends a stream at its trailer.
type TrailerReader struct {
	Reader
	held, next *Entry
	atTrailer  bool // the entry out is a trailer: it has no data
}

// NewTrailerReader returns r with its last trailer held back.
func NewTrailerReader(r Reader) *TrailerReader { return &TrailerReader{Reader: r} }

func (t *TrailerReader) Next() (*Entry, error) {
	t.atTrailer = false
	if e := t.next; e != nil {
		t.next = nil
		return e, nil
	}
	for {
		e, err := t.Reader.Next()
		if err != nil {
			return nil, err
		}
		if t.held == nil && e.Type != TypeTrailer {
			return e, nil
		}
		if t.held == nil {
			t.held = e
			continue
		}
		// More follows the held trailer: it was not the last.
		out := t.held
		t.held = nil
		if e.Type == TypeTrailer {
			t.held = e
		} else {
			t.next = e
		}
		t.atTrailer = true
		return out, nil
	}
}

func (t *TrailerReader) Read(p []byte) (int, error) {
	if t.atTrailer {
		return 0, io.EOF
	}
	return t.Reader.Read(p)
}

// Trailer is the trailer that ended the stream, once Next has returned
// io.EOF; nil if it ended on none.
func (t *TrailerReader) Trailer() *Entry { return t.held }
