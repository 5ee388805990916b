package trim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// journalVersion is the format of the journal; a journal of another
// version is refused rather than guessed at.
const journalVersion = 1

// journal is what ApplyDir needs to finish, after a kill, a run that had
// begun to change a tree: what a kill takes away is the mtime a directory
// had before an entry in it was created or removed, which the rerun could
// not tell from the tree, and the epoch the killed run stamped its files
// with, which the bumped directories would hide. It is written before the
// first change, beside the tree and not in it: its own creation and
// removal must change no directory of the tree, or the mtime of that
// directory would be lost in turn.
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

// journalPath is where the journal of the tree at root is kept: in the
// directory that holds the tree, under the tree's name, hidden, so that
// writing it changes no directory mtime inside the tree. The live root
// (apply as the last RUN of a Dockerfile) has nothing beside it: its
// journal goes to the temporary directory, which holds nothing an image
// keeps (Buildroot wipes /tmp; a container build discards it or mounts a
// tmpfs there). The journal names the tree it belongs to, so one found
// for another tree is ignored.
func journalPath(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	dir, base := filepath.Split(abs)
	if base == "" {
		return filepath.Join(os.TempDir(), ".rootfs-trim-journal-of-root"), nil
	}
	return filepath.Join(dir, "."+base+".rootfs-trim-journal"), nil
}

// readJournal returns the journal a killed run left for the tree id, nil
// if there is none. A journal for another tree (stale is then true) is
// not used.
func readJournal(name string, id treeID) (j *journal, stale bool, err error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
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
	return j, false, nil
}

// write puts the journal in place atomically: a kill leaves the old one
// or the new one, and at worst a temporary file beside them, which the
// next write replaces.
func (j *journal) write(name string) error {
	sort.Strings(j.Temps)
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp := name + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("writing the journal of this apply: %w", err)
	}
	_, err = f.Write(data)
	if err == nil && syncWrites {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the journal of this apply: %w", err)
	}
	return nil
}

func (j *journal) epoch() time.Time { return time.Unix(0, j.EpochNs).UTC() }
