package trim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// ApplyDir applies the rules to a directory tree in place, as a Buildroot
// post-build script does with the target directory.
//
// Everything is decided before anything changes: a tree with a new offender
// is left exactly as it was. Then new files are written (each to a
// temporary name, renamed into place) before anything is removed, so an
// interrupted run leaves at worst a file in both places, which the next run
// completes. Every path goes through os.Root: a symlink in the tree can
// never make apply touch anything outside it. Directories whose contents
// change keep their mtimes.
//
// Cancelling ctx stops the run while it is still reading and deciding, when
// nothing has changed yet; once writing has begun the run finishes, so the
// tree is never left half-applied by an interrupt.
func ApplyDir(ctx context.Context, root string, opt Options, dryRun bool) (*Report, error) {
	fsRoot, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer fsRoot.Close()
	// Only the entries a rule touches need an lstat when no other entry's
	// mtime matters: the rest of the tree is read from its directory
	// listings, like `find -type f` (make bench: apply-dir). Without
	// SOURCE_DATE_EPOCH what apply writes takes the newest mtime of the
	// tree, which needs every entry's. A target that an earlier apply
	// trimmed (its index is there) usually needs nothing written, so it is
	// listed by name and the mtimes are read only if something must be.
	_, indexErr := fsRoot.Lstat(contract.IndexPath)
	namesOnly := opt.Epoch != nil || indexErr == nil
	type loaded struct {
		owners *Owners
		err    error
	}
	var ownersDone chan loaded
	if opt.LoadOwners != nil {
		ownersDone = make(chan loaded, 1)
		go func() {
			o, err := opt.LoadOwners()
			ownersDone <- loaded{o, err}
		}()
	}
	r, err := archive.NewDirReaderWith(root, archive.DirReaderOptions{NamesOnly: namesOnly})
	if ownersDone != nil {
		// Waited for even when the listing failed: a bad file list is the
		// error to report first, as it was when owners came first.
		l := <-ownersDone
		if l.err != nil {
			if r != nil {
				r.Close()
			}
			return nil, l.err
		}
		opt.Owners = l.owners
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()

	d := NewDecider(opt.Set, opt.Owners, OwnPaths(opt.Set))
	out := &dirTree{outSet: outSet{files: map[string]bool{}, dirs: map[string]bool{".": true}}, root: fsRoot}
	own := map[string]string{}
	var oldIndex *contract.Index
	var caps []*captured
	var removals []*removal
	var offenders []Finding
	rep := &Report{}
	newest := time.Time{}
	defer func() {
		for _, c := range caps {
			c.data.Close()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		rep.Entries++
		if e.ModTime.After(newest) {
			newest = e.ModTime
		}
		dec, err := d.Decide(e)
		if err != nil {
			return nil, err
		}
		if dec.Skip {
			continue
		}
		name := dec.Path
		if dec.Own {
			if err := r.Stat(e); err != nil {
				return nil, err
			}
			f, err := d.takeOwn(name, r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", names.Quote(name), err)
			}
			own[name] = f.sum
			if f.index != nil {
				oldIndex = f.index
			}
			continue
		}
		v := dec.Verdict
		if v.Unhandled() {
			offenders = append(offenders, findingFor(v, opt.Owners))
		}
		if dec.Spec != nil {
			if err := r.Stat(e); err != nil {
				return nil, err
			}
		}
		switch {
		case dec.Spec != nil && !dec.Spec.Moves:
			ch := changeFor(e, v, opt.Owners)
			ch.Kind = dec.Spec.Kind
			if e.Type == archive.TypeRegular && e.Size > 0 {
				sp, err := newSpool(r)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", names.Quote(name), err)
				}
				ch.SHA256 = sp.sum
				sp.Close()
			}
			rep.Changes = append(rep.Changes, ch)
			if !v.Inherited {
				removals = append(removals, &removal{path: name, dir: e.Type == archive.TypeDir})
			}
		case dec.Spec != nil:
			if e.Type == archive.TypeDir {
				return nil, fmt.Errorf("%s: rule %s cannot %s a directory", names.Quote(name), v.Rule.Name, v.Rule.Action)
			}
			sp, err := newSpool(r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", names.Quote(name), err)
			}
			caps = append(caps, &captured{entry: e, verdict: v, data: sp})
			removals = append(removals, &removal{path: name})
		default:
			if e.Type == archive.TypeDir {
				out.dirs[name] = true
			} else {
				out.files[name] = true
			}
		}
	}
	if len(offenders) > 0 {
		return nil, &OffenderError{Offenders: offenders}
	}
	// Listed by name, the mtimes of all but the entries a rule touched are
	// unknown: the plan is made without them, and made again with the
	// newest of the whole tree if it writes anything. Nothing else in the
	// plan depends on the epoch.
	epoch := newest
	if opt.Epoch != nil {
		epoch = *opt.Epoch
	}
	lazyEpoch := opt.Epoch == nil && namesOnly
	// A relocation that an interrupted run already wrote is complete, not
	// a collision: let the plan see the destination as absent when it
	// holds the very same bytes, and write it again.
	for _, c := range caps {
		if c.verdict.Rule.Action != rules.Relocate {
			continue
		}
		dest := relocationDest(c.verdict)
		if out.files[dest] && out.sum(dest) == c.data.sum {
			delete(out.files, dest)
		}
	}
	plan := func() ([]*injection, []manifest.Change, error) {
		return planInjections(planInput{set: opt.Set, caps: caps, removed: removedOf(rep.Changes), out: out, epoch: epoch.UTC(),
			owners: opt.Owners, own: own, old: oldIndex, active: d.Active})
	}
	inj, dropped, err := plan()
	if err != nil {
		return nil, err
	}
	if lazyEpoch && !dryRun && writesAny(inj) {
		if epoch, err = newestMtime(root); err != nil {
			return nil, err
		}
		if inj, dropped, err = plan(); err != nil {
			return nil, err
		}
	}
	rep.Changes = append(rep.Changes, dropped...)
	for _, in := range inj {
		if !in.unchanged {
			rep.Changes = append(rep.Changes, in.change)
		}
	}
	sort.SliceStable(rep.Changes, func(i, j int) bool { return rep.Changes[i].Path < rep.Changes[j].Path })
	rep.Stale = d.Stale()
	if dryRun {
		return rep, nil
	}

	times := &dirTimes{root: fsRoot, saved: map[string]time.Time{}}
	for _, in := range inj {
		if in.unchanged {
			continue
		}
		times.save(path.Dir(in.entry.Name))
		if err := writeInjection(fsRoot, in); err != nil {
			return nil, fmt.Errorf("writing %s: %w", names.Quote(in.entry.Name), err)
		}
	}
	for _, rm := range removals {
		times.save(path.Dir(rm.path))
		if err := fsRoot.RemoveAll(rm.path); err != nil {
			return nil, fmt.Errorf("removing %s: %w", names.Quote(rm.path), err)
		}
	}
	if err := times.restore(); err != nil {
		return nil, err
	}
	rep.OutEntries = rep.Entries // recounted by callers that need it
	return rep, nil
}

func writesAny(inj []*injection) bool {
	for _, in := range inj {
		if !in.unchanged {
			return true
		}
	}
	return false
}

// newestMtime is the newest mtime of any entry in the tree at root: what
// apply gives the files it writes when SOURCE_DATE_EPOCH is unset.
func newestMtime(root string) (time.Time, error) {
	r, err := archive.NewDirReaderWith(root, archive.DirReaderOptions{})
	if err != nil {
		return time.Time{}, err
	}
	defer r.Close()
	var newest time.Time
	for {
		e, err := r.Next()
		if err == io.EOF {
			return newest, nil
		}
		if err != nil {
			return time.Time{}, err
		}
		if e.ModTime.After(newest) {
			newest = e.ModTime
		}
	}
}

type removal struct {
	path string
	dir  bool
}

// dirTree is the tree as apply will leave it, for planning.
type dirTree struct {
	outSet
	root *os.Root
}

func (t *dirTree) sum(p string) string {
	f, err := t.root.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	sp, err := newSpool(f)
	if err != nil {
		return ""
	}
	sp.Close()
	return sp.sum
}

// writeInjection creates one entry under root: directories with Mkdir,
// files under a temporary name, renamed into place when complete.
func writeInjection(root *os.Root, in *injection) error {
	e := in.entry
	if e.Type == archive.TypeDir {
		if err := root.Mkdir(e.Name, fs.FileMode(e.Mode&0o777)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return root.Chtimes(e.Name, e.ModTime, e.ModTime)
	}
	data, err := in.data()
	if err != nil {
		return err
	}
	return pathx.WriteRootFile(root, pathx.RootFile{Name: e.Name, Data: data, Mode: e.Mode, UID: e.UID, GID: e.GID, ModTime: e.ModTime})
}

// dirTimes remembers directory mtimes before apply changes their contents
// and puts them back after, so that only what apply meant to change does.
type dirTimes struct {
	root  *os.Root
	saved map[string]time.Time
	order []string
}

func (d *dirTimes) save(dir string) {
	if _, ok := d.saved[dir]; ok {
		return
	}
	fi, err := d.root.Lstat(dir)
	if err != nil {
		return // created by this run: its injection set its time
	}
	d.saved[dir] = fi.ModTime()
	d.order = append(d.order, dir)
}

func (d *dirTimes) restore() error {
	for _, dir := range d.order {
		t := d.saved[dir]
		if err := d.root.Chtimes(dir, t, t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
