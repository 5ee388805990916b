package trim

import (
	"fmt"
	"io"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
)

// collector is what both appliers (ApplyStream, ApplyDir) do with each
// input entry, in input order, and what they plan from all of them once
// the last is in: the decision (Decider.Decide), what its action takes out
// of the input (an earlier apply's own files, moved files spooled,
// stripped files hashed), what the output keeps, then what apply adds
// (planInjections).
type collector struct {
	opt Options
	d   *Decider
	// inTree: the entries are a tree's (ApplyDir), where every name of a
	// hard-link group has the file's data, and errors name the cleaned
	// path; in an archive stream one member carries the group's data.
	inTree bool

	out     outSet            // what the output keeps of the input
	own     map[string]string // an earlier apply's own files: path -> sha256
	old     *contract.Index   // that apply's index
	caps    []*captured       // moved entries, spooled until the plan places them
	changes []manifest.Change
	offend  []Finding
	entries int // input entries, trailers excluded
	newest  time.Time
	// writeInPlace, set in a stream apply, writes an entry whose rule
	// judges its content (ActionSpec.Judge) at its place in the output,
	// as the rule makes it (editInPlace); a tree apply captures it
	// instead, and its writer (placeEdited) renames it over the old one.
	writeInPlace func(e *archive.Entry, data []byte) error
}

// newCollector returns the collector of an apply of opt to an input of
// kind input (0: the strictest view of tar and cpio, see SetInput).
func newCollector(opt Options, input archive.Kind) *collector {
	d := NewDecider(opt.Set, opt.Owners, OwnPaths(opt.Set))
	d.Strict = opt.Strict
	d.SetInput(input)
	return &collector{opt: opt, d: d, own: map[string]string{},
		out: outSet{files: map[string]bool{}, dirs: map[string]bool{".": true}}}
}

// close drops the spooled data of the moved entries.
func (c *collector) close() {
	for _, cp := range c.caps {
		cp.data.Close()
	}
}

// note counts e, and its mtime: what apply writes takes the newest.
func (c *collector) note(e *archive.Entry) {
	c.entries++
	if e.ModTime.After(c.newest) {
		c.newest = e.ModTime
	}
}

// decide is the decision on e. An unhandled offender is listed here: the
// run fails once the input is read, naming all of them.
func (c *collector) decide(e *archive.Entry) (Decision, error) {
	dec, err := c.d.Decide(e)
	if err != nil || dec.Skip || dec.Own {
		return dec, err
	}
	if v := dec.Verdict; v.Unhandled() {
		c.offend = append(c.offend, findingFor(v, c.opt.Owners))
	}
	return dec, nil
}

// wantsData reports whether take needs e's data for dec.
func (c *collector) wantsData(dec Decision, e *archive.Entry) bool {
	switch {
	case dec.Skip:
		return false
	case dec.Own:
		return true
	case dec.Spec == nil:
		return false
	case dec.Spec.Moves:
		return true
	}
	return c.hashed(e)
}

// hashed reports whether the data of e, which a rule removes, is hashed
// for the manifest and the index: a file's, except, in a stream, a
// hard-link member's, which stays there for the members that are kept.
func (c *collector) hashed(e *archive.Entry) bool {
	return e.Type == archive.TypeRegular && e.Size > 0 && (c.inTree || e.Nlink < 2)
}

// keeps reports whether the output keeps the entry decided dec as it is.
// An unhandled offender is not kept: until the run fails it must not
// reach the output check.
func keeps(dec Decision) bool {
	return !dec.Skip && !dec.Own && dec.Spec == nil && !dec.Verdict.Unhandled()
}

// take does what dec says with e, whose data is data when wantsData says
// it is needed (nil otherwise): keeps an earlier apply's own file's sum
// (and its index), spools what moves, records and hashes what goes, and
// notes what the output keeps.
func (c *collector) take(dec Decision, e *archive.Entry, data io.Reader) error {
	switch {
	case dec.Skip:
	case dec.Own:
		f, err := c.d.takeOwn(dec.Path, data)
		if err != nil {
			return fmt.Errorf("%s: %w", c.label(e, dec), err)
		}
		c.own[dec.Path] = f.sum
		if f.index != nil {
			c.old = f.index
		}
	case dec.Spec == nil:
		if !keeps(dec) {
			break
		}
		if e.Type == archive.TypeDir {
			c.out.dirs[dec.Path] = true
		} else {
			c.out.files[dec.Path] = true
		}
	case dec.Spec.Judge != nil && c.writeInPlace != nil:
		return c.editInPlace(dec, e, data)
	case dec.Spec.Moves:
		return c.capture(dec, e, data)
	default:
		ch := changeFor(e, dec.Verdict, c.opt.Owners)
		ch.Kind = dec.Spec.Kind
		if c.hashed(e) {
			sum, err := digest.Reader(data)
			if err != nil {
				return fmt.Errorf("%s: %w", c.label(e, dec), err)
			}
			ch.SHA256 = sum
		}
		c.changes = append(c.changes, ch)
	}
	return nil
}

// capture spools a moved entry until the plan places it.
func (c *collector) capture(dec Decision, e *archive.Entry, data io.Reader) error {
	v := dec.Verdict
	if !c.inTree && (e.Type == archive.TypeHardlink || (e.Nlink > 1 && e.Type == archive.TypeRegular)) {
		return fmt.Errorf("%s: rule %s cannot %s a member of a hard-link group; strip it or break the link in the package", c.label(e, dec), v.Rule.Name, v.Rule.Action)
	}
	if e.Type == archive.TypeDir {
		return fmt.Errorf("%s: rule %s cannot %s a directory", c.label(e, dec), v.Rule.Name, v.Rule.Action)
	}
	sp, err := newSpool(data)
	if err != nil {
		return fmt.Errorf("%s: %w", c.label(e, dec), err)
	}
	c.supersede(v.Path)
	c.caps = append(c.caps, &captured{entry: e, verdict: v, data: sp})
	return nil
}

// supersede drops an earlier capture at path: a later entry of the same
// name replaces it where the kernel unpacks them (init/initramfs.c: a
// later member of the stream, or of a later initrd segment, is written
// over the earlier), so only the later one is moved.
func (c *collector) supersede(path string) {
	for i, old := range c.caps {
		if old.verdict.Path == path {
			old.data.Close()
			c.caps = append(c.caps[:i], c.caps[i+1:]...)
			return
		}
	}
}

// label names e in an error: as a tree's path, or as the stream's entry.
func (c *collector) label(e *archive.Entry, dec Decision) string {
	if c.inTree {
		return names.Quote(dec.Path)
	}
	return fmt.Sprintf("entry %q", e.Name)
}

// offenders fails the run on the unhandled offenders, if any.
func (c *collector) offenders() error {
	if len(c.offend) > 0 {
		return &OffenderError{Offenders: c.offend}
	}
	return nil
}

// epoch is the mtime of what apply writes: SOURCE_DATE_EPOCH, else the
// newest of the input.
func (c *collector) epoch() time.Time {
	if c.opt.Epoch != nil {
		return *c.opt.Epoch
	}
	return c.newest
}

// plan lays out what apply adds (planInjections), stamped with epoch; out
// is what the output holds apart from that.
func (c *collector) plan(out tree, epoch time.Time) ([]*injection, []manifest.Change, error) {
	return planInjections(planInput{set: c.opt.Set, caps: c.caps, removed: removedOf(c.changes), out: out,
		epoch: epoch.UTC(), owners: c.opt.Owners, kept: c.out.files, own: c.own, old: c.old, active: c.d.Active})
}

// added records, after the changes of the entries, what the plan dropped,
// the links the run leaves dangling, and what it adds.
func (c *collector) added(dropped []manifest.Change, inj []*injection) {
	c.changes = append(c.changes, dropped...)
	c.changes = append(c.changes, danglingChanges(c.d)...)
	for _, in := range inj {
		if !in.unchanged {
			c.changes = append(c.changes, in.change)
		}
	}
}
