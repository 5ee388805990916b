package trim

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/rootfs-trim/rootfs-trim/pkg/digest"
)

// spoolMemory bounds what a captured file keeps in memory; larger ones go
// to an unlinked temporary file, so memory does not grow with what a rule
// happens to capture.
const spoolMemory = 1 << 20

// spool holds the data of an entry that apply writes elsewhere later
// (relocated and deferred files), with its digest.
type spool struct {
	mem  bytes.Buffer
	file *os.File
	size int64
	sum  string
}

func newSpool(r io.Reader) (*spool, error) {
	s := &spool{}
	h := digest.New()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			if err := s.write(buf[:n]); err != nil {
				s.Close()
				return nil, err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	s.sum = digest.Sum(h)
	return s, nil
}

func (s *spool) write(p []byte) error {
	s.size += int64(len(p))
	if s.file == nil && s.mem.Len()+len(p) > spoolMemory {
		f, err := os.CreateTemp("", "rootfs-trim-spool-*")
		if err != nil {
			return fmt.Errorf("spooling: %w", err)
		}
		os.Remove(f.Name()) // unlinked: gone whatever happens to us
		if _, err := f.Write(s.mem.Bytes()); err != nil {
			f.Close()
			return fmt.Errorf("spooling: %w", err)
		}
		s.mem = bytes.Buffer{}
		s.file = f
	}
	if s.file != nil {
		_, err := s.file.Write(p)
		return err
	}
	s.mem.Write(p)
	return nil
}

// Reader returns the data from the start.
func (s *spool) Reader() (io.Reader, error) {
	if s.file == nil {
		return bytes.NewReader(s.mem.Bytes()), nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return s.file, nil
}

func (s *spool) Close() {
	if s.file != nil {
		s.file.Close()
	}
}
