package compress

import (
	"bytes"
	"os/exec"
	"testing"
)

// The chunked lz4 writer gives exactly what `lz4 -l` gives for the whole
// input, whatever the number of workers, across several 8 MiB blocks.
func TestChunkedLz4MatchesTool(t *testing.T) {
	requireTool(t, "lz4")
	data := mixedData(lz4LegacyBlock*2+12345, 3)
	cmd := exec.Command("lz4", "-l", "-9", "-q", "-c")
	cmd.Stdin = bytes.NewReader(data)
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 2, 3} {
		var buf bytes.Buffer
		w, _, err := NewWriter(&buf, Lz4Legacy, WriterOptions{Level: 9, Threads: threads, Backend: External})
		if err != nil {
			t.Fatal(err)
		}
		for p := data; len(p) > 0; {
			k := min(len(p), 1<<20+7)
			w.Write(p[:k])
			p = p[k:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%d threads: %d bytes differ from lz4 -l -9's %d", threads, buf.Len(), len(want))
		}
	}
	var empty bytes.Buffer
	w, _, _ := NewWriter(&empty, Lz4Legacy, WriterOptions{Backend: External})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if r, _, err := NewReader(bytes.NewReader(empty.Bytes()), ReaderOptions{Backend: PureGo}); err != nil {
		t.Fatalf("empty stream: %v", err)
	} else {
		r.Close()
	}
}
