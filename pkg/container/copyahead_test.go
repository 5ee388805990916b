package container

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestCopyAhead(t *testing.T) {
	data := make([]byte, 3*copyAheadChunk+12345)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, inKernel := range []bool{true, false} {
		t.Run(map[bool]string{true: "copy_file_range", false: "pwrite"}[inKernel], func(t *testing.T) {
			defer func(old bool) { copyInKernel = old }(copyInKernel)
			copyInKernel = inKernel
			dir := t.TempDir()
			src := filepath.Join(dir, "in")
			if err := os.WriteFile(src, data, 0o644); err != nil {
				t.Fatal(err)
			}
			in, err := os.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()

			t.Run("whole", func(t *testing.T) {
				out, err := os.Create(filepath.Join(dir, "whole"))
				if err != nil {
					t.Fatal(err)
				}
				defer out.Close()
				if err := startCopyAhead(in, out, 0, int64(len(data))).wait(); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(out.Name())
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("copy differs from the input (%d bytes, want %d)", len(got), len(data))
				}
				// The output's own offset stays where the splicer writes.
				if off, _ := out.Seek(0, 1); off != 0 {
					t.Errorf("output offset %d after the copy, want 0", off)
				}
			})

			t.Run("stopped", func(t *testing.T) {
				out, err := os.Create(filepath.Join(dir, "stopped"))
				if err != nil {
					t.Fatal(err)
				}
				defer out.Close()
				c := startCopyAhead(in, out, 0, int64(len(data)))
				c.stop()
				if c.n > int64(len(data)) {
					t.Fatalf("copied %d bytes of %d", c.n, len(data))
				}
				// What reuseWriter.stopAhead then does: the file is the
				// splicer's, from offset 0.
				if err := out.Truncate(0); err != nil {
					t.Fatal(err)
				}
				if _, err := out.Write([]byte("spliced")); err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(out.Name())
				if string(got) != "spliced" {
					t.Fatalf("after stop: %q, want %q", got[:min(len(got), 20)], "spliced")
				}
			})

			t.Run("input shorter than said", func(t *testing.T) {
				out, err := os.Create(filepath.Join(dir, "short"))
				if err != nil {
					t.Fatal(err)
				}
				defer out.Close()
				if err := startCopyAhead(in, out, 0, int64(len(data))+10).wait(); err == nil {
					t.Fatal("copying more than the input holds: no error")
				}
			})
		})
	}
}
