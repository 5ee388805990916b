package iso9660

import (
	"encoding/binary"
	"fmt"
	"path"
	"strings"
)

// An image holds up to three directory trees of names for one set of
// extents: the ISO 9660 names, Rock Ridge's (NM) over them, and Joliet's
// own tree. Each bootloader reads one of them by its own rules, and this
// reader by a third; a hostile image can make them name different files.
// A view is one consumer's reading; checkViews requires every path the
// boot configurations name, and the configurations themselves, to be the
// same file in every view.
type view struct {
	who  string
	root record
	rr   bool // names from Rock Ridge NM where a record has one
	// isoName is the name of a record without NM, and isoFold whether
	// it compares ignoring case.
	isoName func([]byte) string
	isoFold bool
}

// views are the readings of the bootloaders, an NM name compared exactly,
// an ISO 9660 one ignoring case:
//
//   - GRUB (grub-core/fs/iso9660.c, grub_iso9660_mount and
//     grub_iso9660_iterate_dir): with Rock Ridge the primary tree; without,
//     the Joliet tree if there is one (names compared exactly), else the
//     ISO 9660 names;
//   - isolinux (syslinux's core/fs/iso9660/iso9660.c, iso_fs_init,
//     iso_find_entry and iso_compare_name): always the primary tree;
//   - the Joliet tree wherever there is one, as GRUB reads it: both trees
//     name the same boot files.
func (im *Image) views() []view {
	grub := view{who: "GRUB", root: im.root, rr: im.rr, isoName: grubISOName, isoFold: true}
	isolinux := view{who: "isolinux", root: im.root, rr: im.rr, isoName: isolinuxISOName, isoFold: true}
	if im.joliet == nil {
		return []view{grub, isolinux}
	}
	joliet := view{who: "GRUB (Joliet)", root: *im.joliet, isoName: grubJolietName}
	if im.rr {
		return []view{grub, isolinux, joliet}
	}
	return []view{joliet, isolinux}
}

// grubISOName is grub_iso9660_iterate_dir's ISO 9660 name: this reader's,
// up to a NUL and lower-cased.
func grubISOName(b []byte) string { return foldASCII(cutVersion(string(cString(b)))) }

// isolinuxISOName is syslinux's iso_convert_name.
func isolinuxISOName(b []byte) string {
	n := string(cString(b))
	if i := strings.IndexByte(n, ';'); i >= 0 {
		n = n[:i]
	}
	n = foldASCII(n)
	for len(n) > 1 && n[len(n)-1] == '.' {
		n = n[:len(n)-1]
	}
	return n
}

// grubJolietName is grub_iso9660_iterate_dir's Joliet name.
func grubJolietName(b []byte) string {
	n := ucs2(b)
	if i := strings.IndexByte(n, 0); i >= 0 {
		n = n[:i]
	}
	if i := strings.LastIndexByte(n, ';'); i >= 0 {
		n = n[:i]
	}
	return n
}

// foldASCII lower-cases ASCII letters only, as grub_tolower and
// syslinux's iso_tolower do.
func foldASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

func goodName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00")
}

// viewEntry is a file as one view finds it.
type viewEntry struct {
	name      string
	fold      bool // compared ignoring case
	extent    uint32
	size      uint32
	dir, link bool
}

// dirNames are one directory's names, keyed by their folded form.
type dirNames map[string][]viewEntry

// add adds e, or returns the name it clashes with: one a lookup could
// find for either (GRUB's find_file_iter and isolinux's iso_find_entry
// take the first, an audit must not judge the other).
func (d dirNames) add(e viewEntry) (string, bool) {
	k := foldASCII(e.name)
	for _, o := range d[k] {
		if o.fold || e.fold || o.name == e.name {
			return o.name, true
		}
	}
	d[k] = append(d[k], e)
	return "", false
}

// errTwice is a directory holding name and other, which one lookup
// could find.
func errTwice(dir, name, other string) error {
	also := ""
	if other != name {
		also = fmt.Sprintf(" (also as %q)", other)
	}
	return errorf(dir, "%q twice%s: bootloaders take the first record, an audit must not judge another", name, also)
}

// find is the entry a lookup of name finds.
func (d dirNames) find(name string) (viewEntry, bool) {
	for _, o := range d[foldASCII(name)] {
		if o.fold || o.name == name {
			return o, true
		}
	}
	return viewEntry{}, false
}

// viewIndex is a view's directories, by their path in the view.
type viewIndex map[string]dirNames

// resolve finds p in the view, component by component.
func (x viewIndex) resolve(p string) (viewEntry, bool) {
	dir, e := "/", viewEntry{dir: true}
	for _, c := range strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/") {
		if c == "" {
			continue
		}
		d := x[dir]
		if d == nil || !e.dir || e.link {
			return viewEntry{}, false
		}
		var ok bool
		if e, ok = d.find(c); !ok {
			return viewEntry{}, false
		}
		dir = path.Join(dir, e.name)
	}
	return e, true
}

// walkView reads the tree of v, every directory checked for a name twice
// as v compares names.
func (im *Image) walkView(v view) (viewIndex, error) {
	im.entries, im.dirBytes = 0, 0
	x := viewIndex{}
	return x, im.walkDir("/", v.root, map[uint32]bool{v.root.extent: true}, 0, func(dir string, r record, names dirNames) (string, *record, error) {
		x[dir] = names
		e := viewEntry{extent: r.extent, size: r.size, dir: r.isDir()}
		var su susp
		if v.rr {
			var err error
			if su, err = im.systemUse(dir, r); err != nil {
				return "", nil, err
			}
		}
		if su.hasName {
			e.name = string(cString([]byte(su.name)))
		} else {
			e.name, e.fold = v.isoName(r.name), v.isoFold
		}
		// Neither bootloader follows a relocation (CL): a path through
		// one is not the file this reader finds, which checkViews sees.
		e.link = su.hasLink || su.child != 0
		if !goodName(e.name) {
			return "", nil, errorf(dir, "bad file name %q", e.name)
		}
		if other, clash := names.add(e); clash {
			return "", nil, errTwice(dir, e.name, other)
		}
		if e.dir && !e.link {
			return path.Join(dir, e.name), &r, nil
		}
		return "", nil, nil
	})
}

// checkViews requires each file the boot configurations name (the
// configurations, the initrds, the kernels) to be the same extent in
// every bootloader's view as in this reader's, and every file a view
// finds under a configuration's name to be one this reader reads too;
// and checkBootInfo.
func (im *Image) checkViews(b *Boot) error {
	if err := im.checkBootInfo(); err != nil {
		return err
	}
	ours, err := im.walk(func(File) error { return nil })
	if err != nil {
		return err
	}
	var paths []string
	for _, c := range b.Configs {
		if e, ok := ours.resolve(c); ok && !e.dir {
			paths = append(paths, c)
		}
	}
	for _, ird := range b.Initrds {
		paths = append(paths, ird.Paths()...)
	}
	paths = append(paths, b.Kernels...)
	for _, v := range im.views() {
		x, err := im.walkView(v)
		if err != nil {
			return fmt.Errorf("as %s reads the image: %w", v.who, err)
		}
		for _, p := range paths {
			if err := sameFile(ours, x, p, v.who); err != nil {
				return err
			}
		}
		for dir, names := range x {
			for _, es := range names {
				for _, e := range es {
					if !e.dir && matchName(e.name, configNames) {
						if err := sameFile(ours, x, path.Join(dir, e.name), v.who); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// sameFile requires p to be the same extent, size and kind in x as in
// ours, or missing from both.
func sameFile(ours, x viewIndex, p, who string) error {
	a, okA := ours.resolve(p)
	b, okB := x.resolve(p)
	describe := func(e viewEntry, ok bool) string {
		switch {
		case !ok:
			return "nothing"
		case e.link:
			return "a symlink or relocated directory"
		case e.dir:
			return fmt.Sprintf("a directory at sector %d", e.extent)
		}
		return fmt.Sprintf("%d bytes at sector %d", e.size, e.extent)
	}
	// A directory's or a symlink's size is not its content's.
	sized := !a.dir && !a.link
	if okA != okB || (okA && (a.extent != b.extent || (sized && a.size != b.size) || a.dir != b.dir || a.link != b.link)) {
		return errorf(p, "%s reads %s there, this reader %s: its names differ between the image's trees", who, describe(b, okB), describe(a, okA))
	}
	return nil
}

// checkBootInfo refuses a boot info table (what mkisofs -boot-info-table
// writes at byte 8 of an isolinux boot image: the primary descriptor's
// sector, then the image's own) naming another primary descriptor than
// the one at sector 16, which Open read.
func (im *Image) checkBootInfo() error {
	imgs, err := im.BootImages()
	if err != nil {
		return err
	}
	for _, bi := range imgs {
		var t [16]byte
		if IsFAT(im.r, bi.Offset()) || im.inImage("boot catalogue", bi.Offset(), int64(len(t))) != nil {
			continue
		}
		if _, err := im.r.ReadAt(t[:], bi.Offset()); err != nil {
			return fmt.Errorf("boot image at sector %d: %w", bi.LBA, err)
		}
		pvd, file := binary.LittleEndian.Uint32(t[8:]), binary.LittleEndian.Uint32(t[12:])
		if file == bi.LBA && pvd != 16 && pvd != 0 {
			return errorf("boot catalogue", "the boot image at sector %d has a boot info table naming a primary volume descriptor at sector %d, not 16: isolinux reads that one", bi.LBA, pvd)
		}
	}
	return nil
}
