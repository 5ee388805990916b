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

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// Options configures an apply.
type Options struct {
	Set    *rules.Set
	Owners *Owners
	// Epoch is the mtime of everything apply creates (SOURCE_DATE_EPOCH).
	// Nil means the newest mtime of the input, so that the output depends
	// on nothing but the input and the rules.
	Epoch *time.Time
	// LoadOwners, when set, replaces Owners by its result. ApplyDir calls
	// it while it lists the tree, so that parsing Buildroot's file list
	// (20,000 lines for a minikube target) takes no wall time of its own.
	LoadOwners func() (*Owners, error)
	// Strict ignores fallback rules: a forbidden file no package rule
	// handles stops the run (apply --strict).
	Strict bool
	// Input is the input's format, which says where its consumer puts each
	// entry (Classifier.SetInput); 0 takes the strictest view of both tar
	// and cpio.
	Input archive.Kind
}

// Report is what an apply did.
type Report struct {
	Changes    []manifest.Change
	Stale      []*rules.Rule
	Entries    int // input entries, trailers excluded
	OutEntries int
	// Resumed says ApplyDir finished a run on the tree that was killed.
	Resumed bool
}

// OffenderError lists policy violations that no rule handles; apply
// refuses to write an image that still has them.
type OffenderError struct {
	Offenders []Finding
}

func (e *OffenderError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d file(s) violate the policy and no rule handles them:", len(e.Offenders))
	for _, f := range e.Offenders {
		fmt.Fprintf(&b, "\n  %s (package %s): policy %s: %s", names.Quote(f.Path), names.Quote(f.Package), f.Policy, f.Reason)
	}
	b.WriteString("\nadd a rule for the package, or allow the path in the policy")
	return b.String()
}

// ApplyStream copies src into dst, applying the rules on the way: stripped
// entries are left out, relocated and deferred ones are written at their new
// place, and the rule set's files, templates and index are added, after all
// input entries and before the final trailer, each after its parents.
//
// Nothing is decided from a path alone that needs the whole stream: where a
// relocation lands depends on what else is in the image, so those entries
// are captured (spooled) and placed at the end.
func ApplyStream(dst archive.Writer, dest archive.Kind, src archive.Reader, opt Options, links *archive.LinkScan) (*Report, error) {
	a := &streamApplier{
		src: src,
		d:   NewDecider(opt.Set, opt.Owners, OwnPaths(opt.Set)),
		opt: opt,
		out: outSet{files: map[string]bool{}, dirs: map[string]bool{".": true}},
		own: map[string]string{},
	}
	a.d.Strict = opt.Strict
	a.d.SetInput(opt.Input)
	defer a.cleanup()
	guard := &guardWriter{Writer: dst, set: opt.Set, dirs: map[string]bool{".": true}, parentsFirst: dest.IsCpio(), view: archive.NewResolver(dest)}
	err := archive.Copy(guard, a, archive.CopyOptions{Decide: a.decide, Dest: dest, Links: links})
	if err != nil {
		return nil, err
	}
	if err := guard.Close(); err != nil {
		return nil, err
	}
	rep := &Report{Changes: a.changes, Stale: a.d.Stale(), Entries: a.entries, OutEntries: guard.entries}
	sort.SliceStable(rep.Changes, func(i, j int) bool { return rep.Changes[i].Path < rep.Changes[j].Path })
	return rep, nil
}

type outSet struct {
	files map[string]bool
	dirs  map[string]bool
}

func (o outSet) exists(p string) bool { return o.files[p] || o.dirs[p] }
func (o outSet) isDir(p string) bool  { return o.dirs[p] }

// streamApplier is an archive.Reader over the input that, after the input's
// last entry, yields the injected entries before the final trailer; its
// decide is the per-entry transform Copy asks as it reads each entry.
type streamApplier struct {
	src     archive.Reader
	d       *Decider
	opt     Options
	out     outSet
	caps    []*captured
	changes []manifest.Change
	entries int
	newest  time.Time
	prefix  string // "./" when the input's names carry it
	// maxInode is the highest inode number of an input entry that goes to
	// the output; what apply adds is numbered above it.
	maxInode uint64
	sawName  bool
	offend   []Finding

	// What an earlier apply wrote, found in the input: see planInjections.
	own      map[string]string
	oldIndex *contract.Index

	pending     *archive.Entry // read ahead past a trailer
	heldTrailer *archive.Entry
	injected    bool
	queue       []*injection
	cur         io.Reader // data of the current injected entry
}

func (a *streamApplier) cleanup() {
	for _, c := range a.caps {
		c.data.Close()
	}
}

func (a *streamApplier) Next() (*archive.Entry, error) {
	a.cur = nil
	if a.injected {
		return a.nextInjected()
	}
	for {
		var e *archive.Entry
		if a.pending != nil {
			e, a.pending = a.pending, nil
		} else {
			var err error
			e, err = a.src.Next()
			if err == io.EOF {
				if err := a.finish(); err != nil {
					return nil, err
				}
				return a.nextInjected()
			}
			if err != nil {
				return nil, err
			}
		}
		if e.Type == archive.TypeTrailer {
			// Injections go before the last trailer only; hold each trailer
			// until we know whether more members follow.
			if a.heldTrailer != nil {
				t := a.heldTrailer
				a.heldTrailer = e
				return t, nil
			}
			a.heldTrailer = e
			continue
		}
		if a.heldTrailer != nil {
			t := a.heldTrailer
			a.heldTrailer, a.pending = nil, e
			return t, nil
		}
		return e, nil
	}
}

// decide is Copy's per-entry transform, asked once for every input entry
// as Copy reads it, before Copy touches its data: the decision step, what
// the action takes out of the stream (captured or hashed data), and keep
// or drop. Entries apply adds at the end are kept.
func (a *streamApplier) decide(e *archive.Entry) (archive.Action, error) {
	if a.injected {
		return archive.Keep, nil
	}
	dec, err := a.take(e)
	if err != nil {
		return 0, err
	}
	if dec.Own {
		return archive.Drop, nil
	}
	v := dec.Verdict
	if dec.Spec != nil || v.Unhandled() {
		// An unhandled offender fails the run at the end, listed with all
		// the others; until then it must not reach the output check.
		return archive.Drop, nil
	}
	if e.Type == archive.TypeDir {
		a.out.dirs[v.Path] = true
	} else {
		a.out.files[v.Path] = true
	}
	a.maxInode = max(a.maxInode, e.Inode)
	return archive.Keep, nil
}

// take decides e and takes out of the stream what its decision needs.
func (a *streamApplier) take(e *archive.Entry) (Decision, error) {
	a.entries++
	if e.ModTime.After(a.newest) {
		a.newest = e.ModTime
	}
	if !a.sawName && e.Name != "." && e.Name != "./" {
		a.sawName = true
		if strings.HasPrefix(e.Name, "./") {
			a.prefix = "./"
		}
	}
	dec, err := a.d.Decide(e)
	if err != nil {
		return dec, err
	}
	if dec.Own {
		f, err := a.d.takeOwn(dec.Path, a.src)
		if err != nil {
			return dec, fmt.Errorf("entry %q: %w", e.Name, err)
		}
		a.own[dec.Path] = f.sum
		if f.index != nil {
			a.oldIndex = f.index
		}
		return dec, nil
	}
	v := dec.Verdict
	if v.Unhandled() {
		a.offend = append(a.offend, findingFor(v, a.opt.Owners))
	}
	switch {
	case dec.Spec == nil:
	case dec.Spec.Moves:
		if e.Type == archive.TypeHardlink || (e.Nlink > 1 && e.Type == archive.TypeRegular) {
			return dec, fmt.Errorf("entry %q: rule %s cannot %s a member of a hard-link group; strip it or break the link in the package", e.Name, v.Rule.Name, v.Rule.Action)
		}
		if e.Type == archive.TypeDir {
			return dec, fmt.Errorf("entry %q: rule %s cannot %s a directory", e.Name, v.Rule.Name, v.Rule.Action)
		}
		data, err := newSpool(a.src)
		if err != nil {
			return dec, fmt.Errorf("entry %q: %w", e.Name, err)
		}
		a.caps = append(a.caps, &captured{entry: e, verdict: v, data: data})
	default:
		ch := changeFor(e, v, a.opt.Owners)
		ch.Kind = dec.Spec.Kind
		// Hash what is removed, except a hard-link member's data, which
		// stays in the stream for the members that are kept.
		if e.Type == archive.TypeRegular && e.Nlink < 2 && e.Size > 0 {
			sum, err := digest.Reader(a.src)
			if err != nil {
				return dec, fmt.Errorf("entry %q: %w", e.Name, err)
			}
			ch.SHA256 = sum
		}
		a.changes = append(a.changes, ch)
	}
	return dec, nil
}

func (a *streamApplier) finish() error {
	a.injected = true
	if len(a.offend) > 0 {
		return &OffenderError{Offenders: a.offend}
	}
	epoch := a.newest
	if a.opt.Epoch != nil {
		epoch = *a.opt.Epoch
	}
	inj, dropped, err := planInjections(planInput{set: a.opt.Set, caps: a.caps, removed: removedOf(a.changes), out: a.out,
		epoch: epoch.UTC(), owners: a.opt.Owners, own: a.own, old: a.oldIndex, active: a.d.Active})
	if err != nil {
		return err
	}
	a.changes = append(a.changes, dropped...)
	a.changes = append(a.changes, danglingChanges(a.d)...)
	if err := numberInjections(inj, a.maxInode); err != nil {
		return err
	}
	for _, in := range inj {
		if !in.unchanged {
			a.changes = append(a.changes, in.change)
		}
		in.entry.Name = a.prefix + in.entry.Name
	}
	a.queue = inj
	return nil
}

// numberInjections gives every entry apply creates an inode number above
// max, the highest of the input entries that are written, in the order
// they are written, as GNU cpio numbers what it archives (copyout.c, with
// --reproducible: one counter, in input order). A shared number would be a
// shared (dev, inode): bsdtar takes any two entries with one and nlink >= 2
// for hard links, and `cpio --reproducible` gives `.` inode 0, which every
// directory apply created had (issue 12: bsdtar failed with "Can't create
// 'usr/share/minikube': Operation not permitted").
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

func (a *streamApplier) nextInjected() (*archive.Entry, error) {
	if len(a.queue) == 0 {
		if t := a.heldTrailer; t != nil {
			a.heldTrailer = nil
			return t, nil
		}
		return nil, io.EOF
	}
	in := a.queue[0]
	a.queue = a.queue[1:]
	r, err := in.data()
	if err != nil {
		return nil, err
	}
	a.cur = r
	return in.entry, nil
}

func (a *streamApplier) Read(p []byte) (int, error) {
	if a.injected {
		if a.cur == nil {
			return 0, io.EOF
		}
		return a.cur.Read(p)
	}
	return a.src.Read(p)
}

// removedOf is what an action that does not move took: the index records
// each with its kind.
func removedOf(changes []manifest.Change) []manifest.Change {
	var out []manifest.Change
	for _, c := range changes {
		if s := specOfKind(c.Kind); s != nil && !s.Moves {
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

// Close only checks; the caller closes the real writer.
func (g *guardWriter) Close() error { return nil }
