package trim

import (
	"bytes"
	"io"
	"os"
	"path"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/contract"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// recorded is an archive read once, for an audit whose owners come from
// the archive's own dpkg database, which lies after most of what it is
// about (var/ sorts after etc/ and usr/): what each entry needs to be
// judged, its header, is kept until the database is in, and the entries
// are judged after (replay). Headers are small (a Debian rootfs of 7,000
// entries keeps about 2 MB); the data is not kept, but for an applied
// image's index and the config files an edit rule reads, the entries
// audit reads.
type recorded struct {
	kind    archive.Kind
	entries []archive.Entry
	index   map[int][]byte // entry number -> data, for the index's path and what Keep says
	db      *DpkgDB
	// placeOf is the input's container.Input.PlaceOf, for the findings.
	placeOf func(int) *container.Place
}

// maxRecordedIndex bounds the copy of an applied image's index kept for
// the replay: apply writes a few kilobytes; DecodeIndex refuses far less
// than this anyway.
const maxRecordedIndex = 64 << 20

// ReadsDatabaseFirst reports whether name is a directory (a tree, whose
// database is read first, beneath it) or an image (whose first pass over
// its layers' headers gathers the database, ociimage.Image.DpkgLists):
// LoadDpkg costs no read of the whole input there.
func ReadsDatabaseFirst(name string) bool {
	if name == container.Stdin {
		return false
	}
	fi, err := os.Stat(name)
	return err == nil && (fi.IsDir() || ociimage.IsImage(name, fi))
}

// record reads in.Path through once, keeping every entry's header and
// gathering the dpkg database. Read errors are named as LoadDpkg names
// them, which read the archive first, before the audit, until there was
// one pass.
func record(set *rules.Set, in AuditInput, wrap func(archive.Reader) archive.Reader, open container.OpenOptions) (*recorded, error) {
	src, r, err := openWrapped(in.Path, wrap, open)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	rec := NewRecording(in.Path, src.Format.Kind)
	rec.Keep = judgedPaths(set)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, dpkgReadError(in.Path, err)
		}
		if err := rec.Entry(e, r); err != nil {
			return nil, err
		}
	}
	if _, err := rec.Done(); err != nil {
		return nil, err
	}
	rec.rec.placeOf = src.PlaceOf
	return &rec.rec, nil
}

// Recording is an archive read once by a caller that does more with its
// entries than audit does (diff hashes them), for owners from the
// archive's own dpkg database, which lies after most of what it is
// about: Entry keeps what the audit step needs of each entry while the
// database is gathered, Done gives the database, and Replay judges the
// entries with it.
type Recording struct {
	rec  recorded
	scan dpkgScan
	path string
	// Keep says which regular files' data the replay needs besides the
	// index's (judgedPaths); nil: none.
	Keep func(name string) bool
}

// judgedPaths says which paths a rule of set judges by their content
// (ActionSpec.Judge): their data is kept for the replay.
func judgedPaths(set *rules.Set) func(string) bool {
	var judging []*rules.Rule
	for _, r := range set.Rules() {
		if Actions[r.Action].Judge != nil {
			judging = append(judging, r)
		}
	}
	configs := NewConfigFiles(set)
	return func(name string) bool {
		if configs.wanted(name) {
			return true
		}
		for _, r := range judging {
			for _, p := range r.Paths {
				if p.Match(name) {
					return true
				}
			}
		}
		return false
	}
}

// NewRecording starts the recording of the archive at path, of kind.
func NewRecording(path string, kind archive.Kind) *Recording {
	return &Recording{rec: recorded{kind: kind, index: map[int][]byte{}}, path: path}
}

// Entry records e, whose data is data: it reads the data of an applied
// image's index and of the database's files, and leaves the rest unread.
func (r *Recording) Entry(e *archive.Entry, data io.Reader) error {
	h := *e
	h.Format = nil // what a writer needs, not a judge
	h.Name, h.Linkname = strings.Clone(e.Name), strings.Clone(e.Linkname)
	r.rec.entries = append(r.rec.entries, h)
	if name, err := pathx.Clean(e.Name); err == nil && e.Type == archive.TypeRegular && (name == contract.IndexPath || r.Keep != nil && r.Keep(name)) {
		b, err := io.ReadAll(io.LimitReader(data, maxRecordedIndex))
		if err != nil {
			return dpkgReadError(r.path, err)
		}
		r.rec.index[len(r.rec.entries)-1] = b
		return r.scan.entry(r.path, e, bytes.NewReader(b))
	}
	return r.scan.entry(r.path, e, data)
}

// Kind is the recorded archive's format.
func (r *Recording) Kind() archive.Kind { return r.rec.kind }

// Done returns the archive's database once its entries are all
// recorded; nil when it has none.
func (r *Recording) Done() (*DpkgDB, error) {
	db, err := r.scan.done(r.path)
	r.rec.db = db
	return db, err
}

// Replay judges the recorded entries with a, in their order; each, when
// set, is told what became of the i-th.
func (r *Recording) Replay(a *Auditor, each func(i int, e *archive.Entry, dec Decision) error) error {
	for i := range r.rec.entries {
		e := &r.rec.entries[i]
		dec, err := a.Entry(e, bytes.NewReader(r.rec.index[i]))
		if err != nil {
			return err
		}
		if each != nil {
			if err := each(i, e, dec); err != nil {
				return err
			}
		}
	}
	return nil
}

// replay judges the recorded entries, in their order, with the owners
// the database gave.
func (rec *recorded) replay(a *Auditor) error {
	r := Recording{rec: *rec}
	return r.Replay(a, nil)
}

// dpkgTee reads an apply's input on to the applier while it gathers the
// input's dpkg database from the .list files going by, so that the input
// is read once: the applier judges each entry with the owners known so far
// (Classifier.speculative) and checks at the end that all of them would
// have been judged alike (streamApplier.settle).
type dpkgTee struct {
	archive.Reader
	name string
	scan dpkgScan
	cur  *archive.Entry // the .list whose data is going by
	buf  bytes.Buffer   // its data, up to maxDpkgList
}

func newDpkgTee(r archive.Reader, name string) *dpkgTee {
	return &dpkgTee{Reader: r, name: name, scan: dpkgScan{db: newDpkgDB()}}
}

// owners are the database's owners as far as it has been read.
func (t *dpkgTee) owners() *Owners { return t.scan.db.Owners }

func (t *dpkgTee) Next() (*archive.Entry, error) {
	if err := t.endList(); err != nil {
		return nil, err
	}
	e, err := t.Reader.Next()
	if err != nil {
		return e, err
	}
	if isDpkgList(e) {
		h := *e
		t.cur = &h
		t.buf.Reset()
		return e, nil
	}
	// Anything else in the database's directory counts now (a bad name,
	// the directory itself); elsewhere, nothing.
	return e, t.scan.entry(t.name, e, eofReader{})
}

func (t *dpkgTee) Read(p []byte) (int, error) {
	n, err := t.Reader.Read(p)
	if t.cur != nil && t.buf.Len() < maxDpkgList {
		t.buf.Write(p[:min(n, maxDpkgList-t.buf.Len())])
	}
	return n, err
}

// endList parses the .list that went by, reading what the applier left
// of it (an entry a rule drops is not read).
func (t *dpkgTee) endList() error {
	if t.cur == nil {
		return nil
	}
	if _, err := io.Copy(io.Discard, struct{ io.Reader }{t}); err != nil {
		return err
	}
	e := t.cur
	t.cur = nil
	return t.scan.entry(t.name, e, bytes.NewReader(t.buf.Bytes()))
}

// isDpkgList reports whether e is a file of the database dpkgScan reads
// the data of (a .list, a .version, dpkg's status file).
func isDpkgList(e *archive.Entry) bool {
	clean, err := pathx.Clean(e.Name)
	if err != nil || e.Type != archive.TypeRegular {
		return false
	}
	return classifyDBPath(clean) != notDB || clean == contract.IndexPath
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// ImageData says which files of an image apply, audit and check read the
// data of (container.OpenOptions.ImageData), so that the first pass over
// its layers keeps it and none is decompressed again: those a rule names,
// or lie beneath a directory one names (stripped with it, hashed), those
// a config reads (configs:), those the policy forbids (check hashes them), the dpkg database's files (read
// as they go by, dpkgTee) and the paths apply writes itself (an earlier
// apply's index, OwnPaths). It only saves time: the data of any other
// file read is read again from its layer.
func ImageData(set *rules.Set) func(name string) bool {
	if set == nil {
		return nil
	}
	c := NewClassifier(set, nil)
	own := OwnPaths(set)
	configs := NewConfigFiles(set)
	return func(name string) bool {
		if own[name] || classifyDBPath(name) != notDB || len(set.ForbiddenBy(name, rules.TypeFile, "")) > 0 || configs.wanted(name) {
			return true
		}
		for n := name; n != "." && n != "/"; n = path.Dir(n) {
			if c.anyRuleMatches(n) {
				return true
			}
		}
		return false
	}
}
