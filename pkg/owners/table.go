package owners

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// Unknown is the owner reported when there is no ownership data at all.
const Unknown = "unknown"

// Overlay is the owner reported for a file that ownership data exists for
// the tree but that no package installed: Buildroot's file list leaves out
// overlay files and what post-build scripts create.
const Overlay = "(overlay or script)"

// Table maps cleaned paths to the packages that installed them, in the
// order Buildroot listed them: the last one wrote the file's content.
type Table struct {
	byPath   map[string][]string
	packages map[string]bool
	// alone holds, per package, the one-element owner list that the
	// paths only it installed share: most paths have a single owner, and
	// a slice each was half the allocations of loading a target's list.
	alone map[string][]string
	// Fixed, when set, owns every path: a per-package tree or tarball.
	Fixed string
	// Unowned, when set, is the owner of a path no package installed
	// (default Overlay): Unknown for a dpkg database, where such a path
	// may just as well be a bad or missing entry.
	Unowned string
}

// New returns an empty ownership table.
func New() *Table {
	return &Table{byPath: map[string][]string{}, packages: map[string]bool{}, alone: map[string][]string{}}
}

// Known reports whether any ownership data was loaded.
func (o *Table) Known() bool {
	return o != nil && (o.Fixed != "" || len(o.byPath) > 0)
}

// Of returns the packages that installed path, last writer last.
func (o *Table) Of(path string) []string {
	if o == nil {
		return nil
	}
	if o.Fixed != "" {
		return []string{o.Fixed}
	}
	return o.byPath[path]
}

// Owner is the package to name in reports for path (Name of its owners).
func (o *Table) Owner(path string) string { return o.Name(o.Of(path)) }

// Name is the package to name in reports for a path pkgs installed (Of):
// the last writer; for none, Unowned or Overlay where owners are known at
// all, else Unknown.
func (o *Table) Name(pkgs []string) string {
	switch {
	case len(pkgs) > 0:
		return pkgs[len(pkgs)-1]
	case o.Known() && o.Unowned != "":
		return o.Unowned
	case o.Known():
		return Overlay
	}
	return Unknown
}

// Present reports whether pkg installed anything.
func (o *Table) Present(pkg string) bool {
	if o == nil {
		return false
	}
	return o.Fixed == pkg || o.packages[pkg]
}

// Packages lists every package that installed something.
func (o *Table) Packages() []string {
	var ps []string
	if o.Fixed != "" {
		ps = append(ps, o.Fixed)
	}
	for p := range o.packages {
		ps = append(ps, p)
	}
	return ps
}

// Add records that pkg installed path.
func (o *Table) Add(pkg, path string) {
	list := o.byPath[path]
	if slices.Contains(list, pkg) {
		return
	}
	if len(list) == 0 {
		one, ok := o.alone[pkg]
		if !ok {
			// Capacity 1: a second owner's append copies it.
			one = []string{pkg}[:1:1]
			o.alone[pkg] = one
			o.packages[pkg] = true
		}
		o.byPath[path] = one
		return
	}
	o.byPath[path] = append(list, pkg)
	o.packages[pkg] = true
}

// ReadFileList loads Buildroot's packages-file-list.txt.
func (o *Table) ReadFileList(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	// Sized for the list up front: growing the map through a target's
	// twenty thousand paths was a third of the cost of loading it.
	if fi, err := f.Stat(); err == nil && len(o.byPath) == 0 {
		o.byPath = make(map[string][]string, min(fi.Size()/avgFileListLine, maxPresize))
	}
	return o.ParseFileList(f, name)
}

// avgFileListLine is about the average length of a line of Buildroot's
// packages-file-list.txt (57 bytes on the bench target); maxPresize caps
// what a huge or odd file can make the map reserve before it is read.
const (
	avgFileListLine = 48
	maxPresize      = 1 << 20
)

// ParseFileList reads lines of `<package>,./<path>`. Buildroot's own
// size-stats splits on the first comma only, since paths may hold commas;
// so do we. Errors name file:line.
func (o *Table) ParseFileList(r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 2*pathx.PathMax+1024)
	// A target's list has tens of thousands of lines and a few hundred
	// packages: each package name is checked and allocated once.
	pkgs := map[string]string{}
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if len(text) == 0 {
			continue
		}
		pkgB, pathB, ok := bytes.Cut(text, []byte(","))
		if !ok || len(pkgB) == 0 || len(pathB) == 0 {
			return fmt.Errorf("%s:%d: want <package>,./<path>, got %q", name, line, shorten(string(text)))
		}
		pkg, seen := pkgs[string(pkgB)]
		if !seen {
			if bytes.ContainsAny(pkgB, " \t/") {
				return fmt.Errorf("%s:%d: bad package name %q", name, line, shorten(string(pkgB)))
			}
			pkg = string(pkgB)
			pkgs[pkg] = pkg
		}
		// Without the "./" Buildroot writes, most paths are already
		// clean and cleaning them allocates nothing more.
		clean, err := pathx.CleanRule(strings.TrimPrefix(string(pathB), "./"))
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		o.Add(pkg, clean)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}

func shorten(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// OfIndex are the owners an applied image's index records.
func OfIndex(ix *contract.Index) *Table {
	o := New()
	for pkg, dirs := range ix.Owners {
		for dir, ns := range dirs {
			for _, n := range ns {
				o.Add(pkg, path.Join(dir, n))
			}
		}
	}
	return o
}

// ForIndex are the packages of the output's files, those kept and
// those placed, by their paths there, for the index: the same for an
// apply of that output (OfIndex). nil when owners are not known path by path
// (none, or --package's one package for everything).
func (o *Table) ForIndex(kept, placed map[string]bool) map[string]map[string][]string {
	if o == nil || o.Fixed != "" || !o.Known() {
		return nil
	}
	out := map[string]map[string][]string{}
	add := func(p string) {
		if !utf8.ValidString(p) {
			return
		}
		dir, name := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		for _, pkg := range o.Of(p) {
			if out[pkg] == nil {
				out[pkg] = map[string][]string{}
			}
			out[pkg][dir] = append(out[pkg][dir], name)
		}
	}
	for p := range kept {
		if !placed[p] {
			add(p)
		}
	}
	for p := range placed {
		add(p)
	}
	for _, dirs := range out {
		for _, ns := range dirs {
			sort.Strings(ns)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
