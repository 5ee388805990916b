package trim

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// record reads in.Path through once, holding every entry's header and
// gathering the owners it records (owners.Later), for an audit whose
// owners come from the input's own dpkg database; it holds the data of
// the files a rule of set judges by their content too (judgedPaths).
func record(set *rules.Set, in AuditInput, wrap func(archive.Reader) archive.Reader) (*Recording, *owners.DB, error) {
	src, r, err := openWrapped(in.Source, wrap)
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	rec := NewRecording(set, in.Path, src.Format.Kind)
	r = rec.boot.Wrap(r)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", in.Path, err)
		}
		if err := rec.Entry(e, r); err != nil {
			return nil, nil, err
		}
	}
	rec.placeOf = src.PlaceOf
	db, err := rec.Done()
	return rec, db, err
}

// Recording is an input read once by audit, or by a caller that does more
// with its entries (diff hashes them), for owners from the input's own
// records: Entry holds each entry's header (owners.Later), Done gives the
// owners, and Judge audits the entries with them, in their order.
type Recording struct {
	kind  archive.Kind
	later *owners.Later[heldEntry]
	// placeOf is the input's container.Input.PlaceOf, for the findings.
	placeOf func(int) *container.Place
	boot    *enablement.Collector // what enablement reads, gathered by record
	// keep says which regular files' data the replay needs besides the
	// index's (judgedPaths).
	keep func(name string) bool
}

// judgedPaths says which paths a rule of set judges by their content
// (ActionSpec.Judge): their data is held for the replay.
func judgedPaths(set *rules.Set) func(string) bool {
	var judging []*rules.Rule
	for _, r := range set.Rules() {
		if Actions[r.Action].Judge != nil {
			judging = append(judging, r)
		}
	}
	configs := NewConfigFiles(set)
	return func(name string) bool {
		return configs.wanted(name) || slices.ContainsFunc(judging, func(r *rules.Rule) bool { return r.Matches(name) })
	}
}

// heldEntry is what the audit step needs of an entry to judge it: its
// header, and the data of the entries whose data it reads: an applied
// image's index and a file a rule judges by its content (keep).
type heldEntry struct {
	entry archive.Entry
	data  []byte
}

// NewRecording starts the recording of the input at path, of kind, for
// set: it holds the data of the files set's rules and configs judge by
// their content, which the replay reads.
func NewRecording(set *rules.Set, path string, kind archive.Kind) *Recording {
	return &Recording{kind: kind, later: owners.NewLater[heldEntry](path, 0), keep: judgedPaths(set), boot: NewBootCollector()}
}

// Entry records e, whose data is data: it reads the data of an applied
// image's index, of the owners' records and of what keep names, and
// leaves the rest unread.
func (r *Recording) Entry(e *archive.Entry, data io.Reader) error {
	data, err := r.later.Entry(e, data)
	if err != nil {
		return err
	}
	h := heldEntry{entry: *e}
	h.entry.Format = nil // what a writer needs, not a judge
	h.entry.Name, h.entry.Linkname = strings.Clone(e.Name), strings.Clone(e.Linkname)
	if name, err := pathx.Clean(e.Name); err == nil && e.Type == archive.TypeRegular {
		switch {
		case name == contract.IndexPath:
			// Later read it all, up to the bound: this reads no more.
			h.data, err = io.ReadAll(io.LimitReader(data, owners.MaxIndex))
		case r.keep(name):
			// All that the audit step reads of it (judged).
			h.data, err = io.ReadAll(io.LimitReader(data, maxJudged))
		}
		if err != nil {
			return err
		}
	}
	return r.later.Hold(h)
}

// Done returns the input's owners once its entries are all recorded; nil
// when it records none.
func (r *Recording) Done() (*owners.DB, error) { return r.later.Done() }

// Judge audits the recorded entries of in with its owners (Done's), in
// their order; each, when set, is told what became of the i-th.
func (r *Recording) Judge(set *rules.Set, in AuditInput, each func(i int, e *archive.Entry, dec Decision) error) (*Auditor, error) {
	a := NewAuditor(set, in, r.kind)
	a.placeOf = r.placeOf
	held := r.later.Release()
	for i := range held {
		h := &held[i]
		dec, err := a.Entry(&h.entry, bytes.NewReader(h.data))
		if err == nil && each != nil {
			err = each(i, &h.entry, dec)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Path, err)
		}
	}
	return a, nil
}

// ImageData says which files of an image apply, audit and check read the
// data of (container.OpenOptions.ImageData), so that the first pass over
// its layers keeps it and none is decompressed again: those a rule names,
// or lie beneath a directory one names (stripped with it, hashed), those
// a config reads (configs:), those the policy forbids (check hashes them),
// the owners' records (read as they go by, owners.Later) and the paths
// apply writes itself (an earlier apply's index, OwnPaths). It only saves
// time: the data of any other file read is read again from its layer.
func ImageData(set *rules.Set) func(name string) bool {
	if set == nil {
		return nil
	}
	c := NewClassifier(set, nil)
	own := OwnPaths(set)
	configs := NewConfigFiles(set)
	return func(name string) bool {
		if own[name] || owners.IsRecord(name) || bootFiles.Reads(name) || len(set.ForbiddenBy(name, rules.TypeFile, "")) > 0 || configs.wanted(name) {
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
