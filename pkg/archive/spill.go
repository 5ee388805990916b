package archive

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Spill holds data that must be read again later: in memory up to Limit
// bytes, beyond that in an unlinked temporary file, so memory does not grow
// with the data. The cpio crc writer stages an entry's data until its
// checksum is known, Copy a hard-link group's data until a kept member
// comes, and apply (pkg/trim) the files it relocates or defers.
type Spill struct {
	Limit   int
	Pattern string // of the temporary file's name, for os.CreateTemp
	What    string // for errors: "spooling"

	mem  bytes.Buffer
	file *os.File
	size int64
}

func (s *Spill) Write(p []byte) (int, error) {
	if s.file == nil && s.mem.Len()+len(p) > s.Limit {
		f, err := os.CreateTemp("", s.Pattern)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", s.What, err)
		}
		os.Remove(f.Name()) // unlinked: nothing is left behind, whatever happens
		if _, err := f.Write(s.mem.Bytes()); err != nil {
			f.Close()
			return 0, fmt.Errorf("%s: %w", s.What, err)
		}
		s.mem = bytes.Buffer{}
		s.file = f
	}
	var w io.Writer = &s.mem
	if s.file != nil {
		w = s.file
	}
	n, err := w.Write(p)
	s.size += int64(n)
	return n, err
}

// Size is how many bytes were written.
func (s *Spill) Size() int64 { return s.size }

// Reader returns the data from the start.
func (s *Spill) Reader() (io.Reader, error) {
	if s.file == nil {
		return bytes.NewReader(s.mem.Bytes()), nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return s.file, nil
}

// Close removes the temporary file, if any.
func (s *Spill) Close() {
	if s.file != nil {
		s.file.Close()
	}
}
