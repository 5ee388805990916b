package pathx

import (
	"io"
	"io/fs"
	"os"
	"path"
	"time"
)

// RootFile describes a regular file to create under an os.Root.
type RootFile struct {
	Name     string // slash-separated, relative to the root
	Data     io.Reader
	Mode     uint32 // permission bits with setuid, setgid and sticky
	UID, GID int    // applied when running as root
	ModTime  time.Time
}

// WriteRootFile writes f atomically: to a temporary name in the same
// directory, then renamed over the destination. A symlink at the
// destination is replaced, never written through, and os.Root refuses any
// parent that leads outside the root. Nothing is left behind on failure.
func WriteRootFile(root *os.Root, f RootFile) error {
	tmp := path.Join(path.Dir(f.Name), "."+path.Base(f.Name)+".rootfs-trim.tmp")
	file, err := root.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(file, f.Data)
	if err == nil {
		err = file.Sync()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err == nil && os.Geteuid() == 0 {
		err = root.Lchown(tmp, f.UID, f.GID)
	}
	if err == nil {
		// After chown, which clears setuid and setgid.
		err = root.Chmod(tmp, FileMode(f.Mode))
	}
	if err == nil && !f.ModTime.IsZero() {
		err = root.Chtimes(tmp, f.ModTime, f.ModTime)
	}
	if err == nil {
		err = root.Rename(tmp, f.Name)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

// FileMode converts permission bits with setuid, setgid and sticky (as in
// Entry.Mode) to the os.FileMode spelling of them, for os.Chmod.
func FileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
