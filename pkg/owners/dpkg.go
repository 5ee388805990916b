package owners

import (
	"bufio"
	"bytes"
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
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
)

// MaxIndex bounds the copy of an applied image's index that is read (and
// that Recording keeps for the replay): apply writes a few kilobytes;
// contract.DecodeIndex refuses far less than this anyway.
const MaxIndex = 64 << 20

// DpkgInfoDir is where dpkg records what each package installed: one
// <package>[:<arch>].list a package, one absolute path a line (dpkg's
// src/main/filesdb.c writes them; `dpkg -L` reads them).
const DpkgInfoDir = "var/lib/dpkg/info"

// DpkgStatus is dpkg's status file: a stanza a package, whose Package:
// and Version: give the versions check records.
const DpkgStatus = "var/lib/dpkg/status"

// maxVersion bounds a version string; longer ones are ignored.
const maxVersion = 128

// maxDpkgList bounds what one .list file may cost: Debian's largest
// (linux-image's, texlive's) are a few megabytes.
const maxDpkgList = 64 << 20

// ListsDir is where an image records what no package manager installed:
// a Dockerfile's RUN step that unpacks a release tarball writes
// <package>.list there, in dpkg's .list form (one absolute path a line),
// and may write <package>.version, one line. It is read with the dpkg
// database and after it, so a tarball that overwrote a packaged file is
// that file's last writer. It lies outside /var, which a KIC node mounts
// as a volume.
const ListsDir = "usr/local/share/rootfs-trim/owners"

// DB is the ownership a Debian or Ubuntu root records about itself:
// dpkg's database and the image's own ListsDir. dpkg's diversions
// (var/lib/dpkg/diversions) are not read: a diverted file is attributed
// to the package whose .list names the path, which for the files the
// policy is about (CNI configurations, crictl.yaml, units) no runtime
// package diverts.
type DB struct {
	Owners   *Table
	Packages map[string]bool // the package names with a dpkg .list
	Local    map[string]bool // the package names with a list in ListsDir
	// Index counts the packages an applied image's index names, when the
	// owners are its (no dpkg database, no ListsDir).
	Index int
	// Ignored counts the lines and files that were not understood
	// (garbage, a path without a leading /, a line over PathMax, a file
	// name that is no package name): their files are owned by "unknown".
	Ignored int
	// Versions are the packages' versions: dpkg's status file, then
	// ListsDir's <package>.version files.
	Versions map[string]string
	// GoFiles counts the executables no record names that their Go build
	// information gave an owner (its main module); Modules are those
	// modules' versions ("" where unknown: "(devel)", a GOPATH build),
	// and ModuleFiles the files each owns, sorted.
	GoFiles     int
	Modules     map[string]string
	ModuleFiles map[string][]string
	// Contradictions name the binaries whose owners list gives a version
	// that their Go build information contradicts, a line each.
	Contradictions []Contradiction
}

// indexDB is the ownership an applied image's index records, nil when
// it records none or cannot be read (audit only reads; apply refuses
// such an index when it reads it).
func indexDB(data []byte) *DB {
	if data == nil {
		return nil
	}
	ix, err := contract.DecodeIndex(bytes.NewReader(data))
	if err != nil || len(ix.Owners) == 0 {
		return nil
	}
	db := newDB()
	db.Owners = OfIndex(ix)
	db.Owners.Unowned = Unknown
	db.Index = len(ix.Owners)
	return db
}

// Table is db's owners; an empty table for no database (nil).
func (db *DB) Table() *Table {
	if db == nil {
		return New()
	}
	return db.Owners
}

// Describe is the line commands print about where owners came from.
func (db *DB) Describe(input string) string {
	var s string
	goOnly := db.Index == 0 && len(db.Local) == 0 && len(db.Packages) == 0 && db.GoFiles > 0
	switch {
	case db.Index > 0:
		s = fmt.Sprintf("owners: from the index of an earlier apply in %s (/%s, %s)", input, contract.IndexPath, count(db.Index, "package"))
	case goOnly:
		s = fmt.Sprintf("owners: %s from Go build information in %s", count(db.GoFiles, "file"), input)
	case len(db.Local) == 0:
		s = fmt.Sprintf("owners: from the dpkg database in %s (%s)", input, count(len(db.Packages), "package"))
	case len(db.Packages) == 0:
		s = fmt.Sprintf("owners: from /%s in %s (%s)", ListsDir, input, count(len(db.Local), "package"))
	default:
		s = fmt.Sprintf("owners: from the dpkg database in %s (%s) and /%s (%s)", input, count(len(db.Packages), "package"), ListsDir, count(len(db.Local), "package"))
	}
	if db.GoFiles > 0 && !goOnly {
		s += fmt.Sprintf("; %s from Go build information", count(db.GoFiles, "file"))
	}
	if db.Ignored > 0 {
		s += fmt.Sprintf("; %d unreadable entries ignored, their files are owned by %s", db.Ignored, Unknown)
	}
	for _, c := range db.Contradictions {
		s += "; " + c.String()
	}
	return s
}

// count is n of what: "1 file", "2 files".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func newDB() *DB {
	o := New()
	o.Unowned = Unknown
	return &DB{Owners: o, Versions: map[string]string{}, Packages: map[string]bool{}, Local: map[string]bool{}}
}

// listFile says what a file of the database is, by its clean path: a
// package's .list (in dpkg's info directory or ListsDir), an ListsDir
// .version, dpkg's status file, or nothing.
type listFile int

const (
	notDB listFile = iota
	dpkgList
	localList
	localVersion
	dpkgStatus
)

func classifyDBPath(clean string) listFile {
	dir, base := path.Split(clean)
	switch {
	case clean == DpkgStatus:
		return dpkgStatus
	case dir == DpkgInfoDir+"/" && strings.HasSuffix(base, ".list"):
		return dpkgList
	case dir == ListsDir+"/" && strings.HasSuffix(base, ".list"):
		return localList
	case dir == ListsDir+"/" && strings.HasSuffix(base, ".version"):
		return localVersion
	}
	return notDB
}

// read takes one file of the database; regular says it is a regular file
// (anything else is ignored and counted).
func (db *DB) read(kind listFile, base string, regular bool, r io.Reader) error {
	if kind == dpkgStatus {
		if regular {
			return db.readStatus(r)
		}
		db.Ignored++
		return nil
	}
	name := base
	if kind == localVersion {
		name = strings.TrimSuffix(base, ".version") + ".list"
	}
	pkg, ok := DpkgPackage(name)
	if !ok || !regular {
		db.Ignored++
		return nil
	}
	switch kind {
	case localVersion:
		return db.readVersion(pkg, r)
	case localList:
		db.Local[pkg] = true
	default:
		db.Packages[pkg] = true
	}
	n, err := db.Owners.ParseDpkgList(r, pkg)
	db.Ignored += n
	return err
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
	if len(name) < 2 || !lowerOrDigit(rune(name[0])) || strings.ContainsFunc(name[1:], func(r rune) bool {
		return !lowerOrDigit(r) && !strings.ContainsRune("+-.", r)
	}) {
		return "", false
	}
	return name, true
}

// ParseDpkgList records that pkg installed each path of a .list file and
// returns how many lines it could not take. Bad content is never an error:
// a line that is not an absolute path within the limits is skipped, and
// the file it meant is owned by "unknown". Only a read error is returned.
func (o *Table) ParseDpkgList(r io.Reader, pkg string) (ignored int, err error) {
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

func (o *Table) addDpkgLine(pkg, line string) bool {
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

// Load reads the dpkg database of the input at name, a tree, an
// archive or an image; nil when it has none (no var/lib/dpkg/info, no
// ListsDir, no index of an earlier apply). A tree's files are read
// beneath it through os.Root, never following a symlink out; an image's
// from its merged view (dpkgOfImage). An archive is read once through for
// its .list files, which come after etc/: the caller opens it again, a
// second decompression rather than a spool of the archive.
func Load(name string, open container.OpenOptions) (*DB, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() && !ociimage.IsImage(name, fi) {
		return loadDpkgTree(name)
	}
	return loadDpkgArchive(name, open)
}

// ReadsFirst reports whether name is a directory (a tree, whose records
// are read first, beneath it) or an image (whose first pass over its
// layers' headers keeps them, ociimage.Image.Files): Load costs no read
// of the whole input there.
func ReadsFirst(name string) bool {
	if name == container.Stdin {
		return false
	}
	fi, err := os.Stat(name)
	return err == nil && (fi.IsDir() || ociimage.IsImage(name, fi))
}

func loadDpkgTree(dir string) (*DB, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	db, err := recordsOfTree(dir, root)
	if err != nil {
		return nil, err
	}
	found, err := goBinariesOfTree(root, db)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return withGoBuilt(db, found), nil
}

// recordsOfTree reads the records of the tree dir, opened as root: its
// dpkg database and ListsDir, else its index; nil when it has none.
func recordsOfTree(dir string, root *os.Root) (*DB, error) {
	var files []string
	found := false
	for _, d := range []string{DpkgInfoDir, ListsDir} {
		names, ok, err := dirNames(root, d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, d), err)
		}
		found = found || ok
		files = append(files, names...)
	}
	if !found {
		return indexOfTree(root)
	}
	// The status file, dpkg's lists, then the image's own: the last
	// writer last.
	files = append([]string{DpkgStatus}, files...)
	db := newDB()
	for _, rel := range files {
		kind := classifyDBPath(rel)
		if kind == notDB {
			continue
		}
		fi, err := root.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) && kind == dpkgStatus {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, rel), err)
		}
		var f *os.File
		var data io.Reader = archive.NoData{} // not a regular file: counted, never read
		if fi.Mode().IsRegular() {
			if f, err = root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0); err != nil {
				return nil, fmt.Errorf("%s: %w", path.Join(dir, rel), err)
			}
			data = f
		}
		err = db.read(kind, path.Base(rel), f != nil, data)
		if f != nil {
			f.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(dir, rel), err)
		}
	}
	return db, nil
}

// indexOfTree is the ownership the index of an applied tree records,
// read beneath root; nil when there is none.
func indexOfTree(root *os.Root) (*DB, error) {
	f, err := root.OpenFile(contract.IndexPath, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil // no index, or no regular file: no owners from it
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxIndex))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", contract.IndexPath, err)
	}
	return indexDB(data), nil
}

// dirNames lists the files of dir beneath root, sorted, as paths from
// root; ok is false when dir does not exist or is no directory.
func dirNames(root *os.Root, dir string) (names []string, ok bool, err error) {
	d, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.Is(err, syscall.ENOTDIR) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, false, err
	}
	for _, e := range ents {
		names = append(names, dir+"/"+e.Name())
	}
	slices.Sort(names)
	return names, true, nil
}

func loadDpkgArchive(name string, open container.OpenOptions) (*DB, error) {
	open.Digest = false
	if open.ImageData == nil {
		open.ImageData = IsRecord // an image's first pass keeps them
	}
	in, err := container.Open(name, open)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if img := in.Image(); img != nil {
		return dpkgOfImage(img)
	}
	later := NewLater[struct{}](name, 0)
	for {
		e, err := in.Next()
		if err == io.EOF {
			return later.Done()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if _, err := later.Entry(e, in); err != nil {
			return nil, err
		}
	}
}

// dbScan gathers an archive's or an image's dpkg database from its
// entries as they are read (Later, dpkgOfImage): dpkg's status file and
// lists, then ListsDir's lists and versions, held back (within one list's
// bound) and read last, as a tree's are: in an archive ListsDir, under
// usr/, comes before var/lib/dpkg.
type dbScan struct {
	db    *DB  // made when needed, or beforehand (Later)
	found bool // a directory or file of the database was seen
	local []localFile
	held  int64
	// index is an applied image's index, whose owners count when the
	// image has no database (a release ISO rootfs-trim trimmed).
	index []byte
	// gobin are the executables' Go build information, given to those
	// no record names once the records are all in (done).
	gobin goBinaries
}

// entry looks at e, whose data is data; it reads the data only of a file
// of the database. name is the input's, for errors.
func (s *dbScan) entry(name string, e *archive.Entry, data io.Reader) error {
	clean, err := pathx.Clean(e.Name)
	if err != nil {
		return nil // the real pass reports it
	}
	if clean == contract.IndexPath {
		s.index = nil
		if e.Type == archive.TypeRegular {
			if s.index, err = io.ReadAll(io.LimitReader(data, MaxIndex)); err != nil {
				return fmt.Errorf("%s: %s: %w", name, clean, err)
			}
		}
		return nil
	}
	kind := classifyDBPath(clean)
	if kind == notDB && clean != DpkgInfoDir && clean != ListsDir {
		return nil
	}
	if s.db == nil {
		s.db = newDB()
	}
	s.found = true
	if kind == notDB {
		return nil
	}
	regular := e.Type == archive.TypeRegular
	if (kind == localList || kind == localVersion) && regular {
		limit := maxDpkgList - s.held
		if kind == localVersion {
			limit = min(limit, maxVersion+2) // what readVersion reads
		}
		b, err := io.ReadAll(io.LimitReader(data, limit))
		if err != nil {
			return fmt.Errorf("%s: %s: %w", name, clean, err)
		}
		s.held += int64(len(b))
		s.local = append(s.local, localFile{kind, path.Base(clean), b})
		return nil
	}
	if err := s.db.read(kind, path.Base(clean), regular, data); err != nil {
		return fmt.Errorf("%s: %s: %w", name, clean, err)
	}
	return nil
}

// done reads the held-back ListsDir lists and returns the database, nil
// if the archive has none.
func (s *dbScan) done(name string) (*DB, error) {
	db := s.db
	if !s.found {
		db = indexDB(s.index)
	} else {
		for _, lf := range s.local {
			if err := db.read(lf.kind, lf.base, true, bytes.NewReader(lf.data)); err != nil {
				return nil, fmt.Errorf("%s: %s/%s: %w", name, ListsDir, lf.base, err)
			}
		}
		s.local = nil
	}
	return withGoBuilt(db, s.gobin.found), nil
}

// withGoBuilt adds the owners Go build information gives (found) to db,
// which it makes when the input records no other owners.
func withGoBuilt(db *DB, found map[string]goBuild) *DB {
	if len(found) == 0 {
		return db
	}
	if db == nil {
		db = newDB()
	}
	db.addGoBuilt(found)
	return db
}

type localFile struct {
	kind listFile // localList or localVersion
	base string
	data []byte
}

// readStatus takes the versions of dpkg's status file: each stanza's
// Package: and Version:, for a package whose Status: says installed. A
// stanza without them, or with a version that is not one, is skipped and
// counted; only a read error is returned.
func (db *DB) readStatus(r io.Reader) error {
	br := bufio.NewReader(io.LimitReader(r, maxDpkgList))
	var pkg, version, status string
	flush := func() {
		switch {
		case pkg == "" && version == "" && status == "":
		case !strings.HasSuffix(status, " installed"):
		case !validVersion(version):
			db.Ignored++
		default:
			if p, ok := DpkgPackage(pkg + ".list"); ok {
				db.Versions[p] = version
			} else {
				db.Ignored++
			}
		}
		pkg, version, status = "", "", ""
	}
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			flush()
		} else if k, v, ok := strings.Cut(line, ":"); ok && line[0] != ' ' && line[0] != '\t' {
			switch k {
			case "Package":
				pkg = strings.TrimSpace(v)
			case "Version":
				version = strings.TrimSpace(v)
			case "Status":
				status = strings.TrimSpace(v)
			}
		}
		if err == io.EOF {
			flush()
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readVersion takes ListsDir's <pkg>.version: one line, the version.
func (db *DB) readVersion(pkg string, r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, maxVersion+2))
	if err != nil {
		return err
	}
	v := strings.TrimSpace(string(data))
	if !validVersion(v) {
		db.Ignored++
		return nil
	}
	db.Versions[pkg] = v
	return nil
}

// validVersion: a Debian version's characters (and _, which release tags
// use), at most maxVersion bytes.
func validVersion(v string) bool {
	return v != "" && len(v) <= maxVersion && !strings.ContainsFunc(v, func(r rune) bool {
		return !lowerOrDigit(r) && !(r >= 'A' && r <= 'Z') && !strings.ContainsRune(".+~:-_", r)
	})
}

func lowerOrDigit(r rune) bool { return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' }

// dpkgOfImage is the ownership an image records about itself, read from
// its merged view (whiteouts applied) by the same dbScan as an archive's.
// The first pass kept the records' data (ImageData, or IsRecord here): the
// layers are read again only for the Go binaries they leave without an
// owner (goBinariesOfImage).
func dpkgOfImage(img *ociimage.Image) (*DB, error) {
	files, err := img.Files(IsRecord, maxDpkgList)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", img.Path, err)
	}
	var scan dbScan
	for _, f := range files {
		if err := scan.entry(img.Path, f.Entry, bytes.NewReader(f.Data)); err != nil {
			return nil, err
		}
	}
	db, err := scan.done(img.Path)
	if err != nil {
		return nil, err
	}
	found, err := goBinariesOfImage(img, db)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", img.Path, err)
	}
	return withGoBuilt(db, found), nil
}

// IsRecord says whether a clean path is one dbScan looks at: a file of
// the database or ListsDir, those directories, or an earlier apply's
// index.
func IsRecord(clean string) bool {
	return classifyDBPath(clean) != notDB || clean == DpkgInfoDir || clean == ListsDir || clean == contract.IndexPath
}
