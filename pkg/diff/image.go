package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// Input is one side of an image diff.
type Input struct {
	Path   string
	Source container.Source // opens it
	// Owners: who installed what (nil: unknown), as audit takes them.
	Owners *owners.Table
	// OwnersNote says where Owners came from, "" for flags or nothing.
	OwnersNote string
	// Dpkg takes the owners from the input's own dpkg database (or an
	// applied image's index), gathered in the one pass that reads it
	// (trim.Recording), instead of Owners; Note then says where they came
	// from, from the database found (nil for none).
	Dpkg bool
	Note func(db *owners.DB) string
}

// Options configures Images.
type Options struct {
	Set *rules.Set
	// Wrap, if set, wraps each input's reader (the CLI's interrupt check).
	Wrap func(archive.Reader) archive.Reader
}

// entry is what is kept of one path while the inputs are read: the
// fields a Record shows, unformatted, and what the rules made of it.
type entry struct {
	typ      archive.Type
	mode     uint32
	uid, gid int
	size     int64
	// link is a symlink's target or the path a hard link names.
	link string
	// rdev is a device node's major and minor.
	rdev [2]uint32
	// xattrs are the extended attributes as read (nil for none).
	xattrs map[string]string
	// sum is the raw sha256 of the data, hex only in the Result.
	sum    [sha256.Size]byte
	hasSum bool
	// file is the regular file the path is a name of at the end
	// (archive.Landing.File), 0 for none: its content, mode and owner
	// are the file's, whichever entry wrote them.
	file uint32
	// forbid: the policy forbids the path or a rule matches it; deferred:
	// deferred content; rule: the rule that matched.
	forbid, deferred bool
	rule             *rules.Rule
}

// side is one input, read.
type side struct {
	src      Source
	owners   *owners.Table
	entries  map[string]*entry
	findings []trim.Finding
	// indexRule maps a deferred copy's path to its rule, from an applied
	// image's index.
	indexRule  map[string]*rules.Rule
	classifier *trim.Classifier
	// files are the regular files by number, as the last entry that
	// wrote each left it: every name of a hard-link group shows them, and
	// in a cpio stream so does a name of the group that a later regular
	// file of another name was written over in place.
	files map[uint32]*entry
}

// Images diffs two trees or archives. Each is read once, front to back.
func Images(opt Options, old, new Input) (*Result, error) {
	a, err := readSide(opt, old)
	if err != nil {
		return nil, err
	}
	b, err := readSide(opt, new)
	if err != nil {
		return nil, err
	}
	// Stale rules are judged per input, as `audit OLD` and `audit NEW`
	// would: a rule that protects nothing in NEW but did in OLD is a new
	// stale rule.
	for _, s := range []*side{a, b} {
		for _, f := range trim.StaleFindings(opt.Set, []*trim.Classifier{s.classifier}) {
			f.Input = s.src.Path
			s.findings = append(s.findings, f)
		}
	}
	var bl builder
	for p, eb := range b.entries {
		ea := a.entries[p]
		if ea == nil {
			bl.addFile(b, p, File{Change: Added, New: eb.record()}, nil, eb)
			continue
		}
		ra, rb := ea.record(), eb.record()
		if what := compareRecords(ra, rb); len(what) > 0 {
			bl.addFile(b, p, File{Change: Changed, What: what, Old: ra, New: rb}, ea, eb)
		}
	}
	for p, ea := range a.entries {
		if b.entries[p] == nil {
			bl.addFile(a, p, File{Change: Removed, Old: ea.record()}, ea, nil)
		}
	}
	bl.compareFindings(a.findings, b.findings)
	return bl.result(a.src, b.src), nil
}

// addFile files f under its owner on side s (the new side, unless the
// file was removed).
func (b *builder) addFile(s *side, path string, f File, old, new *entry) {
	f.Path, f.Capability = path, capabilityChange(f)
	for _, e := range []*entry{old, new} {
		if e == nil {
			continue
		}
		f.Forbidden = f.Forbidden || e.forbid
		f.Deferred = f.Deferred || e.deferred
		if e.rule != nil {
			f.Rule, f.pos = e.rule.Name, e.rule.Pos
		}
	}
	if r := s.indexRule[path]; r != nil && f.Rule == "" {
		f.Rule, f.pos = r.Name, r.Pos
	}
	p := b.pkg(s.owner(path))
	p.Files = append(p.Files, f)
}

// owner is the package to file path under: an applied image's index
// names the rule, and so the package, of each deferred copy.
func (s *side) owner(path string) string {
	if r := s.indexRule[path]; r != nil {
		return r.Package
	}
	return s.owners.Owner(path)
}

func (e *entry) record() *Record {
	r := &Record{Type: e.typ.String(), Mode: fmt.Sprintf("%04o", e.mode), UID: e.uid, GID: e.gid, Size: e.size, Link: e.link,
		Xattrs: archive.XattrsText(e.xattrs)}
	if e.hasSum {
		r.SHA256 = hex.EncodeToString(e.sum[:])
	}
	if e.typ == archive.TypeChar || e.typ == archive.TypeBlock {
		r.Device = fmt.Sprintf("%d,%d", e.rdev[0], e.rdev[1])
	}
	return r
}

// readSide reads one input once through audit's per-entry step, hashing
// each entry's data in the same pass; with owners from the input's own
// database, the entries are judged once it is in (trim.Recording).
func readSide(opt Options, in Input) (*side, error) {
	src, err := in.Source()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var r archive.Reader = src
	if opt.Wrap != nil {
		r = opt.Wrap(src)
	}
	kind := "archive"
	if src.Format.Kind == archive.KindDir {
		kind = "tree"
	}
	s := &side{src: Source{Path: in.Path, Kind: kind, Format: src.Format.String(), Owners: in.OwnersNote},
		owners: in.Owners, entries: map[string]*entry{}, files: map[uint32]*entry{}}
	var rec *trim.Recording
	var a *trim.Auditor
	var step func(*archive.Entry, io.Reader) (trim.Decision, error)
	if in.Dpkg {
		rec = trim.NewRecording(opt.Set, in.Path, src.Format.Kind)
		step = func(e *archive.Entry, data io.Reader) (trim.Decision, error) {
			return trim.Decision{Skip: e.Type == archive.TypeTrailer}, rec.Entry(e, data)
		}
	} else {
		a = trim.NewAuditor(opt.Set, trim.AuditInput{Path: in.Path, Owners: in.Owners}, src.Format.Kind)
		step = a.Entry
	}
	var pending []*entry // recorded: each entry's record, judged at the end
	h := sha256.New()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Path, err)
		}
		ent, dec, err := readEntry(step, e, r, h)
		if rec != nil {
			pending = append(pending, ent)
		} else if ent != nil && err == nil {
			err = s.decided(ent, e, dec)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", in.Path, names.Quote(e.Name), err)
		}
	}
	if rec != nil {
		// Judged once the owners are in, from the input's database.
		db, err := rec.Done()
		if err != nil {
			return nil, err
		}
		s.owners = db.Table()
		if in.Note != nil {
			s.src.Owners = in.Note(db)
		}
		a, err = rec.Judge(opt.Set, trim.AuditInput{Path: in.Path, Owners: s.owners}, func(i int, e *archive.Entry, dec trim.Decision) error {
			if pending[i] == nil || dec.Skip {
				return nil
			}
			if err := s.decided(pending[i], e, dec); err != nil {
				return fmt.Errorf("%s: %s: %w", in.Path, names.Quote(e.Name), err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	s.finish(a, opt.Set)
	return s, nil
}

// readEntry hands e to the audit step (step: the recording's, whose
// decision comes once the owners are in, or the auditor's) and hashes its
// data; nil for a trailer.
func readEntry(step func(*archive.Entry, io.Reader) (trim.Decision, error), e *archive.Entry, r io.Reader, h hash.Hash) (*entry, trim.Decision, error) {
	h.Reset()
	dec, err := step(e, io.TeeReader(r, h))
	if err != nil || dec.Skip {
		return nil, dec, err
	}
	ent, err := newEntry(e, r, h)
	return ent, dec, err
}

// newEntry is e's record, its data hashed: h has what was read of it,
// the rest is read here.
func newEntry(e *archive.Entry, r io.Reader, h hash.Hash) (*entry, error) {
	if e.Type == archive.TypeRegular {
		// What the audit step left unread (all but an index).
		if _, err := io.Copy(h, r); err != nil {
			return nil, err
		}
	}
	ent := &entry{typ: e.Type, mode: e.Mode, uid: e.UID, gid: e.GID, size: e.Size, xattrs: e.Xattrs}
	var err error
	switch e.Type {
	case archive.TypeRegular:
		h.Sum(ent.sum[:0])
		ent.hasSum = true
	case archive.TypeSymlink:
		ent.link = e.Linkname
	case archive.TypeHardlink:
		if ent.link, err = pathx.Clean(e.Linkname); err != nil {
			ent.link = e.Linkname
		}
	case archive.TypeChar, archive.TypeBlock:
		ent.rdev = [2]uint32{e.RdevMajor, e.RdevMinor}
	}
	return ent, nil
}

// decided files ent under its path with what the audit step made of it.
func (s *side) decided(ent *entry, e *archive.Entry, dec trim.Decision) error {
	p := dec.Path
	if p == "" {
		var err error
		if p, err = pathx.Clean(e.Name); err != nil {
			return err
		}
	}
	ent.file = dec.File
	if e.Type == archive.TypeRegular {
		s.wrote(ent, dec.Data)
	}
	if v := dec.Verdict; v != nil {
		ent.forbid = v.Offending() && v.Kept == nil
		ent.rule = v.Rule
		ent.deferred = dec.Spec != nil && dec.Spec.LocksContent
	}
	if dec.Own {
		// The index lists every deferred copy and the policy: when it
		// changes, what the boot step does changes.
		ent.forbid = true
	}
	ent.deferred = ent.deferred || strings.HasPrefix(p, contract.Dir+"/deferred/")
	// As extraction does, a later entry of the same path wins.
	s.entries[p] = ent
	return nil
}

// wrote notes what a regular entry did to its file (init/initramfs.c
// do_name): its mode and owner (fchmod, fchown), and its data when it is
// the file's content from here on (data).
func (s *side) wrote(ent *entry, data bool) {
	if ent.file == 0 {
		return
	}
	f := s.files[ent.file]
	if f == nil {
		f = &entry{}
		s.files[ent.file] = f
	}
	f.mode, f.uid, f.gid, f.xattrs = ent.mode, ent.uid, ent.gid, ent.xattrs
	if data {
		f.sum, f.size, f.hasSum = ent.sum, ent.size, true
	}
}

// finish gives every name of a file that file's content, mode and owner
// as the last entries left them, and takes the findings and the index
// from the audit step.
func (s *side) finish(a *trim.Auditor, set *rules.Set) {
	for _, ent := range s.entries {
		f := s.files[ent.file]
		switch {
		case f == nil:
		case ent.typ == archive.TypeRegular:
			ent.mode, ent.uid, ent.gid, ent.xattrs = f.mode, f.uid, f.gid, f.xattrs
			if f.hasSum {
				ent.sum, ent.size = f.sum, f.size
			}
		case ent.typ == archive.TypeHardlink && f.hasSum:
			ent.sum, ent.hasSum, ent.size, ent.xattrs = f.sum, true, f.size, f.xattrs
		}
	}
	s.src.Entries = a.Entries
	s.findings = a.Findings()
	s.classifier = a.Classifier()
	if a.Index == nil {
		return
	}
	s.indexRule = map[string]*rules.Rule{}
	for _, f := range a.Index.Files {
		if r := set.RuleNamed(f.Name); r != nil && f.Kind == contract.Deferred {
			s.indexRule[f.Source] = r
		}
	}
}
