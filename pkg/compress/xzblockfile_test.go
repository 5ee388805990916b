package compress

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// allocated is how many bytes of memory f holds.
func allocated(t *testing.T, f *os.File) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// decodeInto runs xz -dc on stream with f as its standard output, as a
// block's xz runs.
func decodeInto(t *testing.T, f *os.File, stream []byte) error {
	t.Helper()
	cmd := exec.Command("xz", "-dc", "-q")
	cmd.Stdin, cmd.Stdout = bytes.NewReader(stream), f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		t.Logf("xz: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return err
}

// TestBlockFiles writes into block files as xz does: every byte of an
// honest block, read back through the mapping, zeros too over what a
// block before left; a block that gives more
// than the file holds is stopped at the file's end, past the size it
// was made for, so the lie is told and costs no more than the file; and
// a file used again holds no pages past the next block's size.
func TestBlockFiles(t *testing.T) {
	requireTool(t, "xz")
	const largest = 2 << 20
	fs, err := newBlockFiles(largest)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.close()

	t.Run("whole", func(t *testing.T) {
		data := mixedData(largest, 21)
		f, err := fs.get(largest)
		if err != nil {
			t.Fatal(err)
		}
		defer fs.put(f)
		if err := decodeInto(t, f, mustRunTool(t, data, "xz", "-1", "-c")); err != nil {
			t.Fatal(err)
		}
		if n, err := written(f); err != nil || n != largest {
			t.Fatalf("written %d, %v; want %d", n, err, largest)
		}
		got, err := mapBlock(f, largest)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(got)
		if !bytes.Equal(got, data) {
			t.Fatal("the mapped output differs from the data")
		}
	})

	// xz makes holes for runs of zeros in a file it may (io_write in
	// src/xz/file_io.c): in a file used again they would show the last
	// block's bytes.
	t.Run("zeros over the last block", func(t *testing.T) {
		f, err := fs.get(largest) // the one "whole" wrote, taken back
		if err != nil {
			t.Fatal(err)
		}
		defer fs.put(f)
		zeros := make([]byte, largest)
		if err := decodeInto(t, f, mustRunTool(t, zeros, "xz", "-1", "-c")); err != nil {
			t.Fatal(err)
		}
		got, err := mapBlock(f, largest)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(got)
		if !bytes.Equal(got, zeros) {
			t.Fatal("the zeros read back as something else: xz left holes over the last block's bytes")
		}
	})

	t.Run("more than the file", func(t *testing.T) {
		f, err := fs.get(largest)
		if err != nil {
			t.Fatal(err)
		}
		defer fs.put(f)
		bomb := mustRunTool(t, make([]byte, 64<<20), "xz", "-1", "-c")
		if err := decodeInto(t, f, bomb); err == nil {
			t.Fatal("xz wrote 64 MiB into a sealed file of 3 MiB")
		}
		n, err := written(f)
		if err != nil {
			t.Fatal(err)
		}
		if n <= largest || n > fs.size {
			t.Errorf("written %d, want past the block's %d and within the file's %d", n, largest, fs.size)
		}
		if a := allocated(t, f); a > fs.size {
			t.Errorf("the file holds %d bytes, more than its size %d", a, fs.size)
		}
	})

	t.Run("used again", func(t *testing.T) {
		f, err := fs.get(64 << 10) // the one the bomb filled, taken back
		if err != nil {
			t.Fatal(err)
		}
		defer fs.put(f)
		if n, _ := written(f); n != 0 {
			t.Errorf("offset %d, want 0", n)
		}
		if a := allocated(t, f); a > 64<<10 {
			t.Errorf("the file holds %d bytes for a block of %d", a, 64<<10)
		}
	})
}
