package trim

import (
	"io"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// spoolMemory bounds what a captured file keeps in memory; larger ones go
// to an unlinked temporary file, so memory does not grow with what a rule
// happens to capture.
const spoolMemory = 1 << 20

// spool holds the data of an entry that apply writes elsewhere later
// (relocated and deferred files), with its size and digest.
type spool struct {
	archive.Spill
	size int64
	sum  string
}

func newSpool(r io.Reader) (*spool, error) {
	s := &spool{Spill: archive.Spill{Limit: spoolMemory, Pattern: "rootfs-trim-spool-*", What: "spooling"}}
	h := digest.New()
	if _, err := io.Copy(io.MultiWriter(h, &s.Spill), r); err != nil {
		s.Close()
		return nil, err
	}
	s.size, s.sum = s.Size(), digest.Sum(h)
	return s, nil
}
