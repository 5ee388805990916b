package archive

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
)

// u is an entry of the resolver tests: "d NAME", "f NAME", "l NAME TARGET",
// "h NAME OLD" (a tar hard link), "F NAME INO" (a cpio hard-link member,
// nlink 2), "T" (a trailer).
func u(spec string) *Entry {
	f := strings.SplitN(spec, " ", 3)
	e := &Entry{Mode: 0o644, Nlink: 1}
	if len(f) > 1 {
		e.Name = f[1]
	}
	switch f[0] {
	case "d":
		e.Type, e.Mode = TypeDir, 0o755
	case "f":
		e.Type = TypeRegular
	case "l":
		e.Type, e.Linkname = TypeSymlink, f[2]
	case "h":
		e.Type, e.Linkname = TypeHardlink, f[2]
	case "F":
		e.Type, e.Nlink = TypeRegular, 2
		fmt.Sscan(f[2], &e.Inode)
	case "T":
		e.Type, e.Name = TypeTrailer, trailerName
	default:
		panic(spec)
	}
	return e
}

var netd = []string{"d etc", "d etc/cni", "d etc/cni/net.d"}

// resolverCases are the orders of entries in which a literal name is not
// where it lands, each with where the kernel puts its last entry ("" for
// nowhere), the symlinks it goes through, and whether tar extractors
// disagree on one of its entries (the index of the first the tar view
// refuses, -1 for none).
var resolverCases = []struct {
	name    string
	entries []string
	land    string
	via     []string
	tarBad  int
}{
	{"empty dir then symlink", append(netd, "d x", "l x etc/cni/net.d", "f x/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"x -> etc/cni/net.d"}, 5},
	{"non-empty dir then symlink", append(netd, "d x", "f x/keep", "l x etc/cni/net.d", "f x/00-evil.conflist"),
		"x/00-evil.conflist", nil, 6},
	{"symlink then directory", append(netd, "l x etc/cni/net.d", "d x", "f x/00-evil.conflist"),
		"x/00-evil.conflist", nil, 5},
	{"file then directory", append(netd, "f x", "d x", "f x/00-evil.conflist"),
		"x/00-evil.conflist", nil, -1},
	{"file over a non-empty directory", append(netd, "d x", "f x/keep", "f x", "f x/00-evil.conflist"),
		"x/00-evil.conflist", nil, 6},
	{"a chain of links", append(netd, "l a b", "l b etc/cni", "f a/net.d/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"a -> b", "b -> etc/cni"}, 5},
	{"absolute target", append(netd, "d x", "l x /etc/cni/net.d", "f x/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"x -> /etc/cni/net.d"}, 5},
	{"dot-dot target", append(netd, "d usr", "l usr/x ../etc/cni/net.d", "f usr/x/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"usr/x -> ../etc/cni/net.d"}, 5},
	{"dot-dot above the root", append(netd, "l x ../../../etc/cni/net.d", "f x/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"x -> ../../../etc/cni/net.d"}, 4},
	// Path lookup takes ".." from where a link led, not from its name.
	{"dot-dot after a link", append(netd, "l l etc/cni/net.d", "l m l/..", "f m/net.d/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"m -> l/..", "l -> etc/cni/net.d"}, 5},
	{"the alias two levels above the file", append(netd, "d x", "l x etc", "f x/cni/net.d/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"x -> etc"}, 5},
	{"a symlink over a symlink", append(netd, "l x /opt", "l x etc/cni/net.d", "f x/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"x -> etc/cni/net.d"}, 5},
	{"a link made later than the name it meets", append(netd, "l x etc/cni", "d x/net.d", "f x/net.d/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"x -> etc/cni"}, 4},
	// link(2) does not follow a symlink: the later member is the link.
	{"a cpio hard link to what became a symlink", append(netd, "F a 7", "l a etc/cni/net.d", "F q 7", "f q/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"q -> etc/cni/net.d"}, 6},
	{"a tar hard link to a symlink", append(netd, "l a etc/cni/net.d", "h q a", "f q/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"q -> etc/cni/net.d"}, 5},
	{"hard-link groups end at a trailer", append(netd, "F a 7", "l a etc/cni/net.d", "T", "F q 7", "f q/00-evil.conflist"),
		"", nil, 7},
	{"across segments", append(netd, "T", "d x", "l x etc/cni/net.d", "f x/00-evil.conflist"),
		"etc/cni/net.d/00-evil.conflist", []string{"x -> etc/cni/net.d"}, 6},
	{"a loop", []string{"l a b", "l b a", "f a/00-evil.conflist"}, "", nil, 2},
	{"a missing parent", []string{"f q/00-evil.conflist"}, "", nil, -1},
	{"a file as parent", []string{"f q", "f q/00-evil.conflist"}, "", nil, 1},
	{"a dangling link", []string{"l q /nowhere", "f q/00-evil.conflist"}, "", nil, 1},
	{"an empty target removes what was there", append(netd, "d x", "l x ", "f x/00-evil.conflist"), "", nil, 5},
}

// TestKernelTree: each entry is made where init/initramfs.c makes it.
func TestKernelTree(t *testing.T) {
	for _, tc := range resolverCases {
		t.Run(tc.name, func(t *testing.T) {
			tree := named(NewKernelTree())
			var l Landing
			for _, s := range tc.entries {
				l = tree.Add(u(s))
			}
			l.File, l.Data = 0, false // TestKernelTreeFiles
			if diff := cmp.Diff(Landing{Path: tc.land, Via: tc.via}, l, cmp.Comparer(func(a, b []string) bool { return strings.Join(a, "|") == strings.Join(b, "|") })); diff != "" {
				t.Errorf("last entry (-want +got):\n%s", diff)
			}
			checkTree(t, tree)
		})
	}
}

// TestKernelTreeFiles: which file each name is at the end, and so what
// it holds, as init/initramfs.c leaves it: a later regular file at a name
// of a hard-link group is written in place (do_name: clean_path keeps a
// regular file, filp_open with O_TRUNC), so every name of the group has
// its content, across segments too; a tar extractor unlinks first. Each
// case's entries carry their data after a "=" ("f a =new"); want is each
// name's content at the end.
func TestKernelTreeFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    Kind
		entries []string
		want    map[string]string
	}{
		{"a later file over a group, across segments", KindCpio,
			[]string{"F a 7 =", "F b 7 =old", "T", "f a =new"}, map[string]string{"a": "new", "b": "new"}},
		{"over its other name", KindCpio,
			[]string{"F a 7 =", "F b 7 =old", "T", "f b =new"}, map[string]string{"a": "new", "b": "new"}},
		{"in one segment", KindCpio,
			[]string{"F a 7 =", "F b 7 =old", "f a =new"}, map[string]string{"a": "new", "b": "new"}},
		{"an empty later file empties the group", KindCpio,
			[]string{"F a 7 =", "F b 7 =old", "T", "f a ="}, map[string]string{"a": "", "b": ""}},
		// The later group's first member is written in place (its data
		// is with the last member), the next ones linked to it.
		{"a later group over a group", KindCpio,
			[]string{"F a 7 =", "F b 7 =old", "T", "F a 9 =", "F c 9 =new"}, map[string]string{"a": "new", "b": "new", "c": "new"}},
		{"a later member with no data keeps the content", KindCpio,
			[]string{"F a 7 =", "F b 7 =old", "T", "F c 9 =new", "F a 9 ="}, map[string]string{"a": "new", "b": "old", "c": "new"}},
		{"a symlink takes one name out of the group", KindCpio,
			[]string{"F a 7 =", "F b 7 =old", "T", "l a /x", "f a =new"}, map[string]string{"a": "new", "b": "old"}},
		{"a file with one name", KindCpio,
			[]string{"f a =old", "f b =other", "T", "f a =new"}, map[string]string{"a": "new", "b": "other"}},
		{"tar unlinks first", KindTar,
			[]string{"f a =old", "h b a", "f a =new"}, map[string]string{"a": "new", "b": "old"}},
		{"a tar hard link to a file written later", KindTar,
			[]string{"f a =old", "h b a", "h c b"}, map[string]string{"a": "old", "b": "old", "c": "old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResolver(tc.kind)
			content := map[uint32]string{}
			for _, spec := range tc.entries {
				spec, data, _ := strings.Cut(spec, " =")
				e := u(spec)
				e.Size = int64(len(data))
				l, err := r.Resolve(e)
				if err != nil {
					t.Fatalf("%s: %v", spec, err)
				}
				if l.Data {
					content[l.File] = data
				}
			}
			got := map[string]string{}
			for name := range tc.want {
				n, ok := r.tree.node(name)
				if !ok || n.file == 0 {
					t.Fatalf("%s: no regular file there (%+v)", name, n)
				}
				got[name] = content[n.file]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("content at the end (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolverRefusesTarAmbiguity: a tar entry beneath a path that is a
// symlink or no directory at that point of the stream is refused, naming
// that path; every other entry gets the kernel's landing.
func TestResolverRefusesTarAmbiguity(t *testing.T) {
	for _, tc := range resolverCases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResolver(KindTar)
			bad := -1
			for i, s := range tc.entries {
				e := u(s)
				if _, err := r.Resolve(e); err != nil {
					if !errors.Is(err, ErrAmbiguousParent) {
						t.Fatalf("%s: %v", e.Name, err)
					}
					if !strings.Contains(err.Error(), "above it is a") {
						t.Errorf("%s: %v does not name the path above", e.Name, err)
					}
					bad = i
					break
				}
			}
			if bad != tc.tarBad {
				t.Errorf("refused entry %d, want %d", bad, tc.tarBad)
			}
		})
	}
	for _, k := range []Kind{KindCpio, KindCpioCRC, KindDir} {
		r := NewResolver(k)
		for _, s := range resolverCases[0].entries {
			if _, err := r.Resolve(u(s)); err != nil {
				t.Errorf("%s: %v", k, err)
			}
		}
	}
}

// TestCanonical: where a link's target leads when an entry comes, through
// the links on the way; what does not exist yet is taken as written.
func TestCanonical(t *testing.T) {
	r := NewResolver(KindCpio)
	for _, s := range []string{"d opt", "l srv opt", "d usr", "l usr/lib64 lib", "l a b", "l b a"} {
		r.Resolve(u(s))
	}
	for _, tc := range []struct{ dir, target, want string }{
		{"etc", "../srv/evil", "opt/evil"},
		{"etc", "/srv", "opt"},
		{"etc", "../../..", "."},
		{"usr", "lib64/x", "usr/lib/x"},
		{"etc", "../nowhere/../srv", "opt"},
		{".", "a/x", "a/x"},
	} {
		if got := r.Canonical(tc.dir, tc.target); got != tc.want {
			t.Errorf("Canonical(%q, %q) = %q, want %q", tc.dir, tc.target, got, tc.want)
		}
	}
}

// checkTree checks the tree's invariants: every node's parent is a
// directory node, each directory's count is its entries', and every
// landing is a node.
func checkTree(t *testing.T, tree *KernelTree) {
	t.Helper()
	if len(tree.names) != len(tree.nodes)-1 {
		t.Fatalf("%d nodes, %d of them named", len(tree.nodes), len(tree.names))
	}
	kids := map[string]uint32{}
	for _, p := range tree.names {
		n, _ := tree.node(p)
		parent, ok := tree.node(path.Dir(p))
		if !ok || parent.typ != TypeDir {
			t.Fatalf("%s: its parent is %+v (%v)", p, parent, ok)
		}
		kids[path.Dir(p)]++
		if n.typ == TypeSymlink && n.target == "" {
			t.Fatalf("%s: a symlink with no target", p)
		}
	}
	for _, p := range append([]string{"."}, slices.Collect(maps.Values(tree.names))...) {
		if n, _ := tree.node(p); n.typ == TypeDir && n.kids != kids[p] {
			t.Fatalf("%s: counts %d entries, has %d", p, n.kids, kids[p])
		}
	}
}

// named returns a tree that keeps its nodes' paths, for checkTree.
func named(tree *KernelTree) *KernelTree {
	tree.names = map[pathKey]string{}
	return tree
}

// FuzzResolver: any stream of entries keeps the tree's invariants; every
// landing is a clean path inside the root, where a node is; Canonical
// stays inside the root.
func FuzzResolver(f *testing.F) {
	f.Add([]byte("\x01x\x00\x03x\x02\x00etc/cni\x01x/a\x00"), false)
	f.Add([]byte("\x03a\x00../b\x00\x03b\x00/a\x00\x01a/c\x00"), true)
	f.Add([]byte("\x05a\x07\x03a\x00/etc\x00\x05q\x07\x00\x01q/c\x00"), false)
	f.Fuzz(func(t *testing.T, in []byte, tar bool) {
		k := KindCpio
		if tar {
			k = KindTar
		}
		r := NewResolver(k)
		named(&r.tree)
		for len(in) > 0 && len(r.tree.nodes) < 500 {
			var e *Entry
			e, in = fuzzEntry(in)
			l, err := r.Resolve(e)
			if _, cerr := pathx.Clean(e.Name); cerr != nil && e.Type != TypeTrailer {
				if l.Path != "" {
					t.Fatalf("%q, which Clean refuses, lands at %q", e.Name, l.Path)
				}
				continue
			}
			if err != nil {
				if !errors.Is(err, ErrAmbiguousParent) {
					t.Fatalf("%q: %v", e.Name, err)
				}
				continue
			}
			if l.Path == "" {
				continue
			}
			if l.Path != path.Clean(l.Path) || strings.HasPrefix(l.Path, "/") || l.Path == ".." || strings.HasPrefix(l.Path, "../") {
				t.Fatalf("%q lands at %q", e.Name, l.Path)
			}
			n, ok := r.tree.node(l.Path)
			if !ok {
				t.Fatalf("%q lands at %q, where nothing is", e.Name, l.Path)
			}
			// A regular file's name, or a hard link's to one, is that
			// file's; nothing else has a file.
			if (l.File != 0) != (n.typ == TypeRegular) || n.file != l.File || (l.Data && e.Type != TypeRegular) {
				t.Fatalf("%q lands at %q (%+v), file %d, data %v", e.Name, l.Path, n, l.File, l.Data)
			}
			if c := r.Canonical(path.Dir(l.Path), e.Linkname); strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") {
				t.Fatalf("Canonical(%q, %q) = %q", path.Dir(l.Path), e.Linkname, c)
			}
		}
		checkTree(t, &r.tree)
	})
}

// fuzzEntry takes one entry off in: a type byte, then a NUL-terminated
// name, then a target (symlink, tar hard link) or an inode byte (cpio
// hard-link member).
func fuzzEntry(in []byte) (*Entry, []byte) {
	typ := in[0] % 8
	in = in[1:]
	word := func() string {
		s, rest, _ := strings.Cut(string(in), "\x00")
		in = []byte(rest)
		return s
	}
	e := &Entry{Name: word(), Mode: 0o644, Nlink: 1}
	switch typ {
	case 0:
		e.Type = TypeDir
	case 1:
		e.Type = TypeRegular
	case 2:
		e.Type = TypeFifo
	case 3:
		e.Type, e.Linkname = TypeSymlink, word()
	case 4:
		e.Type, e.Linkname = TypeHardlink, word()
	case 5:
		e.Type, e.Nlink = TypeRegular, 2
		if len(in) > 0 {
			e.Inode, in = uint64(in[0]), in[1:]
		}
	case 6:
		e.Type, e.Name = TypeTrailer, trailerName
	default:
		e.Type, e.Nlink, e.Inode = TypeChar, 2, 9
	}
	return e, in
}

// BenchmarkResolver: one entry of a flat directory of a million, as in
// TestMillionEntries (cmd/rootfs-trim).
func BenchmarkResolver(b *testing.B) {
	r := NewResolver(KindCpio)
	r.Resolve(&Entry{Name: "d", Type: TypeDir})
	names := make([]string, 1<<20)
	for i := range names {
		names[i] = fmt.Sprintf("d/%07d", i)
	}
	e := &Entry{Type: TypeRegular, Nlink: 1}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e.Name = names[i%len(names)]
		r.Resolve(e)
	}
}
