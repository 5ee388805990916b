package owners

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"unicode"

	"github.com/rootfs-trim/rootfs-trim/internal/bigbuf"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
)

// MaxGoBinary bounds the executable whose Go build information is read
// where the input streams past once (an archive, an initrd): its data is
// held whole while debug/buildinfo looks for the section, and the caller
// reads it from there. kicbase's largest (dockerd) is about 80 MB.
const MaxGoBinary = 256 << 20

// elfMagic opens every ELF file; only those are read whole. Go binaries
// of other systems (PE, Mach-O) are no Linux root's.
var elfMagic = []byte("\x7fELF")

// goBuild is the owner a Go binary's build information names: its main
// module and the module's version, or, for a GOPATH build, which records
// no module, the main package's path and no version. A version of
// "(devel)" (a build from a checkout without VCS stamping) is unknown.
type goBuild struct {
	owner, version string
}

// readGoBuild reads the Go build information of r; ok is false for
// anything that is no Go binary or names no usable owner.
func readGoBuild(r io.ReaderAt) (b goBuild, ok bool) {
	bi, err := buildinfo.Read(r)
	if err != nil {
		return goBuild{}, false
	}
	switch {
	case bi.Main.Path != "":
		b = goBuild{owner: bi.Main.Path, version: bi.Main.Version}
	default:
		b = goBuild{owner: bi.Path}
	}
	if !validVersion(b.version) {
		b.version = "" // "(devel)", or none
	}
	return b, validModulePath(b.owner)
}

// validModulePath keeps out of reports and locks what no Go toolchain
// writes: an empty or overlong path, spaces, control characters.
func validModulePath(p string) bool {
	return p != "" && len(p) <= 2*maxVersion && !strings.ContainsFunc(p, func(r rune) bool {
		return r > unicode.MaxASCII || !unicode.IsGraphic(r) || unicode.IsSpace(r)
	})
}

// minGoBinary is below the smallest Go binary (an empty main, stripped,
// is about a megabyte): scripts and small tools are not read for build
// information, and an image's layer is not read again for them.
const minGoBinary = 256 << 10

// mayBeGoBinary says whether e is worth reading for build information:
// a regular executable between minGoBinary and MaxGoBinary.
func mayBeGoBinary(e *archive.Entry) bool {
	return e.Type == archive.TypeRegular && e.Mode&0o111 != 0 && e.Size >= minGoBinary && e.Size <= MaxGoBinary
}

// goBinaries gathers, as an input streams past, the Go build information
// of its executables, by path. An executable is read whole into held's
// buffer, reused from one to the next and grown as its data comes: from
// bigbuf once it reaches a MiB, since on the Go heap each growth faulted
// in fresh pages and started a collection (make bench: audit-dpkg-gzip).
type goBinaries struct {
	found map[string]goBuild
	held  *bigbuf.Held
}

// entry reads e (clean, its path) when it may be a Go binary and returns
// what it read of data, which the caller reads before the rest; ok is
// false when it read nothing. The bytes are valid until the next entry.
func (g *goBinaries) entry(clean string, e *archive.Entry, data io.Reader) (read []byte, ok bool, err error) {
	if !mayBeGoBinary(e) {
		return nil, false, nil
	}
	size := int(e.Size)
	buf := g.room(0, min(size, 64<<10))
	// Data shorter than its header says is no error here: the caller's
	// reader says so (found by FuzzGoBinaries).
	n, err := io.ReadFull(data, buf[:len(elfMagic)])
	if err == nil && bytes.Equal(buf[:n], elfMagic) {
		// Grown by what arrives, not by the size the header claims.
		for err == nil && n < size {
			if n == len(buf) {
				buf = g.room(n, min(2*n, size))
			}
			var m int
			m, err = io.ReadFull(data, buf[n:])
			n += m
		}
		if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
			if b, ok := readGoBuild(bytes.NewReader(buf[:n])); ok {
				g.add(clean, b)
			}
		}
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return buf[:n], true, err
}

// room returns the buffer with room for n bytes, its first keep bytes
// kept.
func (g *goBinaries) room(keep, n int) []byte {
	if g.held == nil {
		g.held = bigbuf.Hold(g)
	}
	return g.held.Grow(keep, n)
}

// Contradiction is a binary whose owners list (ListsDir) names a
// version that its Go build information contradicts.
type Contradiction struct {
	Path, Package, Listed string
	Module, Version       string
}

func (c Contradiction) String() string {
	return fmt.Sprintf("%s: the owners list of %s says version %s, its Go build information %s %s", c.Path, c.Package, c.Listed, c.Module, c.Version)
}

// addGoBuilt gives each binary of found that no record names its build
// information's owner, and the module its version; where an owners list
// names the binary and its own version, which the build information
// contradicts, it says so (Contradictions). dpkg's versions are Debian's
// own (1.6.20~ds1-1), never a module's, and are not compared. A binary an
// earlier apply's index gives its module keeps that owner, and the
// module gets its version again, which the index does not record.
func (db *DB) addGoBuilt(found map[string]goBuild) {
	for _, p := range slices.Sorted(maps.Keys(found)) {
		b := found[p]
		if pkgs := db.Owners.Of(p); len(pkgs) > 0 {
			pkg := pkgs[len(pkgs)-1]
			listed := db.Versions[pkg]
			switch {
			case db.Index > 0 && pkg == b.owner:
				db.addModule(p, b)
			case db.Local[pkg] && listed != "" && b.version != "" && strings.TrimPrefix(listed, "v") != strings.TrimPrefix(b.version, "v"):
				db.Contradictions = append(db.Contradictions, Contradiction{Path: p, Package: pkg, Listed: listed, Module: b.owner, Version: b.version})
			}
			continue
		}
		db.Owners.Add(b.owner, p)
		db.GoFiles++
		db.addModule(p, b)
	}
}

// addModule records that the binary at p belongs to b's module.
func (db *DB) addModule(p string, b goBuild) {
	if db.Modules == nil {
		db.Modules, db.ModuleFiles = map[string]string{}, map[string][]string{}
	}
	db.ModuleFiles[b.owner] = append(db.ModuleFiles[b.owner], p)
	if b.version != "" || db.Modules[b.owner] == "" {
		db.Modules[b.owner] = b.version
	}
}

// goBinariesOfTree reads the Go build information of root's executables
// that db leaves to it (goCandidate). A tree's files are opened, not read:
// debug/buildinfo reads the headers and the one section it needs.
func goBinariesOfTree(root *os.Root, db *DB) (map[string]goBuild, error) {
	var g goBinaries
	top, err := root.Stat(".")
	if err != nil {
		return nil, err
	}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// One filesystem, as the tree reader walks it: a live root's
			// /proc, /sys and /dev are mounts, and no file of the image.
			if fi, err := d.Info(); err == nil && p != "." && !sameDevice(fi, top) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !db.goCandidate(p) {
			return nil
		}
		fi, err := d.Info()
		if err != nil || fi.Mode()&0o111 == 0 || fi.Size() < minGoBinary {
			return err
		}
		f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if b, ok := readGoBuild(f); ok {
			g.add(p, b)
		}
		return nil
	})
	return g.found, err
}

// goBinariesOfImage reads the Go build information of the executables of
// img's merged view that db leaves to it (goCandidate), reading again
// only the layers that hold them, each binary held while it is read.
func goBinariesOfImage(img *ociimage.Image, db *DB) (map[string]goBuild, error) {
	var g goBinaries
	err := img.EachFile(func(name string, e *archive.Entry) bool {
		return mayBeGoBinary(e) && db.goCandidate(name)
	}, func(e *archive.Entry, data io.Reader) error {
		clean, err := pathx.Clean(e.Name)
		if err == nil {
			_, _, err = g.entry(clean, e, data)
		}
		return err
	})
	return g.found, err
}

// goCandidate says whether the executable at p is worth reading: no
// record names it, an owners list that gives a version (to compare), or
// an earlier apply's index that names a Go module (a path: no package
// name has a slash), whose version it does not record; a dpkg package's
// binaries are left alone. db may be nil.
func (db *DB) goCandidate(p string) bool {
	pkgs := db.Table().Of(p)
	if len(pkgs) == 0 {
		return true
	}
	last := pkgs[len(pkgs)-1]
	return db.Local[last] && db.Versions[last] != "" || db.Index > 0 && strings.Contains(last, "/")
}

func (g *goBinaries) add(clean string, b goBuild) {
	if g.found == nil {
		g.found = map[string]goBuild{}
	}
	g.found[clean] = b
}

// sameDevice reports whether a and b are on one filesystem.
func sameDevice(a, b os.FileInfo) bool {
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	return !okA || !okB || sa.Dev == sb.Dev
}
