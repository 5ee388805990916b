package trim

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/fsat"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// ApplyDir applies the rules to a directory tree in place, as a Buildroot
// post-build script does with the target directory.
//
// Everything is decided before anything changes: a tree with a new offender
// is left exactly as it was. Every path goes through os.Root: a symlink in
// the tree can never make apply touch anything outside it. Directories
// whose contents change keep their mtimes.
//
// A run killed at any point is finished by the next, which decides again
// from the tree and ends with the tree an uninterrupted run leaves: the
// journal beside it keeps what the tree alone cannot tell (journal), files
// are renamed into place from temporary names, the index last, and only
// then is anything removed, so that the index a killed run wrote still
// records what it had removed.
//
// Cancelling ctx stops the run while it is still reading and deciding;
// once writing has begun the run finishes, so the tree is never left
// half-applied by an interrupt.
//
// It reads (treeApply.read), plans (treeApply.plan) and commits
// (treeApply.commit, in journal.go).
func ApplyDir(ctx context.Context, root string, opt Options, dryRun bool) (*Report, error) {
	t, err := openTreeApply(root)
	if err != nil {
		return nil, err
	}
	defer t.close()
	if err := t.read(ctx, opt); err != nil {
		return nil, err
	}
	if err := t.plan(dryRun); err != nil {
		return nil, err
	}
	sort.SliceStable(t.changes, func(i, j int) bool { return t.changes[i].Path < t.changes[j].Path })
	rep := &Report{Changes: t.changes, Stale: t.d.Stale(), Entries: t.entries}
	if dryRun {
		return rep, nil
	}
	rep.Resumed = t.resumed != nil
	rep.OutEntries = rep.Entries // recounted by callers that need it
	if err := t.commit(); err != nil {
		return nil, err
	}
	return rep, nil
}

// treeApply is one run of ApplyDir on the tree at root.
type treeApply struct {
	root    string
	fsRoot  *os.Root
	id      treeID
	jf      *journalFile
	resumed *journal // a killed run's, to finish; nil if none
	// staleJournal: the journal found is another tree's.
	staleJournal bool
	// leftover are the temporary names the killed run wrote files under;
	// leftovers those of them the tree has.
	leftover  map[string]bool
	leftovers []string

	*collector // nil until read
	out        *dirTree
	namesOnly  bool // listed without an lstat per entry
	// planned is what this run may touch, for the check of a journal: the
	// paths the decisions take, what the tree's index records, what the
	// plan writes.
	planned  map[string]bool
	removals []*removal
	epoch    time.Time
	inj      []*injection
}

// openTreeApply opens the tree at root and the journal a killed run may
// have left beside it.
func openTreeApply(root string) (*treeApply, error) {
	fsRoot, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	t := &treeApply{root: root, fsRoot: fsRoot, leftover: map[string]bool{}, planned: map[string]bool{}}
	if t.id, err = identify(root); err != nil {
		fsRoot.Close()
		return nil, err
	}
	if t.jf, err = openJournal(root); err != nil {
		fsRoot.Close()
		return nil, err
	}
	if t.resumed, t.staleJournal, err = t.jf.read(t.id); err != nil {
		t.close()
		return nil, err
	}
	if t.resumed != nil {
		for _, tmp := range t.resumed.Temps {
			t.leftover[tmp] = true
		}
	}
	return t, nil
}

func (t *treeApply) close() {
	if t.collector != nil {
		t.collector.close()
	}
	t.jf.Close()
	t.fsRoot.Close()
}

// read takes every entry of the tree through the collector.
func (t *treeApply) read(ctx context.Context, opt Options) error {
	// Only the entries a rule touches need an lstat when no other entry's
	// mtime matters: the rest of the tree is read from its directory
	// listings, like `find -type f` (make bench: apply-dir). Without
	// SOURCE_DATE_EPOCH what apply writes takes the newest mtime of the
	// tree, which needs every entry's. A target that an earlier apply
	// trimmed (its index is there) usually needs nothing written, so it is
	// listed by name and the mtimes are read only if something must be.
	_, indexErr := t.fsRoot.Lstat(contract.IndexPath)
	t.namesOnly = opt.Epoch != nil || indexErr == nil
	r, opt, err := openListing(t.root, opt, t.namesOnly)
	if err != nil {
		return err
	}
	defer r.Close()
	t.collector = newCollector(opt, archive.KindDir)
	t.inTree = true
	t.out = &dirTree{outSet: t.collector.out, root: t.fsRoot}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := t.entry(r, e); err != nil {
			return err
		}
	}
}

// openListing opens the tree at root for reading while Buildroot's file list
// is parsed (opt.LoadOwners), and returns opt with its owners.
func openListing(root string, opt Options, namesOnly bool) (*archive.DirReader, Options, error) {
	var ownersErr error
	loaded := make(chan struct{})
	go func() {
		if opt.LoadOwners != nil {
			opt.Owners, ownersErr = opt.LoadOwners()
		}
		close(loaded)
	}()
	r, err := archive.NewDirReader(root, archive.DirReaderOptions{NamesOnly: namesOnly})
	// Waited for even when the listing failed: a bad file list is the
	// error to report first, as it was when owners came first.
	<-loaded
	if ownersErr != nil {
		if r != nil {
			r.Close()
		}
		return nil, opt, ownersErr
	}
	if err != nil {
		return nil, opt, err
	}
	return r, opt, nil
}

// entry takes one entry of the tree: the collector decides it and takes
// what its action needs (the entry's metadata read first, when the tree
// is listed by name); what a rule takes out is removed at the end.
func (t *treeApply) entry(r *archive.DirReader, e *archive.Entry) error {
	t.note(e)
	name, err := pathx.Clean(e.Name)
	if err != nil {
		return err
	}
	if t.leftover[name] {
		// A file the killed run was writing; it is written again.
		t.leftovers = append(t.leftovers, name)
		return nil
	}
	if e.Type == archive.TypeSymlink {
		// Its target, for the links an apply leaves dangling.
		if err := r.Stat(e); err != nil {
			return err
		}
	}
	dec, err := t.decide(e)
	if err != nil || dec.Skip {
		return err
	}
	if dec.Own || dec.Spec != nil {
		t.planned[name] = true
		if err := r.Stat(e); err != nil {
			return err
		}
	}
	var data io.Reader
	if t.wantsData(dec, e) {
		data = r
	}
	if err := t.take(dec, e, data); err != nil {
		return err
	}
	if spec := dec.Spec; spec != nil && (spec.Moves && !spec.InPlace || !spec.Moves && !dec.Verdict.Inherited) {
		t.removals = append(t.removals, &removal{path: name, dir: e.Type == archive.TypeDir})
	}
	return nil
}

// plan lays out what the run writes, once the tree is read.
func (t *treeApply) plan(dryRun bool) error {
	if err := t.offenders(); err != nil {
		return err
	}
	// Listed by name, the mtimes of all but the entries a rule touched are
	// unknown: the plan is made without them, and made again with the
	// newest of the whole tree if it writes anything. Nothing else in the
	// plan depends on the epoch.
	// A killed run has bumped the mtimes of the directories it changed:
	// its journal keeps the epoch it worked with.
	t.epoch = t.collector.epoch()
	if t.opt.Epoch == nil && t.resumed != nil {
		t.epoch = t.resumed.epoch()
	}
	lazyEpoch := t.opt.Epoch == nil && t.resumed == nil && t.namesOnly
	for _, p := range indexPaths(t.old) {
		t.planned[p] = true
	}
	redoEarlierApply(t.caps, t.out, t.old)
	inj, dropped, err := t.collector.plan(t.out, t.epoch)
	if err != nil {
		return err
	}
	if lazyEpoch && !dryRun && slices.ContainsFunc(inj, func(in *injection) bool { return !in.unchanged }) {
		if t.epoch, err = newestMtime(t.root); err != nil {
			return err
		}
		if inj, dropped, err = t.collector.plan(t.out, t.epoch); err != nil {
			return err
		}
	}
	if t.resumed != nil {
		for _, in := range inj {
			t.planned[in.entry.Name] = true
		}
		if err := t.resumed.checkPlanned(t.jf.path, t.planned, t.opt.Set); err != nil {
			return err
		}
	}
	t.added(dropped, inj)
	t.inj = inj
	return nil
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

// newestMtime is the newest mtime of any entry in the tree at root: what
// apply gives the files it writes when SOURCE_DATE_EPOCH is unset.
func newestMtime(root string) (time.Time, error) {
	r, err := archive.NewDirReader(root, archive.DirReaderOptions{})
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
