package compress

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// TestReadahead checks that the goroutine between decoder and consumer
// hands over every byte in order, then the source's error, and never an
// error early.
func TestReadahead(t *testing.T) {
	data := mixedData(3*aheadBufSize+12345, 61)
	boom := errors.New("boom")
	tests := []struct {
		name    string
		src     io.Reader
		want    []byte
		wantErr error
	}{
		{name: "whole", src: bytes.NewReader(data), want: data},
		{name: "one byte at a time", src: iotest.OneByteReader(bytes.NewReader(data[:5000])), want: data[:5000]},
		{name: "empty", src: bytes.NewReader(nil), want: nil},
		{name: "exactly one buffer", src: bytes.NewReader(data[:aheadBufSize]), want: data[:aheadBufSize]},
		{name: "error after data", src: io.MultiReader(bytes.NewReader(data), iotest.ErrReader(boom)), want: data, wantErr: boom},
		{name: "data with error", src: iotest.DataErrReader(bytes.NewReader(data[:777])), want: data[:777]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			closed := 0
			r := newReadahead(tt.src, func() error { closed++; return nil }, errReadClosed)
			got, err := io.ReadAll(iotest.HalfReader(r))
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(digestOf(None, tt.want), digestOf(None, got)); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if err := r.Close(); err != nil || closed != 1 {
				t.Errorf("Close: %v, decoder closed %d times", err, closed)
			}
			r.Close()
			if closed != 1 {
				t.Errorf("second Close closed the decoder again")
			}
			if _, err := r.Read(make([]byte, 1)); err != errReadClosed {
				t.Errorf("Read after Close: %v", err)
			}
		})
	}
}

// TestReadaheadCloseEarly closes with the goroutine blocked on full
// buffers: Close must return, and close the decoder after the goroutine
// has left it.
func TestReadaheadCloseEarly(t *testing.T) {
	src := &trackingReader{r: bytes.NewReader(mixedData(10*aheadBufSize, 62))}
	r := newReadahead(src, func() error { src.closed = true; return nil }, errReadClosed)
	if _, err := io.ReadFull(r, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if src.readAfterClose {
		t.Error("the decoder was read after its Close")
	}
}

type trackingReader struct {
	r              io.Reader
	closed         bool
	readAfterClose bool
}

func (t *trackingReader) Read(p []byte) (int, error) {
	if t.closed {
		t.readAfterClose = true
	}
	return t.r.Read(p)
}
