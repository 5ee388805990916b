package trim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// journalVersion is the format of the journal; a journal of another
// version is refused rather than guessed at.
const journalVersion = 1

// journal is what ApplyDir needs to finish, after a kill, a run that had
// begun to change a tree: what a kill takes away is the mtime a directory
// had before an entry in it was created or removed, which the rerun could
// not tell from the tree, and the epoch the killed run stamped its files
// with, which the bumped directories would hide. It is written before the
// first change, beside the tree and not in it (for /, in a directory of
// apply's own under /run or /tmp, where no rule takes anything): its own
// creation and removal must change no directory whose mtime the run
// keeps, or that mtime would be lost in turn.
type journal struct {
	Version int `json:"version"`
	// The tree the journal is for: a journal left by a killed run on a
	// tree since removed and made again (make clean) is not for this one.
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	BtimeNs int64  `json:"btime_ns,omitempty"` // 0 where the filesystem has none
	EpochNs int64  `json:"epoch_ns"`
	// Dirs maps each directory whose contents the run changes, or which
	// it creates, to the mtime it ends with, in nanoseconds.
	Dirs map[string]int64 `json:"dirs"`
	// Temps are the temporary names files are written under before
	// they are renamed into place: a kill can leave one behind.
	Temps []string `json:"temps"`
}

// treeID identifies the directory at root.
type treeID struct {
	dev, ino uint64
	btimeNs  int64
}

func identify(root string) (treeID, error) {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, root, 0, unix.STATX_INO|unix.STATX_BTIME, &stx); err != nil {
		return treeID{}, &fs.PathError{Op: "statx", Path: root, Err: err}
	}
	id := treeID{dev: unix.Mkdev(stx.Dev_major, stx.Dev_minor), ino: stx.Ino}
	if stx.Mask&unix.STATX_BTIME != 0 {
		id.btimeNs = stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
	}
	return id, nil
}

// The journal of the live root (apply / as a RUN of a Dockerfile) has
// nothing beside the tree to go to. It goes to a directory of its own that
// apply makes, mode 0700, in /run when root runs apply and /run is a
// directory only root can write (never a place another user can make the
// name first, and on a booted system a tmpfs, so not the tree's
// filesystem), else in the temporary directory ($TMPDIR, else /tmp: a
// container build step may have no /run). Both hold nothing an image
// keeps, and the directory goes with the journal at the end of the run.
// runDir is a variable for the tests.
var runDir = "/run"

const (
	rootJournalName = "journal-of-root"
	// maxJournal bounds what is read of a journal: a kill leaves one
	// naming each file the run writes, some kilobytes.
	maxJournal = 64 << 20
)

// journalFile is where the journal of one tree is kept, with the
// directory holding it open and checked, once a run, so that every later
// step acts on that directory whatever its path comes to name.
type journalFile struct {
	path   string   // for messages
	parent *os.File // beside the tree: the directory holding it; for /: the one holding apply's own directory
	// private is, for /, the name in parent of apply's own directory.
	private string
	dir     *os.File // the directory holding the journal; nil while apply's own does not exist
	name    string
}

// openJournal opens the directory where the journal of the tree at root
// is kept: beside the tree, under the tree's name, hidden, so that
// writing it changes no directory of the tree; for the live root, apply's
// own directory (see runDir). The journal names the tree it belongs to,
// so one found for another tree is not used.
func openJournal(root string) (*journalFile, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	dir, base := filepath.Split(abs)
	jf := &journalFile{name: "." + base + ".rootfs-trim-journal"}
	if base == "" {
		dir, jf.name = rootJournalDir(), rootJournalName
		jf.private = fmt.Sprintf("rootfs-trim.%d", os.Geteuid())
	}
	jf.path = filepath.Join(dir, jf.private, jf.name) // Join drops an empty private
	jf.parent, err = os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if errors.Is(err, fs.ErrNotExist) && jf.private != "" {
		// An image with no /tmp: fine until a journal must be written.
		return jf, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the directory for the journal of this apply: %w", err)
	}
	if jf.private == "" {
		jf.dir = jf.parent
		if err := checkBesideDir(jf.parent); err != nil {
			jf.Close()
			return nil, err
		}
		return jf, nil
	}
	if err := jf.openPrivate(false); err != nil {
		jf.Close()
		return nil, err
	}
	return jf, nil
}

// rootJournalDir is where apply's own directory for the journal of / is
// made (see runDir).
func rootJournalDir() string {
	var st unix.Stat_t
	if os.Geteuid() == 0 && unix.Lstat(runDir, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
		st.Uid == 0 && st.Mode&0o022 == 0 {
		return runDir
	}
	return os.TempDir()
}

// untrusted is the error for a journal, or a directory holding it, that
// someone other than the user running apply can have written.
func untrusted(name, why string) error {
	return fmt.Errorf("%s: not trusted as the journal of an interrupted apply: %s; nothing changed (remove it if no apply of yours on this tree was interrupted)", name, why)
}

// checkBesideDir refuses a directory beside the tree in which someone
// other than the user running apply (and root) could swap the journal,
// or plant the name it is written under: owned by another user, or
// writable by others or by a group other than the user's own (umask 002
// with user private groups makes that), unless sticky, where no one else
// can rename or remove what apply put there.
func checkBesideDir(d *os.File) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		return &fs.PathError{Op: "fstat", Path: d.Name(), Err: err}
	}
	euid := os.Geteuid()
	switch {
	case int(st.Uid) != euid && st.Uid != 0:
		return untrusted(d.Name(), fmt.Sprintf("the directory is owned by uid %d, not by uid %d running apply or root", st.Uid, euid))
	case st.Mode&unix.S_ISVTX != 0:
		return nil
	case st.Mode&0o002 != 0:
		return untrusted(d.Name(), "the directory is writable by anyone and not sticky")
	case st.Mode&0o020 != 0 && int(st.Gid) != os.Getegid():
		return untrusted(d.Name(), fmt.Sprintf("the directory is writable by group %d and not sticky", st.Gid))
	}
	return nil
}

// openPrivate opens apply's own directory for the journal of /, making
// it first if create is set; it must be a directory (not a link to one)
// owned by the user running apply that no one else can enter or write.
// Not there and not to be made: jf.dir stays nil.
func (jf *journalFile) openPrivate(create bool) error {
	pfd := int(jf.parent.Fd())
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(pfd, jf.private, flags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if err = unix.Mkdirat(pfd, jf.private, 0o700); err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = unix.Openat(pfd, jf.private, flags, 0)
		}
	}
	dir := filepath.Dir(jf.path)
	switch {
	case errors.Is(err, unix.ENOENT) && !create:
		return nil
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		return untrusted(dir, "not a directory")
	case err != nil:
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return &fs.PathError{Op: "fstat", Path: dir, Err: err}
	}
	euid := os.Geteuid()
	switch {
	case int(st.Uid) != euid:
		err = untrusted(dir, fmt.Sprintf("owned by uid %d, not by uid %d running apply", st.Uid, euid))
	case st.Mode&0o077 != 0:
		err = untrusted(dir, fmt.Sprintf("mode %04o; apply makes it 0700", st.Mode&0o7777))
	}
	if err != nil {
		f.Close()
		return err
	}
	jf.dir = f
	return nil
}

// read returns the journal a killed run left for the tree id, nil if
// there is none. It is trusted only if no one but the user running apply
// can have written it: a regular file (not a link to one) with one link,
// owned by that user, writable by no one else. A journal for another
// tree (stale is then true) is not used.
func (jf *journalFile) read(id treeID) (j *journal, stale bool, err error) {
	if jf.dir == nil {
		return nil, false, nil
	}
	fd, err := unix.Openat(int(jf.dir.Fd()), jf.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, false, nil
	case errors.Is(err, unix.ELOOP):
		return nil, false, untrusted(jf.path, "a symlink")
	case err != nil:
		return nil, false, &fs.PathError{Op: "open", Path: jf.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), jf.path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, &fs.PathError{Op: "fstat", Path: jf.path, Err: err}
	}
	if why := untrustedFile(&st); why != "" {
		return nil, false, untrusted(jf.path, why)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxJournal+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > maxJournal {
		return nil, false, fmt.Errorf("%s: over %d bytes: not a journal of apply", jf.path, maxJournal)
	}
	return decodeJournal(jf.path, data, id)
}

// untrustedFile says why the journal file st describes is not trusted, ""
// if it is.
func untrustedFile(st *unix.Stat_t) string {
	euid := os.Geteuid()
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return "not a regular file"
	case st.Nlink != 1:
		return fmt.Sprintf("it has %d hard links", st.Nlink)
	case int(st.Uid) != euid:
		return fmt.Sprintf("owned by uid %d, not by uid %d running apply", st.Uid, euid)
	case st.Mode&0o022 != 0:
		return fmt.Sprintf("mode %04o: writable by others than its owner", st.Mode&0o7777)
	}
	return ""
}

func decodeJournal(name string, data []byte, id treeID) (j *journal, stale bool, err error) {
	j = &journal{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(j); err != nil {
		return nil, false, fmt.Errorf("%s: %w (the journal of an interrupted apply; remove it only if the tree was made again since)", name, err)
	}
	if j.Version != journalVersion {
		return nil, false, fmt.Errorf("%s: journal version %d, want %d", name, j.Version, journalVersion)
	}
	if j.Dev != id.dev || j.Ino != id.ino || j.BtimeNs != id.btimeNs {
		return nil, true, nil
	}
	if j.Dirs == nil {
		j.Dirs = map[string]int64{}
	}
	if err := j.checkNames(name); err != nil {
		return nil, false, err
	}
	return j, false, nil
}

// write puts the journal in place atomically: a kill leaves the old one
// or the new one, and at worst a temporary file beside them, which the
// next write replaces. The temporary file is made anew (O_EXCL), never
// opened where it stands: in a directory others may write (sticky), a
// link or a file of theirs in its place must not be written through.
func (jf *journalFile) write(j *journal) error {
	if jf.parent == nil {
		return fmt.Errorf("writing the journal of this apply: %s: %w", filepath.Dir(filepath.Dir(jf.path)), fs.ErrNotExist)
	}
	if jf.dir == nil {
		if err := jf.openPrivate(true); err != nil {
			return fmt.Errorf("writing the journal of this apply: %w", err)
		}
	}
	sort.Strings(j.Temps)
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	dfd := int(jf.dir.Fd())
	tmp := jf.name + ".tmp"
	if err := unix.Unlinkat(dfd, tmp, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("writing the journal of this apply: removing %s: %w", filepath.Join(filepath.Dir(jf.path), tmp), err)
	}
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("writing the journal of this apply: %w", &fs.PathError{Op: "create", Path: filepath.Join(filepath.Dir(jf.path), tmp), Err: err})
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil && syncWrites {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, jf.name)
	}
	if err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("writing the journal of this apply: %w", err)
	}
	return nil
}

// remove removes the journal, and for / apply's own directory with it.
func (jf *journalFile) remove() error {
	if jf.dir == nil {
		return nil
	}
	if err := unix.Unlinkat(int(jf.dir.Fd()), jf.name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: jf.path, Err: err}
	}
	if jf.private == "" {
		return nil
	}
	jf.dir.Close()
	jf.dir = nil
	err := unix.Unlinkat(int(jf.parent.Fd()), jf.private, unix.AT_REMOVEDIR)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: filepath.Dir(jf.path), Err: err}
	}
	return nil
}

func (jf *journalFile) Close() {
	if jf.dir != nil && jf.dir != jf.parent {
		jf.dir.Close()
	}
	if jf.parent != nil {
		jf.parent.Close()
	}
}

// checkNames refuses, before the tree is read, a journal naming anything
// but apply's own temporary names (tempName) and clean directory paths:
// the names in temps are set aside from the rules and removed.
func (j *journal) checkNames(name string) error {
	for _, t := range j.Temps {
		if _, ok := untemp(t); !ok {
			return fmt.Errorf("%s: refusing the journal: temps entry %s is not a temporary name apply makes (.NAME%s); nothing changed", name, names.Quote(t), tempSuffix)
		}
	}
	for d := range j.Dirs {
		if c, err := pathx.Clean(d); err != nil || c != d {
			return fmt.Errorf("%s: refusing the journal: dirs entry %s is not a clean path in the tree; nothing changed", name, names.Quote(d))
		}
	}
	return nil
}

// untemp is the path whose temporary name (tempName) t is; ok is false if
// t is no such name.
func untemp(t string) (p string, ok bool) {
	dir, base := path.Split(t)
	inner, ok := strings.CutPrefix(base, ".")
	if ok {
		inner, ok = strings.CutSuffix(inner, tempSuffix)
	}
	if !ok || inner == "" {
		return "", false
	}
	p = path.Join(dir, inner)
	if c, err := pathx.Clean(t); err != nil || c != t || tempName(p) != t {
		return "", false
	}
	return p, true
}

// checkPlanned refuses a journal that names what this run would not
// touch: a temporary name beside a path that no rule of set matches and
// that apply does not add or record (planned: the paths the decisions
// took, what the plan writes, what the tree's index records), or a
// directory that is above none of those and in which no rule can match a
// path (the killed run may have taken it out already). Even a journal
// only its user can have written then changes nothing but what apply
// itself may change.
func (j *journal) checkPlanned(name string, planned map[string]bool, set *rules.Set) error {
	anyRule := func(f func(rules.Pattern) bool) bool {
		return slices.ContainsFunc(set.Rules(), func(r *rules.Rule) bool { return slices.ContainsFunc(r.Paths, f) })
	}
	ruleMatches := func(p string) bool { return anyRule(func(pat rules.Pattern) bool { return pat.Match(p) }) }
	above := map[string]bool{".": true}
	mark := func(p string) {
		for d := path.Dir(p); d != "." && !above[d]; d = path.Dir(d) {
			above[d] = true
		}
	}
	for p := range planned {
		mark(p)
	}
	for _, t := range j.Temps {
		p, _ := untemp(t)
		if !planned[p] && !ruleMatches(p) {
			return fmt.Errorf("%s: refusing the journal: temps entry %s is beside %s, which no rule matches and apply does not add; nothing changed", name, names.Quote(t), names.Quote(p))
		}
		mark(p)
	}
	for d := range j.Dirs {
		// A path a rule took out is gone from the tree a kill left.
		if !above[d] && !anyRule(func(pat rules.Pattern) bool { return pat.MatchesIn(d) }) {
			return fmt.Errorf("%s: refusing the journal: dirs entry %s holds no path the rules match or apply adds; nothing changed", name, names.Quote(d))
		}
	}
	return nil
}

func (j *journal) epoch() time.Time { return time.Unix(0, j.EpochNs).UTC() }

// commit makes the planned changes to the tree, each step journaled so
// that a kill at any point is finished by the next run (see ApplyDir):
// the journal, then the leftovers of a killed run removed, what the plan
// writes (the index last), what the rules take out removed, the mtimes of
// the directories set, and the journal removed.
func (t *treeApply) commit() error {
	var writes []*injection
	for _, in := range t.inj {
		if !in.unchanged {
			writes = append(writes, in)
		}
	}
	if len(writes) == 0 && len(t.removals) == 0 && t.resumed == nil {
		// Apply's own directory for / goes too if a kill left it empty.
		if t.staleJournal || t.jf.private != "" && t.jf.dir != nil {
			return t.jf.remove()
		}
		return nil
	}
	// The index last: a rerun that finds it finds every copy it lists.
	sort.SliceStable(writes, func(i, j int) bool {
		return writes[i].entry.Name != contract.IndexPath && writes[j].entry.Name == contract.IndexPath
	})
	j, err := t.journalFor(writes)
	if err != nil {
		return err
	}
	w := &treeWriter{root: t.fsRoot}
	w.step()
	if err := t.jf.write(j); err != nil {
		return err
	}
	for _, tmp := range t.leftovers {
		w.step()
		if err := t.fsRoot.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", names.Quote(tmp), err)
		}
	}
	for _, in := range writes {
		if err := w.write(in); err != nil {
			return fmt.Errorf("writing %s: %w", names.Quote(in.entry.Name), err)
		}
	}
	for _, rm := range t.removals {
		// Deepest first, never following a symlink: a rerun finds what
		// a kill left and removes the rest.
		if err := w.fsat().RemoveAll(rm.path); err != nil {
			return fmt.Errorf("removing %s: %w", names.Quote(rm.path), err)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(j.Dirs)) {
		w.step()
		mt := time.Unix(0, j.Dirs[d])
		if err := t.fsRoot.Chtimes(d, mt, mt); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	w.step()
	return t.jf.remove()
}

// journalFor is the journal of a run that writes writes: the epoch, the
// mtime each directory it changes or creates ends with, and the temporary
// names it writes files under. A killed run's stands: what it saw before
// it changed anything is what this run finishes.
func (t *treeApply) journalFor(writes []*injection) (*journal, error) {
	j := &journal{Version: journalVersion, Dev: t.id.dev, Ino: t.id.ino, BtimeNs: t.id.btimeNs, EpochNs: t.epoch.UnixNano(), Dirs: map[string]int64{}}
	if r := t.resumed; r != nil {
		j.EpochNs, j.Dirs, j.Temps = r.EpochNs, r.Dirs, r.Temps
	}
	for _, in := range writes {
		if in.entry.Type == archive.TypeDir {
			if _, ok := j.Dirs[in.entry.Name]; !ok {
				j.Dirs[in.entry.Name] = in.entry.ModTime.UnixNano()
			}
		} else if tmp := tempName(in.entry.Name); !t.leftover[tmp] {
			j.Temps = append(j.Temps, tmp)
		}
	}
	keep := func(dir string) error {
		if _, ok := j.Dirs[dir]; ok {
			return nil
		}
		fi, err := t.fsRoot.Lstat(dir)
		if err != nil {
			return err
		}
		j.Dirs[dir] = fi.ModTime().UnixNano()
		return nil
	}
	var changed []string
	for _, in := range writes {
		changed = append(changed, in.entry.Name)
	}
	for _, rm := range t.removals {
		changed = append(changed, rm.path)
	}
	changed = append(changed, t.leftovers...)
	for _, p := range changed {
		if err := keep(path.Dir(p)); err != nil {
			return nil, err
		}
	}
	return j, nil
}
