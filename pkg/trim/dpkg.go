package trim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

// DpkgInfoDir is where dpkg records what each package installed: one
// <package>[:<arch>].list a package, one absolute path a line (dpkg's
// src/main/filesdb.c writes them; `dpkg -L` reads them).
const DpkgInfoDir = "var/lib/dpkg/info"

// maxDpkgList bounds what one .list file may cost: Debian's largest
// (linux-image's, texlive's) are a few megabytes.
const maxDpkgList = 64 << 20

// DpkgDB is the ownership a Debian or Ubuntu root records about itself.
// dpkg's diversions (var/lib/dpkg/diversions) are not read: a diverted
// file is attributed to the package whose .list names the path, which for
// the files the policy is about (CNI configurations, crictl.yaml, units)
// no runtime package diverts.
type DpkgDB struct {
	Owners   *Owners
	Packages int // distinct package names with a .list
	// Ignored counts the lines and files that were not understood
	// (garbage, a path without a leading /, a line over PathMax, a file
	// name that is no package name): their files are owned by "unknown".
	Ignored int
}

// Describe is the line commands print about where owners came from.
func (db *DpkgDB) Describe(input string) string {
	plural := "s"
	if db.Packages == 1 {
		plural = ""
	}
	s := fmt.Sprintf("owners: from the dpkg database in %s (%d package%s)", input, db.Packages, plural)
	if db.Ignored > 0 {
		s += fmt.Sprintf("; %d unreadable entries ignored, their files are owned by %s", db.Ignored, Unknown)
	}
	return s
}

func newDpkgDB() *DpkgDB {
	o := NewOwners()
	o.Unowned = Unknown
	return &DpkgDB{Owners: o}
}

// DpkgPackage returns the package a .list file (its base name) is about:
// dpkg names it <package>.list or, for a Multi-Arch: same package,
// <package>:<arch>.list. ok is false for anything else.
func DpkgPackage(base string) (string, bool) {
	name, ok := strings.CutSuffix(base, ".list")
	if !ok {
		return "", false
	}
	name, _, _ = strings.Cut(name, ":")
	// Debian Policy 5.6.1: lower case letters, digits, + - and ., at
	// least two characters, starting with a letter or digit.
	if len(name) < 2 {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '+' || c == '-' || c == '.'):
		default:
			return "", false
		}
	}
	return name, true
}

// ParseDpkgList records that pkg installed each path of a .list file and
// returns how many lines it could not take. Bad content is never an error:
// a line that is not an absolute path within the limits is skipped, and
// the file it meant is owned by "unknown". Only a read error is returned.
func (o *Owners) ParseDpkgList(r io.Reader, pkg string) (ignored int, err error) {
	o.packages[pkg] = true // a package with an empty list is still present
	br := bufio.NewReaderSize(io.LimitReader(r, maxDpkgList), pathx.PathMax+2)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// Longer than any path: skip to the end of the line.
			ignored++
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			if err == io.EOF {
				return ignored, nil
			}
			if err != nil {
				return ignored, err
			}
			continue
		}
		if len(line) > 0 && !o.addDpkgLine(pkg, strings.TrimSuffix(string(line), "\n")) {
			ignored++
		}
		if err == io.EOF {
			return ignored, nil
		}
		if err != nil {
			return ignored, err
		}
	}
}

func (o *Owners) addDpkgLine(pkg, line string) bool {
	if line == "" {
		return true
	}
	p, ok := strings.CutPrefix(line, "/")
	if !ok {
		return false
	}
	if p == "" || p == "." {
		return true // "/." opens every list: the root itself
	}
	clean, err := pathx.CleanRule(p)
	if err != nil {
		return false
	}
	o.Add(pkg, clean)
	return true
}

// LoadDpkg reads the dpkg database of the input at name, a tree or an
// archive; nil when it has none (no var/lib/dpkg/info). A tree's files are
// read beneath it through os.Root, never following a symlink out. An
// archive is read once through for its .list files (which come after
// etc/, so a streaming apply needs them first): the input is a file and is
// opened, and decompressed, again by the caller. Reading it twice costs
// a second decompression, not disk space or memory as a spool of the
// archive would. Audit does not call it for an archive: it reads the
// database in its one pass (AuditInput.Dpkg).
func LoadDpkg(name string, open container.OpenOptions) (*DpkgDB, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return loadDpkgTree(name)
	}
	return loadDpkgArchive(name, open)
}

func loadDpkgTree(dir string) (*DpkgDB, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	info, err := root.Open(DpkgInfoDir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path.Join(dir, DpkgInfoDir), err)
	}
	ents, err := info.ReadDir(-1)
	info.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path.Join(dir, DpkgInfoDir), err)
	}
	db := newDpkgDB()
	var lists []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".list") {
			lists = append(lists, e.Name())
		}
	}
	slices.Sort(lists)
	for _, base := range lists {
		rel := DpkgInfoDir + "/" + base
		fi, err := root.Lstat(rel)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, rel), err)
		}
		pkg, ok := DpkgPackage(base)
		if !ok || !fi.Mode().IsRegular() {
			db.Ignored++
			continue
		}
		f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, rel), err)
		}
		n, err := db.Owners.ParseDpkgList(f, pkg)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, rel), err)
		}
		db.Ignored += n
	}
	db.Packages = len(db.Owners.packages)
	return db, nil
}

func loadDpkgArchive(name string, open container.OpenOptions) (*DpkgDB, error) {
	open.Digest = false
	in, err := container.Open(name, open)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	var scan dpkgScan
	for {
		e, err := in.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, dpkgReadError(name, err)
		}
		if err := scan.entry(name, e, in); err != nil {
			return nil, err
		}
	}
	return scan.done(), nil
}

func dpkgReadError(name string, err error) error {
	return fmt.Errorf("%s: reading the dpkg database: %w", name, err)
}

// dpkgScan gathers an archive's dpkg database from its entries as they
// are read, in one pass with whatever else reads them (Audit).
type dpkgScan struct {
	db    *DpkgDB // made when needed, or beforehand (dpkgTee)
	found bool    // var/lib/dpkg/info or a file in it was seen
}

// entry looks at e, whose data is data; it reads the data only of a
// .list file of the database. name is the input's, for errors.
func (s *dpkgScan) entry(name string, e *archive.Entry, data io.Reader) error {
	clean, err := pathx.Clean(e.Name)
	if err != nil {
		return nil // the real pass reports it
	}
	dir, base := path.Split(clean)
	if clean != DpkgInfoDir && dir != DpkgInfoDir+"/" {
		return nil
	}
	if s.db == nil {
		s.db = newDpkgDB()
	}
	s.found = true
	if clean == DpkgInfoDir || !strings.HasSuffix(base, ".list") {
		return nil
	}
	pkg, ok := DpkgPackage(base)
	if !ok || e.Type != archive.TypeRegular {
		s.db.Ignored++
		return nil
	}
	n, err := s.db.Owners.ParseDpkgList(data, pkg)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", name, clean, err)
	}
	s.db.Ignored += n
	return nil
}

// done returns the database, nil if the archive has none.
func (s *dpkgScan) done() *DpkgDB {
	if !s.found {
		return nil
	}
	s.db.Packages = len(s.db.Owners.packages)
	return s.db
}
