package trim

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/contract"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

// recorded is an archive read once, for an audit whose owners come from
// the archive's own dpkg database, which lies after most of what it is
// about (var/ sorts after etc/ and usr/): what each entry needs to be
// judged, its header, is kept until the database is in, and the entries
// are judged after (replay). Headers are small (a Debian rootfs of 7,000
// entries keeps about 2 MB); the data is not kept, but for an applied
// image's index, the one entry audit reads.
type recorded struct {
	kind    archive.Kind
	entries []archive.Entry
	index   map[int][]byte // entry number -> data, for the index's path
	db      *DpkgDB
}

// maxRecordedIndex bounds the copy of an applied image's index kept for
// the replay: apply writes a few kilobytes; DecodeIndex refuses far less
// than this anyway.
const maxRecordedIndex = 64 << 20

// isTreePath reports whether name is a directory (a tree, whose database
// is read first, beneath it).
func isTreePath(name string) bool {
	if name == container.Stdin {
		return false
	}
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}

// record reads in.Path through once, keeping every entry's header and
// gathering the dpkg database. Read errors are named as LoadDpkg names
// them, which read the archive first, before the audit, until there was
// one pass.
func record(in AuditInput, wrap func(archive.Reader) archive.Reader, open container.OpenOptions) (*recorded, error) {
	src, r, err := openWrapped(in.Path, wrap, open)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	rec := &recorded{kind: src.Format.Kind, index: map[int][]byte{}}
	var scan dpkgScan
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, dpkgReadError(in.Path, err)
		}
		h := *e
		h.Format = nil // what a writer needs, not a judge
		h.Name, h.Linkname = strings.Clone(e.Name), strings.Clone(e.Linkname)
		rec.entries = append(rec.entries, h)
		if name, err := pathx.Clean(e.Name); err == nil && name == contract.IndexPath && e.Type == archive.TypeRegular {
			data, err := io.ReadAll(io.LimitReader(r, maxRecordedIndex))
			if err != nil {
				return nil, dpkgReadError(in.Path, err)
			}
			rec.index[len(rec.entries)-1] = data
			continue
		}
		if err := scan.entry(in.Path, e, r); err != nil {
			return nil, err
		}
	}
	rec.db = scan.done()
	return rec, nil
}

// owners are the recorded archive's, from its database, or none.
func (rec *recorded) owners() *Owners {
	if rec.db == nil {
		return NewOwners()
	}
	return rec.db.Owners
}

// replay judges the recorded entries, in their order, with the owners
// the database gave.
func (rec *recorded) replay(a *Auditor) error {
	for i := range rec.entries {
		data := bytes.NewReader(rec.index[i])
		if _, err := a.Entry(&rec.entries[i], data); err != nil {
			return err
		}
	}
	return nil
}
