package render

import (
	"bytes"
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/internal/fsat"
)

// tree is the root render works beneath, fsat's NoSymlinks mode: every
// name under /etc is reached one component at a time with O_NOFOLLOW, and a
// symlink anywhere on the way, even one that stays inside the root, is
// refused, so that a file can only be written or taken back where it really
// is. Writes make the directories they need, replace what a killed render
// left at the temporary name, and sync before the rename.
type tree struct{ *fsat.Tree }

func openTree(dir string) (*tree, error) {
	t, err := fsat.OpenNoSymlinks(dir, fsat.Options{MakeParents: true, ReplaceTemp: true, Sync: true})
	if err != nil {
		return nil, err
	}
	return &tree{t}, nil
}

// ownedBy returns a check for fsat's ReadFile that refuses a file or
// directory someone other than uid (or root, who can write anything
// anyway) can have written: another owner, or group or other write
// permission. A sticky directory owned by root (/tmp) is the exception:
// others may add to it but not replace what uid or root put there.
func ownedBy(uid int) func(fd int, shown string) error {
	return func(fd int, shown string) error {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return &os.PathError{Op: "fstat", Path: shown, Err: err}
		}
		var why string
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		switch w := st.Mode & 0o022; {
		case int(st.Uid) != uid && st.Uid != 0:
			owners := fmt.Sprintf("uid %d (the user running render) or root", uid)
			if uid == 0 {
				owners = "root (the user running render)"
			}
			why = fmt.Sprintf("is owned by uid %d, not by %s", st.Uid, owners)
		case w != 0 && !(isDir && st.Mode&unix.S_ISVTX != 0 && st.Uid == 0):
			who := map[uint32]string{0o020: "its group", 0o002: "others", 0o022: "its group and others"}[w]
			why = fmt.Sprintf("is writable by %s (mode %04o)", who, st.Mode&0o7777)
		default:
			return nil
		}
		what := "it" // the record: its name comes before the message
		if isDir {
			what = shown
		}
		return fmt.Errorf("not trusted: %s %s; only the user running render may be able to write it and every directory above it", what, why)
	}
}

// tempName is the name render writes name under before renaming it into
// place.
func tempName(name string) string {
	return path.Join(path.Dir(name), "."+path.Base(name)+".rootfs-trim.tmp")
}

// write puts p in place atomically: written under a temporary name
// beside it, owned and moded, then renamed over it. A symlink at its name
// is replaced, never written through; a symlink on the way is refused. A
// deferred symlink is created as one; nothing follows it.
func (t *tree) write(p *planned) error {
	if p.link {
		return t.WriteSymlink(p.dest, tempName(p.dest), fsat.Symlink{Target: string(p.data), UID: p.uid, GID: p.gid})
	}
	return t.WriteFile(p.dest, tempName(p.dest), fsat.File{Data: bytes.NewReader(p.data), Mode: p.mode, UID: p.uid, GID: p.gid})
}
