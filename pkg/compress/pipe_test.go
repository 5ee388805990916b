package compress

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// countingReads counts the reads that reach the pipe.
type countingReads struct {
	r     io.Reader
	reads int
}

func (c *countingReads) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// TestBatchedPipeBatches writes as xz does, 8 KiB at a time at a steady
// pace, and checks that the reader lets the pipe fill: a reader that reads
// whenever there is something does about one read per write (and so one
// wake-up of each side), which is what cost the xz pipeline a fifth of its
// time on two cores.
func TestBatchedPipeBatches(t *testing.T) {
	bp, w, err := newToolPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer bp.Close()
	const chunk, chunks = 8 << 10, 2048 // 16 MiB
	want := mixedData(chunk*chunks, 7)
	go func() {
		defer w.Close()
		for i := 0; i < chunks; i++ {
			if _, err := w.Write(want[i*chunk : (i+1)*chunk]); err != nil {
				return
			}
			if i%4 == 3 {
				time.Sleep(100 * time.Microsecond) // about 150 MB/s at most
			}
		}
	}()
	counted := &countingReads{r: bp.src}
	bp.src = counted
	got, err := io.ReadAll(bp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
	if counted.reads > chunks/8 {
		t.Errorf("%d reads for %d writes of 8 KiB, want at most %d (the pipe is %d bytes)", counted.reads, chunks, chunks/8, bp.capacity)
	}
}
