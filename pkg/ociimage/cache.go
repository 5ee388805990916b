package ociimage

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// The last image scanned, kept so that a command that opens it twice (for
// its dpkg database, then for its entries) makes the pass over its layers
// once. A blob changed in between is still caught where it is read again:
// a layer apply keeps is checked as it is copied, a layer whose data is
// read again when the Reader leaves it; the signature notices a new index
// or tarball.
var last struct {
	sync.Mutex
	sig string
	img *Image
}

// signature names what the first pass of path read: the file or index,
// by device, inode, size and mtime, and the options.
func signature(path string, fi os.FileInfo, opt Options) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		if fi, err = os.Stat(filepath.Join(path, "index.json")); err != nil {
			return ""
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s\x00%d:%d:%d:%d\x00%s\x00%d\x00%d", abs, st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(), opt.Platform, opt.MaxSize, opt.Backend)
}

// cached returns a copy of the image scanned under sig, without its store.
func cached(sig string) *Image {
	last.Lock()
	defer last.Unlock()
	if sig == "" || last.sig != sig {
		return nil
	}
	c := *last.img
	c.emitted = nil
	return &c
}

func remember(sig string, img *Image) {
	last.Lock()
	defer last.Unlock()
	last.sig, last.img = sig, img
}
