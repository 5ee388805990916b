package compress

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// fuzzReadLimit bounds how much a fuzz input may decompress to, so that a
// small input expanding hugely costs time, not a failure.
const fuzzReadLimit = 4 << 20

// addFuzzSeeds seeds f with small real streams from our writers, empty and
// not, with bzip2 from the CLI when it is installed, and with bare magics.
func addFuzzSeeds(f *testing.F) {
	payloads := [][]byte{nil, []byte("x"), mixedData(600, 81)}
	for _, c := range compressedCodecs {
		// xz level 1 announces a 1 MiB dictionary, which the decoder
		// allocates on every run; 64 MiB would slow fuzzing right down.
		opt := WriterOptions{Level: 1}
		for _, p := range payloads {
			f.Add(compress(f, c, opt, p))
		}
	}
	f.Add(concat(compress(f, Gzip, WriterOptions{}, []byte("a")), compress(f, Gzip, WriterOptions{}, []byte("b"))))
	f.Add(concat(skippable(0, []byte("meta")), compress(f, Zstd, WriterOptions{}, []byte("z"))))
	f.Add(concat(skippable(0, nil), compress(f, Lz4Legacy, WriterOptions{}, []byte("l"))))
	if _, err := exec.LookPath("bzip2"); err == nil {
		for _, p := range payloads {
			out, err := runTool(f, p, "bzip2", "-9", "-c")
			if err != nil {
				f.Fatal(err)
			}
			f.Add(out)
		}
	}
	for _, magic := range [][]byte{nil, {0x1F}, {0x1F, 0x8B, 0x08, 0x00}, magicXz, magicLz4Legacy, magicLz4Frame, magicZstd, []byte("BZh91AY&SY"), magicLzop, []byte("070701")} {
		f.Add(bytes.Clone(magic))
	}
}

func FuzzSniff(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		c, err := Sniff(br)
		if len(data) < 4 && (c != None || err != nil) {
			t.Fatalf("Sniff of %d bytes = %v, %v; want none", len(data), c, err)
		}
		if err != nil && c != None {
			t.Fatalf("Sniff = %v with error %v", c, err)
		}
		if c2, err2 := Sniff(br); c2 != c || (err2 == nil) != (err == nil) {
			t.Fatalf("second Sniff = %v, %v; first %v, %v", c2, err2, c, err)
		}
		rest, err := io.ReadAll(br)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rest, data) {
			t.Fatal("Sniff consumed input")
		}
		if c != None && !isSkippable(data) {
			if got, _ := sniffBytes(data[:min(len(data), sniffLen)]); got != c {
				t.Fatalf("Sniff = %v but the signature says %v", c, got)
			}
		}
	})
}

func FuzzNewReader(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, c, err := NewReader(bytes.NewReader(data), ReaderOptions{Backend: PureGo})
		if err != nil {
			checkFuzzErr(t, err)
			return
		}
		var out bytes.Buffer
		_, err = io.CopyN(&out, r, fuzzReadLimit)
		if err != nil && err != io.EOF {
			checkFuzzErr(t, err)
		}
		if cerr := r.Close(); cerr != nil {
			t.Fatalf("Close: %v", cerr)
		}
		// Passthrough must be exact.
		if c == None && err == io.EOF && !isSkippable(data) && !bytes.Equal(out.Bytes(), data) {
			t.Fatal("None reader changed the data")
		}
		if c == Lz4Legacy {
			// Read in place, from a source that gives the sniffing
			// buffer a few bytes at a time, it must decode the same.
			src := &memInPlace{data: data, readMax: 16}
			r, _, ierr := NewReader(src, ReaderOptions{Backend: PureGo})
			var in bytes.Buffer
			if ierr == nil {
				_, ierr = io.CopyN(&in, r, fuzzReadLimit)
				r.Close()
			}
			if (ierr == nil || ierr == io.EOF) != (err == nil || err == io.EOF) || !bytes.Equal(in.Bytes(), out.Bytes()) {
				t.Fatalf("in place: %d bytes, %v; read: %d bytes, %v", in.Len(), ierr, out.Len(), err)
			}
		}
	})
}

// checkFuzzErr fails on a recovered decoder panic and on errors that do
// not say where they come from.
func checkFuzzErr(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, ErrDecoderPanic) {
		t.Fatalf("decoder panicked: %v", err)
	}
	var ce *Error
	if !errors.As(err, &ce) && !strings.HasPrefix(err.Error(), "compress: ") {
		t.Fatalf("error without context: %v", err)
	}
}
