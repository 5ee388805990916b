package trim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// Options configures an apply.
type Options struct {
	Set    *rules.Set
	Owners *owners.Table
	// Epoch is the mtime of everything apply creates (SOURCE_DATE_EPOCH).
	// Nil means the newest mtime of the input, so that the output depends
	// on nothing but the input and the rules.
	Epoch *time.Time
	// LoadOwners, when set, replaces Owners by its result. ApplyDir calls
	// it while it lists the tree, so that parsing Buildroot's file list
	// (20,000 lines for a minikube target) takes no wall time of its own.
	LoadOwners func() (*owners.Table, error)
	// Strict ignores fallback rules: a forbidden file no package rule
	// handles stops the run (apply --strict).
	Strict bool
	// Input is the input's format, which says where its consumer puts each
	// entry (Classifier.SetInput); 0 takes the strictest view of both tar
	// and cpio.
	Input archive.Kind
	// Dpkg, the input's name, takes the owners (in place of Owners) from
	// the input's own records as it streams by (owners.Later): each entry
	// is written as the owners read so far say, and judged again once
	// they are all in (settle). Where that may differ, ErrOwnersLate.
	Dpkg string
}

// ErrOwnersLate: a stream apply with Options.Dpkg failed where an owner
// read after an entry may decide it; ApplyOwnersLater reads them first.
var ErrOwnersLate = errors.New("an owner read after an entry may decide what becomes of it")

// errOwnersDecide: once the owners were all in, an entry would have been
// kept, dropped or taken otherwise than it was.
var errOwnersDecide = errors.New("an owner read after an entry decides what becomes of it")

// maxSeen bounds the headers (about 0.4 KiB each) a stream apply with
// Options.Dpkg holds, so that memory does not grow with the entries
// (TestMillionEntries); kicbase has a few tens of thousands.
const maxSeen = 200_000

// ApplyOwnersLater runs an apply (run) with opt.Dpkg, in one read, and
// where that fails with ErrOwnersLate, again with the owners read first
// (load: owners.Load). Any other error, a corrupt input's, is the first
// run's: a second would meet it again.
func ApplyOwnersLater(opt Options, load func() (*owners.DB, error), run func(Options) (*Report, error)) (*Report, error) {
	rep, err := run(opt)
	if opt.Dpkg == "" || !errors.Is(err, ErrOwnersLate) {
		return rep, err
	}
	db, err := load()
	if err != nil {
		return nil, err
	}
	opt.Dpkg, opt.Owners = "", db.Table()
	if rep, err = run(opt); err == nil {
		rep.Dpkg = db
	}
	return rep, err
}

// Report is what an apply did.
type Report struct {
	Changes    []manifest.Change
	Stale      []*rules.Rule
	Entries    int // input entries, trailers excluded
	OutEntries int
	// Resumed says ApplyDir finished a run on the tree that was killed.
	Resumed bool
	// Dpkg is the database the owners came from with Options.Dpkg; nil
	// if the input has none.
	Dpkg *owners.DB
}

// OffenderError lists policy violations that no rule handles; apply
// refuses to write an image that still has them. In a container image
// each names the layer that added its file (Finding.Layer, WithLayers).
type OffenderError struct {
	Offenders []Finding
}

func (e *OffenderError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d file(s) violate the policy and no rule handles them:", len(e.Offenders))
	for _, f := range e.Offenders {
		fmt.Fprintf(&b, "\n  %s (package %s): policy %s: %s", names.Quote(f.Path), names.Quote(f.Package), f.Policy, f.Reason)
		if f.Layer != nil {
			fmt.Fprintf(&b, " [%s]", f.Layer.Note())
		}
	}
	b.WriteString("\nadd a rule for the package, or allow the path in the policy")
	return b.String()
}

// WithLayers sets, on the offenders of err (an *OffenderError), the layer
// of img that added each one's file, as audit does; err is returned.
func WithLayers(err error, img *ociimage.Image) error {
	var oe *OffenderError
	if img != nil && errors.As(err, &oe) {
		for i := range oe.Offenders {
			if p := oe.Offenders[i].Path; p != "" {
				oe.Offenders[i].Layer = img.LayerOf(p)
			}
		}
	}
	return err
}

// ApplyStream copies src into dst, applying the rules on the way: stripped
// entries are left out, relocated and deferred ones are written at their new
// place, and the rule set's files, templates and index are added, after all
// input entries and before the final trailer, each after its parents.
//
// Nothing is decided from a path alone that needs the whole stream: where a
// relocation lands depends on what else is in the image, so those entries
// are captured (spooled) and placed at the end.
//
// One way, as u-root's pkg/cpio writes an initramfs on a base archive:
// archive.Copy reads the input up to its last trailer (a TrailerReader),
// asks the applier about each entry and hands it the data of what it takes;
// then come what apply adds, then that trailer (applySource).
func ApplyStream(dst archive.Writer, dest archive.Kind, src archive.Reader, opt Options, links *archive.LinkScan) (*Report, error) {
	var tee *ownersTee
	if opt.Dpkg != "" {
		tee = &ownersTee{Reader: src, later: owners.NewLater[*seenEntry](opt.Dpkg, maxSeen)}
		src, opt.Owners = tee, tee.later.Owners()
	}
	a := &streamApplier{collector: newCollector(opt, opt.Input), tee: tee}
	defer func() { // settle may have put another collector in place
		a.close()
		if tee != nil {
			closeSeen(tee.later.Release())
		}
	}()
	in := &applySource{in: archive.NewTrailerReader(src), add: a.finish}
	decide := func(e *archive.Entry) (archive.Action, error) {
		if in.adding {
			return archive.Keep, nil // what apply adds
		}
		return a.decide(e)
	}
	guard := &guardWriter{Writer: dst, set: opt.Set, dirs: map[string]bool{".": true}, parentsFirst: dest.IsCpio(), view: archive.NewResolver(dest)}
	a.writeInPlace = func(e *archive.Entry, data []byte) error {
		if err := guard.WriteHeader(e); err != nil {
			return err
		}
		_, err := guard.Write(data)
		return err
	}
	err := archive.Copy(guard, in, archive.CopyOptions{Decide: decide, Take: a.takeData, Dest: dest, Links: links})
	if err != nil {
		return nil, a.late(err)
	}
	if err := guard.Close(); err != nil {
		return nil, err
	}
	rep := &Report{Changes: a.changes, Stale: a.d.Stale(), Entries: a.entries, OutEntries: guard.entries, Dpkg: a.db}
	sort.SliceStable(rep.Changes, func(i, j int) bool { return rep.Changes[i].Path < rep.Changes[j].Path })
	return rep, nil
}

// ApplyEntries is ApplyStream as the Transform of container.Rewrite, in
// the formats it chose (the input's, as opt.Input, and the output's).
func ApplyEntries(e container.Entries, opt Options) (*Report, error) {
	opt.Input = e.InFormat.Kind
	return ApplyStream(e.Out, e.OutFormat.Kind, e.In, opt, e.Links)
}

type outSet struct {
	files map[string]bool
	dirs  map[string]bool
}

func (o outSet) exists(p string) bool { return o.files[p] || o.dirs[p] }
func (o outSet) isDir(p string) bool  { return o.dirs[p] }

// streamApplier is the per-entry transform of a stream apply: Copy asks
// decide about each input entry before it touches the data, and gives
// takeData the data of the entries decide takes.
type streamApplier struct {
	*collector
	prefix  string // "./" when the input's names carry it
	sawName bool
	// maxInode is the highest inode number of an input entry that goes to
	// the output; what apply adds is numbered above it.
	maxInode uint64
	// taking is the decision on the entry decide said to take: Copy hands
	// over its data next.
	taking Decision
	// seen is what was done with the entry decide last held (Options.Dpkg).
	seen *seenEntry
	// tee gathers the owners as the input goes by (Options.Dpkg) and holds
	// what was done with each entry; db is its database once settled.
	tee     *ownersTee
	db      *owners.DB
	settled bool
}

// ownersTee reads the input on to the applier through later; failed: a
// read of the input failed.
type ownersTee struct {
	archive.Reader
	later  *owners.Later[*seenEntry]
	data   io.Reader // the current entry's
	failed bool
}

func (t *ownersTee) Next() (*archive.Entry, error) {
	e, err := t.Reader.Next()
	if err == nil {
		t.data, err = t.later.Entry(e, t.Reader)
	}
	t.failed = t.failed || err != nil && err != io.EOF
	return e, err
}

func (t *ownersTee) Read(p []byte) (int, error) {
	n, err := t.data.Read(p)
	t.failed = t.failed || err != nil && err != io.EOF
	return n, err
}

// late marks err ErrOwnersLate where reading the owners first may do
// otherwise: before they are all in, unless reading the input failed.
func (a *streamApplier) late(err error) error {
	if a.tee == nil || !errors.Is(err, owners.ErrTooMany) && (a.settled || a.tee.failed) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrOwnersLate, err)
}

// decide is asked once for every input entry: the decision step, then
// keep it, drop it, or take its data (takeData).
func (a *streamApplier) decide(e *archive.Entry) (archive.Action, error) {
	a.note(e)
	if !a.sawName && e.Name != "." && e.Name != "./" {
		a.sawName = true
		if strings.HasPrefix(e.Name, "./") {
			a.prefix = "./"
		}
	}
	dec, err := a.collector.decide(e)
	if err != nil {
		return 0, err
	}
	act := a.action(dec, e)
	if a.tee != nil {
		// Judged again once the owners are all known (settle).
		a.seen = &seenEntry{entry: e.Clone(), act: act}
		if err := a.tee.later.Hold(a.seen); err != nil {
			return 0, err
		}
	}
	switch {
	case act == archive.Take:
		a.taking = dec
	case a.tee == nil:
		if err := a.take(dec, e, nil); err != nil {
			return 0, err
		}
	}
	if act == archive.Keep || dec.Spec != nil && dec.Spec.Judge != nil {
		a.maxInode = max(a.maxInode, e.Inode)
	}
	return act, nil
}

// action is what Copy does with an entry decided dec.
func (c *collector) action(dec Decision, e *archive.Entry) archive.Action {
	switch {
	case c.wantsData(dec, e):
		return archive.Take
	case !keeps(dec):
		return archive.Drop
	}
	return archive.Keep
}

func (a *streamApplier) takeData(e *archive.Entry, data io.Reader) error {
	if a.tee == nil {
		return a.take(a.taking, e, data)
	}
	sp, err := newSpool(data)
	if err != nil {
		return fmt.Errorf("entry %q: %w", e.Name, err)
	}
	a.seen.data = sp
	if spec := a.taking.Spec; spec != nil && spec.Judge != nil {
		// Written now, at its place, as its rule makes it with the
		// owners known so far: settle holds the rule to that.
		rd, err := sp.Reader()
		if err != nil {
			return err
		}
		a.seen.editedBy = editedBy(a.taking)
		return a.take(a.taking, e, rd)
	}
	return nil
}

// seenEntry is an entry of a stream apply that reads the owners as it goes
// (Options.Dpkg): its header, what was done with it, and its data if it
// was taken.
type seenEntry struct {
	entry *archive.Entry
	act   archive.Action
	data  *spool
	// editedBy is the rule that edited the entry in place as it came
	// (writeInPlace): the owners of the whole database must give it the
	// same one, and none to an entry not edited so.
	editedBy *rules.Rule
}

// finish plans what apply adds, once the input's last entry is in.
func (a *streamApplier) finish() ([]*injection, error) {
	if err := a.settle(); err != nil {
		return nil, err
	}
	a.settled = true
	if err := a.offenders(); err != nil {
		return nil, err
	}
	inj, dropped, err := a.plan(a.out, a.epoch())
	if err != nil {
		return nil, err
	}
	if err := numberInjections(inj, a.maxInode); err != nil {
		return nil, err
	}
	a.added(dropped, inj)
	for _, in := range inj {
		in.entry.Name = a.prefix + in.entry.Name
	}
	return inj, nil
}

// settle judges every entry of an Options.Dpkg apply again, in order,
// with the owners of the whole database (taken data from its spool): the
// records are theirs, and an entry they would take another way (kept,
// dropped or taken) is errOwnersDecide.
func (a *streamApplier) settle() error {
	if a.tee == nil {
		return nil
	}
	db, err := a.tee.later.Done()
	if err != nil {
		return err
	}
	a.db = db
	opt := a.opt
	opt.Owners = a.db.Table()
	c := newCollector(opt, opt.Input)
	c.entries, c.newest = a.entries, a.newest
	c.writeInPlace = func(*archive.Entry, []byte) error { return nil } // written as it came
	seen := a.tee.later.Release()
	defer closeSeen(seen)
	for _, s := range seen {
		dec, err := c.decide(s.entry)
		if err != nil {
			c.close()
			return err
		}
		if c.action(dec, s.entry) != s.act || s.editedBy != editedBy(dec) {
			c.close()
			return errOwnersDecide
		}
		var data io.Reader
		if s.data != nil {
			if data, err = s.data.Reader(); err != nil {
				c.close()
				return err
			}
		}
		if err := c.take(dec, s.entry, data); err != nil {
			c.close()
			return err
		}
	}
	a.collector.close()
	a.collector = c
	return nil
}

// editedBy is the rule that edits an entry decided dec in place
// (ActionSpec.Judge), nil for none.
func editedBy(dec Decision) *rules.Rule {
	if dec.Spec == nil || dec.Spec.Judge == nil {
		return nil
	}
	return dec.Verdict.Rule
}

func closeSeen(seen []*seenEntry) {
	for _, s := range seen {
		if s.data != nil {
			s.data.Close()
		}
	}
}

// applySource is what Copy reads in a stream apply: the input up to its
// last trailer, then what apply adds (planned by add when the input
// ends), then that trailer.
type applySource struct {
	in     *archive.TrailerReader
	add    func() ([]*injection, error)
	adding bool // the input is done: the entries now are apply's
	queue  []*injection
	cur    io.Reader // data of the current added entry
	ended  bool
}

func (s *applySource) Next() (*archive.Entry, error) {
	s.cur = nil
	if !s.adding {
		e, err := s.in.Next()
		if err != io.EOF {
			return e, err
		}
		s.adding = true
		if s.queue, err = s.add(); err != nil {
			return nil, err
		}
	}
	if len(s.queue) == 0 {
		if t := s.in.Trailer(); t != nil && !s.ended {
			s.ended = true
			return t, nil
		}
		return nil, io.EOF
	}
	in := s.queue[0]
	s.queue = s.queue[1:]
	r, err := in.data()
	if err != nil {
		return nil, err
	}
	s.cur = r
	return in.entry, nil
}

func (s *applySource) Read(p []byte) (int, error) {
	if !s.adding {
		return s.in.Read(p)
	}
	if s.cur == nil {
		return 0, io.EOF
	}
	return s.cur.Read(p)
}

// numberInjections gives every entry apply creates an inode number above
// max, the highest of the input entries that are written, in the order
// they are written, as GNU cpio numbers what it archives (copyout.c, with
// --reproducible: one counter, in input order). A shared number would be a
// shared (dev, inode): bsdtar takes any two entries with one and nlink >= 2
// for hard links, and `cpio --reproducible` gives `.` inode 0.
//
// Relocated and deferred files keep the input's number: their entry at
// the old place is dropped. The index, templates and added files come
// last, so that a run on an applied image, which keeps the first run's
// directories and drops and writes again the rest, gives them the same
// numbers and the same bytes.
func numberInjections(inj []*injection, maxInode uint64) error {
	next := maxInode + 1
	for _, in := range inj {
		if in.captured {
			continue
		}
		if next > math.MaxUint32 {
			return fmt.Errorf("the input uses inode numbers up to %d: none is left for %s", maxInode, in.entry.Name)
		}
		in.entry.Inode = next
		next++
	}
	return nil
}

// removedOf is what an action that does not move took: the index records
// each with its kind.
func removedOf(changes []manifest.Change) []manifest.Change {
	var out []manifest.Change
	for _, c := range changes {
		if s := specOfKind(c.Kind); s != nil && (!s.Moves || s.Judge != nil) {
			out = append(out, c)
		}
	}
	return out
}

// guardWriter re-checks what apply actually writes, independently of the
// decisions that led there: nothing the policy forbids, at its name or
// where the output's consumer puts it (what apply drops can let a later
// symlink replace a directory that was not empty in the input), no tar
// entry beneath a symlink, and, for cpio (the initramfs), every parent
// directory before its children, since the kernel drops orphans silently.
// Package tarballs often have no directory entries at all, so tar output
// is not held to that.
type guardWriter struct {
	archive.Writer
	set          *rules.Set
	dirs         map[string]bool
	parentsFirst bool
	entries      int
	view         *archive.Resolver
}

var errGuard = errors.New("output check failed")

func (g *guardWriter) WriteHeader(e *archive.Entry) error {
	land, err := g.view.Resolve(e)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", errGuard, names.Quote(e.Name), err)
	}
	if e.Type != archive.TypeTrailer {
		name, err := pathx.Clean(e.Name)
		if err != nil {
			return fmt.Errorf("%w: %v", errGuard, err)
		}
		if hits := g.set.ForbiddenBy(name, EntryType(e.Type), e.Linkname); len(hits) > 0 {
			return fmt.Errorf("%w: %s is still in the output, which policy %s forbids", errGuard, names.Quote(name), hits[0].Name)
		}
		if at := land.Path; at != "" && at != name {
			if hits := g.set.ForbiddenBy(at, EntryType(e.Type), e.Linkname); len(hits) > 0 {
				return fmt.Errorf("%w: %s lands at %s (%s), which policy %s forbids", errGuard, names.Quote(name), names.Quote(at), strings.Join(land.Via, ", "), hits[0].Name)
			}
		}
		if g.parentsFirst && name != "." && !g.dirs[path.Dir(name)] {
			return fmt.Errorf("%w: %s is written before its parent directory", errGuard, names.Quote(name))
		}
		if e.Type == archive.TypeDir {
			g.dirs[name] = true
		}
		g.entries++
	}
	return g.Writer.WriteHeader(e)
}

// Discards passes on the real writer's archive.Discarder.
func (g *guardWriter) Discards() bool { return archive.Discards(g.Writer) }

// Close only checks; the caller closes the real writer.
func (g *guardWriter) Close() error { return nil }
