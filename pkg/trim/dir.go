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
	"github.com/rootfs-trim/rootfs-trim/pkg/fsat"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/pathx"
)

// ApplyDir applies the rules to a directory tree in place, as a Buildroot
// post-build script does with the target directory.
//
// Everything is decided before anything changes: a tree with a new offender
// is left exactly as it was. Every path goes through os.Root: a symlink in
// the tree can never make apply touch anything outside it. Directories
// whose contents change keep their mtimes.
//
// A run killed at any point is finished by the next: it ends with exactly
// the tree an uninterrupted run leaves. Before the first change a journal
// beside the tree (see journal) records what the tree alone could not tell
// the rerun; then directories and files are created (each file under a
// temporary name, renamed into place), the index last, and only then
// anything removed, so that the index a killed run wrote still records
// what it had removed. A rerun decides again from the tree: a relocation
// or deferred copy already made is made again, the same; what is left to
// remove is removed. Every run ends by setting the mtimes the journal
// records and removing the journal.
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
	id, err := identify(root)
	if err != nil {
		return nil, err
	}
	jf, err := openJournal(root)
	if err != nil {
		return nil, err
	}
	defer jf.Close()
	resumed, staleJournal, err := jf.read(id)
	if err != nil {
		return nil, err
	}
	// What this run may touch, for the check of a journal: the paths the
	// decisions take, what the tree's index records, what the plan writes.
	planned := map[string]bool{}
	leftover := map[string]bool{}
	if resumed != nil {
		for _, t := range resumed.Temps {
			leftover[t] = true
		}
	}
	var leftovers []string
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
	d.SetInput(archive.KindDir)
	d.Strict = opt.Strict
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
		name, err := pathx.Clean(e.Name)
		if err != nil {
			return nil, err
		}
		if leftover[name] {
			// A file the killed run was writing; it is written again.
			leftovers = append(leftovers, name)
			continue
		}
		if e.Type == archive.TypeSymlink {
			// Its target, for the links an apply leaves dangling.
			if err := r.Stat(e); err != nil {
				return nil, err
			}
		}
		dec, err := d.Decide(e)
		if err != nil {
			return nil, err
		}
		if dec.Skip {
			continue
		}
		if dec.Own || dec.Spec != nil {
			planned[name] = true
		}
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
			if !dec.Spec.InPlace {
				removals = append(removals, &removal{path: name})
			}
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
	// A killed run has bumped the mtimes of the directories it changed:
	// its journal keeps the epoch it worked with.
	epoch := newest
	switch {
	case opt.Epoch != nil:
		epoch = *opt.Epoch
	case resumed != nil:
		epoch = resumed.epoch()
	}
	lazyEpoch := opt.Epoch == nil && resumed == nil && namesOnly
	for _, p := range indexPaths(oldIndex) {
		planned[p] = true
	}
	redoEarlierApply(caps, out, oldIndex)
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
	if resumed != nil {
		for _, in := range inj {
			planned[in.entry.Name] = true
		}
		if err := resumed.checkPlanned(jf.path, planned, opt.Set); err != nil {
			return nil, err
		}
	}
	rep.Changes = append(rep.Changes, dropped...)
	rep.Changes = append(rep.Changes, danglingChanges(d)...)
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
	rep.Resumed = resumed != nil
	rep.OutEntries = rep.Entries // recounted by callers that need it
	var writes []*injection
	for _, in := range inj {
		if !in.unchanged {
			writes = append(writes, in)
		}
	}
	if len(writes) == 0 && len(removals) == 0 && resumed == nil {
		// Apply's own directory for / goes too if a kill left it empty.
		if staleJournal || jf.private != "" && jf.dir != nil {
			if err := jf.remove(); err != nil {
				return nil, err
			}
		}
		return rep, nil
	}
	// The index last: a rerun that finds it finds every copy it lists.
	sort.SliceStable(writes, func(i, j int) bool {
		return writes[i].entry.Name != contract.IndexPath && writes[j].entry.Name == contract.IndexPath
	})

	j := &journal{Version: journalVersion, Dev: id.dev, Ino: id.ino, BtimeNs: id.btimeNs, EpochNs: epoch.UnixNano(), Dirs: map[string]int64{}}
	if resumed != nil {
		// What the killed run saw before it changed anything stands.
		j.EpochNs, j.Dirs, j.Temps = resumed.EpochNs, resumed.Dirs, resumed.Temps
	}
	for _, in := range writes {
		if in.entry.Type == archive.TypeDir {
			if _, ok := j.Dirs[in.entry.Name]; !ok {
				j.Dirs[in.entry.Name] = in.entry.ModTime.UnixNano()
			}
		} else if t := tempName(in.entry.Name); !leftover[t] {
			j.Temps = append(j.Temps, t)
		}
	}
	keep := func(dir string) error {
		if _, ok := j.Dirs[dir]; ok {
			return nil
		}
		fi, err := fsRoot.Lstat(dir)
		if err != nil {
			return err
		}
		j.Dirs[dir] = fi.ModTime().UnixNano()
		return nil
	}
	for _, in := range writes {
		if err := keep(path.Dir(in.entry.Name)); err != nil {
			return nil, err
		}
	}
	for _, rm := range removals {
		if err := keep(path.Dir(rm.path)); err != nil {
			return nil, err
		}
	}
	for _, t := range leftovers {
		if err := keep(path.Dir(t)); err != nil {
			return nil, err
		}
	}
	w := &treeWriter{root: fsRoot}
	w.step()
	if err := jf.write(j); err != nil {
		return nil, err
	}
	for _, t := range leftovers {
		w.step()
		if err := fsRoot.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("removing %s: %w", names.Quote(t), err)
		}
	}
	for _, in := range writes {
		if err := w.write(in); err != nil {
			return nil, fmt.Errorf("writing %s: %w", names.Quote(in.entry.Name), err)
		}
	}
	for _, rm := range removals {
		if err := w.remove(rm.path); err != nil {
			return nil, fmt.Errorf("removing %s: %w", names.Quote(rm.path), err)
		}
	}
	dirs := make([]string, 0, len(j.Dirs))
	for d := range j.Dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		w.step()
		t := time.Unix(0, j.Dirs[d])
		if err := fsRoot.Chtimes(d, t, t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	w.step()
	if err := jf.remove(); err != nil {
		return nil, err
	}
	return rep, nil
}

// redoEarlierApply lets the plan redo what an earlier apply did, when the
// tree has the source again: a kill before the source was removed, or
// Buildroot installing the package again (`make <pkg>-rebuild`, or every
// make with per-package directories). The copy is then made again from the
// file the package installs now, as a first apply would make it, whether or
// not the bytes changed: a relocation whose destination holds the same
// bytes, or what that apply's index says it put there, and a deferred copy
// the index records.
func redoEarlierApply(caps []*captured, out *dirTree, old *contract.Index) {
	for _, c := range caps {
		Actions[c.verdict.Rule.Action].Redo(c, out, old)
	}
}

func noRedo(*captured, *dirTree, *contract.Index) {}

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

// treeWriter makes the changes of apply to a tree, one step at a time,
// through the confined writer (fsat, Beneath: os.Root resolves the way, the
// *at calls act on the last component, nothing is written through a
// symlink).
type treeWriter struct {
	root *os.Root
	tree *fsat.Tree
}

// beforeStep, set only by tests, runs before each change ApplyDir makes to
// the tree at root: a test stops the run there, as a kill would.
var beforeStep func(root string)

func (w *treeWriter) step() {
	if beforeStep != nil {
		beforeStep(w.root.Name())
	}
}

// fsat is the writer, made on first use: syncWrites and beforeStep are
// read when the run starts writing.
func (w *treeWriter) fsat() *fsat.Tree {
	if w.tree == nil {
		w.tree = fsat.New(w.root, fsat.Options{Sync: syncWrites, BeforeStep: w.step})
	}
	return w.tree
}

// syncWrites makes each file durable before it is renamed into place, for
// a power cut; the kill tests, which lose nothing the page cache holds,
// turn it off to run in seconds rather than minutes.
var syncWrites = true

// tempName is where a file is written before it is renamed into place.
func tempName(name string) string {
	return path.Join(path.Dir(name), "."+path.Base(name)+tempSuffix)
}

const tempSuffix = ".rootfs-trim-apply.tmp"

// indexPaths are the paths in the tree an earlier apply's index records:
// what it took away, where it put it, what it added.
func indexPaths(ix *contract.Index) []string {
	if ix == nil {
		return nil
	}
	var ps []string
	for _, f := range ix.Files {
		ps = append(ps, f.Source)
		if spec := specOfKind(f.Kind); spec != nil {
			if t := spec.Taken(f); t != "" {
				ps = append(ps, t)
			}
		}
		if f.Kind == contract.Relocated {
			ps = append(ps, f.Dest)
		}
	}
	return ps
}

// write creates one entry: a directory (the journal gives it its mtime at
// the end, once it is filled), or a file or symlink under a temporary name,
// complete with owner, mode and mtime before it is renamed into place.
func (w *treeWriter) write(in *injection) error {
	e := in.entry
	switch e.Type {
	case archive.TypeDir:
		w.step()
		if err := w.fsat().Mkdir(e.Name, e.Mode&0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	case archive.TypeSymlink:
		// A relocated or deferred symlink keeps its target, owner and mtime.
		return w.fsat().WriteSymlink(e.Name, tempName(e.Name), fsat.Symlink{Target: e.Linkname, UID: e.UID, GID: e.GID, ModTime: e.ModTime})
	}
	data, err := in.data()
	if err != nil {
		return err
	}
	return w.fsat().WriteFile(e.Name, tempName(e.Name), fsat.File{Data: data, Mode: e.Mode, UID: e.UID, GID: e.GID, ModTime: e.ModTime})
}

// remove removes name and everything beneath it, one entry at a time
// (deepest first), never following a symlink: a rerun finds what a kill
// left and removes the rest.
func (w *treeWriter) remove(name string) error {
	return w.fsat().RemoveAll(name)
}
