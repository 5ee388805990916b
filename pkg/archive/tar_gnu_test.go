package archive

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// The tests here read what GNU tar, bsdtar and git archive write (PAX
// global headers, sparse files in every form GNU tar writes), and check
// that GNU tar, bsdtar and GNU cpio read back what rootfs-trim writes.

// gitArchive makes a repository in a temporary directory, with an
// environment that makes its commit id the same on every run, and returns
// `git archive` of its tag and the commit id.
func gitArchive(t *testing.T, prefix string) ([]byte, string) {
	t.Helper()
	requireTool(t, "git")
	repo, home := filepath.Join(t.TempDir(), "repo"), t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LC_ALL=C", "TZ=UTC", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=rootfs-trim", "GIT_AUTHOR_EMAIL=test@rootfs-trim.invalid", "GIT_AUTHOR_DATE=2024-05-06T07:08:09Z",
		"GIT_COMMITTER_NAME=rootfs-trim", "GIT_COMMITTER_EMAIL=test@rootfs-trim.invalid", "GIT_COMMITTER_DATE=2024-05-06T07:08:09Z"}
	files := map[string]string{
		"etc/cni/net.d/10-containerd-net.conflist":          `{"cniVersion": "1.0.0"}` + "\n",
		"etc/crictl.yaml":                                   "runtime-endpoint: unix:///run/containerd/containerd.sock\n",
		"usr/bin/tool":                                      "#!/bin/sh\necho tool\n",
		"usr/share/" + strings.Repeat("long-", 25) + "name": "a name past ustar's 100 bytes\n",
	}
	for name, data := range files {
		p := filepath.Join(repo, name)
		mustDo(t, os.MkdirAll(filepath.Dir(p), 0o755))
		mustDo(t, os.WriteFile(p, []byte(data), 0o644))
	}
	mustDo(t, os.Chmod(filepath.Join(repo, "usr/bin/tool"), 0o755))
	mustDo(t, os.Symlink("tool", filepath.Join(repo, "usr/bin/alias")))
	runIn(t, repo, env, "git", "init", "-q")
	runIn(t, repo, env, "git", "add", "-A")
	runIn(t, repo, env, "git", "commit", "-q", "-m", "rootfs")
	runIn(t, repo, env, "git", "tag", "-a", "-m", "v1.0", "v1.0")
	commit := strings.TrimSpace(runIn(t, repo, env, "git", "rev-parse", "v1.0^{commit}"))
	out := filepath.Join(t.TempDir(), "a.tar")
	runIn(t, repo, env, "git", "archive", "--format=tar", "--prefix="+prefix, "-o", out, "v1.0")
	b, err := os.ReadFile(out)
	mustDo(t, err)
	return b, commit
}

// copyTar runs a in through Copy into the format kind, keeping the
// entries keep says (all when nil), as repack and apply do.
func copyTar(t *testing.T, in []byte, kind Kind, keep func(*Entry) bool) []byte {
	t.Helper()
	opt := CopyOptions{Dest: kind}
	if keep != nil {
		opt.Decide = func(e *Entry) (Action, error) {
			if keep(e) {
				return Keep, nil
			}
			return Drop, nil
		}
	}
	var buf bytes.Buffer
	var w Writer
	if kind.IsCpio() {
		scan, err := ScanLinks(NewTarReader(bytes.NewReader(in)))
		mustDo(t, err)
		opt.Links = scan
		w = NewCpioWriter(&buf, Newc)
	} else {
		w = NewTarWriter(&buf, tar.FormatUnknown)
	}
	mustDo(t, Copy(w, NewTarReader(bytes.NewReader(in)), opt))
	mustDo(t, w.Close())
	return buf.Bytes()
}

// extracted unpacks archive with tool (tar, bsdtar, cpio) and lists the
// tree (archivetest.TreeListing) but its root; GNU cpio restores neither
// directory nor symlink mtimes, so with cpio, and when dirTimes is false,
// they are left out.
func extracted(t *testing.T, archive []byte, tool string, dirTimes bool) []string {
	t.Helper()
	dir, file := t.TempDir(), filepath.Join(t.TempDir(), "archive")
	mustDo(t, os.WriteFile(file, archive, 0o644))
	switch tool {
	case "cpio":
		cmd := exec.Command("cpio", "-idm", "--quiet", "--no-absolute-filenames", "-F", file)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cpio -i: %v: %s", err, out)
		}
		dirTimes = false
	default:
		runIn(t, dir, nil, tool, "-xpf", file)
	}
	lines, err := archivetest.TreeListing(dir)
	mustDo(t, err)
	if !dirTimes {
		for i, l := range lines {
			if strings.Contains(l, " mode=004") || strings.Contains(l, " mode=012") {
				lines[i] = mtimeField.ReplaceAllString(l, "")
			}
		}
	}
	return relisted(lines)
}

var mtimeField = regexp.MustCompile(` mtime=[0-9.-]+`)

func listing(t *testing.T, archive []byte, tool string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "a.tar")
	mustDo(t, os.WriteFile(file, archive, 0o644))
	return runIn(t, "", nil, tool, "--numeric-owner", "-tvf", file)
}

// TestTarGitArchive: `git archive` output, which starts with a PAX global
// header holding the commit id, is read, and written back with it.
func TestTarGitArchive(t *testing.T) {
	requireGNUTar(t)
	requireTool(t, "bsdtar")
	requireTool(t, "cpio")
	for _, prefix := range []string{"", "rootfs/"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			in, commit := gitArchive(t, prefix)
			entries, _ := readTar(t, in)
			f, ok := entries[0].Format.(*TarFormat)
			if !ok || f.Global == nil || f.Global.Offset != 0 {
				t.Fatalf("first entry's format %#v, want the global header at offset 0", entries[0].Format)
			}
			if diff := cmp.Diff(map[string]string{"comment": commit}, f.Global.Records); diff != "" {
				t.Errorf("global records (-want +got):\n%s", diff)
			}
			for _, e := range entries {
				if g := e.Format.(*TarFormat); g.Global != f.Global || g.FromGlobal != nil {
					t.Errorf("%s: global %p, from it %v; want %p and nothing", e.Name, g.Global, g.FromGlobal, f.Global)
				}
			}

			out := copyTar(t, in, KindTar, nil)
			// The global header comes out as it went in.
			if !bytes.Equal(out[:1024], in[:1024]) {
				t.Errorf("global header rewritten:\n%q\nwant\n%q", out[:1024], in[:1024])
			}
			want := extracted(t, in, "tar", true)
			for _, tool := range []string{"tar", "bsdtar"} {
				if diff := cmp.Diff(listing(t, in, tool), listing(t, out, tool)); diff != "" {
					t.Errorf("%s -tv (-git archive +rewrite):\n%s", tool, diff)
				}
				if diff := cmp.Diff(want, extracted(t, out, tool, true)); diff != "" {
					t.Errorf("%s -x of the rewrite (-git archive +rewrite):\n%s", tool, diff)
				}
			}
			cpio := copyTar(t, in, KindCpio, nil)
			if diff := cmp.Diff(extracted(t, in, "tar", false), extracted(t, cpio, "cpio", false)); diff != "" {
				t.Errorf("cpio -i of the newc (-git archive +newc):\n%s", diff)
			}

			// Dropping the entry right after the global header keeps it,
			// before the next entry kept.
			first := entries[0].Name
			dropped := copyTar(t, in, KindTar, func(e *Entry) bool { return e.Name != first })
			h, err := tar.NewReader(bytes.NewReader(dropped)).Next()
			mustDo(t, err)
			if h.Typeflag != tar.TypeXGlobalHeader || h.PAXRecords["comment"] != commit {
				t.Errorf("after dropping %s, first header %q %q %v, want the global header", first, h.Typeflag, h.Name, h.PAXRecords)
			}
		})
	}
}

// TestTarGlobalRecords: a global header's records are defaults for the
// entries after it, as GNU tar reads them (the listing is checked against
// GNU tar's), and a later one replaces it.
func TestTarGlobalRecords(t *testing.T) {
	mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	file := func(name string, recs map[string]string) tarItem {
		return tarItem{hdr: tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, ModTime: mtime, Uname: "root", Gname: "root", PAXRecords: recs, Format: tar.FormatPAX}}
	}
	global := func(recs map[string]string) tarItem {
		return tarItem{hdr: tar.Header{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader, PAXRecords: recs}}
	}
	type got struct {
		Name       string
		UID, GID   int
		Uname      string
		MTime      time.Time
		FromGlobal []string
		Xattr      string
	}
	tests := []struct {
		name  string
		items []tarItem
		want  []got
		err   string
	}{
		{
			name:  "comment only",
			items: []tarItem{global(map[string]string{"comment": "c0ffee"}), file("a", nil)},
			want:  []got{{Name: "a", Uname: "root", MTime: mtime}},
		},
		{
			name: "fields and xattrs are defaults; an entry's own record wins",
			items: []tarItem{
				global(map[string]string{"uid": "1234", "gid": "55", "uname": "gu", "mtime": "1600000000.25", "SCHILY.xattr.user.a": "v"}),
				file("a", nil), func() tarItem {
					// Past ustar's 7 octal digits, archive/tar writes a uid record.
					b := file("b", nil)
					b.hdr.Uid = 3000000
					return b
				}(),
			},
			want: []got{
				{Name: "a", UID: 1234, GID: 55, Uname: "gu", MTime: time.Unix(1600000000, 250000000), FromGlobal: []string{"SCHILY.xattr.user.a", "gid", "mtime", "uid", "uname"}, Xattr: "v"},
				{Name: "b", UID: 3000000, GID: 55, Uname: "gu", MTime: time.Unix(1600000000, 250000000), FromGlobal: []string{"SCHILY.xattr.user.a", "gid", "mtime", "uname"}, Xattr: "v"},
			},
		},
		{
			name: "a later global header replaces the earlier one whole",
			items: []tarItem{
				global(map[string]string{"uid": "5", "gid": "6"}), file("a", nil),
				global(map[string]string{"gid": "7"}), file("b", nil),
			},
			want: []got{
				{Name: "a", UID: 5, GID: 6, Uname: "root", MTime: mtime, FromGlobal: []string{"gid", "uid"}},
				{Name: "b", GID: 7, Uname: "root", MTime: mtime, FromGlobal: []string{"gid"}},
			},
		},
		{name: "path", items: []tarItem{global(map[string]string{"path": "x"}), file("a", nil)}, err: `record "path" names every later entry`},
		{name: "linkpath", items: []tarItem{global(map[string]string{"linkpath": "x"}), file("a", nil)}, err: `record "linkpath"`},
		{name: "size", items: []tarItem{global(map[string]string{"size": "9"}), file("a", nil)}, err: `record "size" sets the data size`},
		{name: "sparse", items: []tarItem{global(map[string]string{"GNU.sparse.map": "0,1"}), file("a", nil)}, err: `record "GNU.sparse.map": a sparse map`},
		{name: "bad uid", items: []tarItem{global(map[string]string{"uid": "-1"}), file("a", nil)}, err: `record "uid": bad id "-1"`},
		{name: "bad mtime", items: []tarItem{global(map[string]string{"mtime": "12.x"}), file("a", nil)}, err: `a malformed uid, gid, size or time record`},
		{name: "bad atime", items: []tarItem{global(map[string]string{"atime": "1.5e3"}), file("a", nil)}, err: `malformed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := buildTar(t, tc.items)
			r := NewTarReader(bytes.NewReader(in))
			var all []got
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					if tc.err == "" || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "PAX global header at offset 0") {
						t.Fatalf("err = %v, want one containing %q", err, tc.err)
					}
					return
				}
				f := e.Format.(*TarFormat)
				all = append(all, got{Name: e.Name, UID: e.UID, GID: e.GID, Uname: f.Header.Uname, MTime: e.ModTime,
					FromGlobal: f.FromGlobal, Xattr: f.Header.PAXRecords["SCHILY.xattr.user.a"]})
			}
			if tc.err != "" {
				t.Fatalf("no error, want one containing %q", tc.err)
			}
			if diff := cmp.Diff(tc.want, all); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if _, err := exec.LookPath("tar"); err == nil {
				// GNU tar -tv shows uid/gid and mtime (to the second).
				for i, line := range strings.Split(strings.TrimSpace(listing(t, in, "tar")), "\n") {
					f := strings.Fields(line)
					g := tc.want[i]
					mine := []string{strconv.Itoa(g.UID) + "/" + strconv.Itoa(g.GID), g.MTime.UTC().Format("2006-01-02 15:04"), g.Name}
					if theirs := []string{f[1], f[3] + " " + f[4], f[5]}; !cmp.Equal(mine, theirs) {
						t.Errorf("GNU tar reads %v, we read %v", theirs, mine)
					}
				}
			}
		})
	}
}

// TestTarGlobalWriter: what a global header gave its entries, each entry
// written says itself, so that an entry added after it is what it says to
// GNU tar (which applies global records) and bsdtar (which ignores them)
// alike; the global header keeps what is about the archive.
func TestTarGlobalWriter(t *testing.T) {
	requireGNUTar(t)
	requireTool(t, "bsdtar")
	mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	in := buildTar(t, []tarItem{
		{hdr: tar.Header{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "c0ffee", "uid": "1234", "gid": "99"}}},
		{hdr: tar.Header{Name: "a", Typeflag: tar.TypeReg, Mode: 0o644, ModTime: mtime, Size: 2}, data: "a\n"},
	})
	entries, data := readTar(t, in)
	entries = append(entries, &Entry{Name: "added", Type: TypeRegular, Mode: 0o600, ModTime: mtime, Nlink: 1})
	out := writeTar(t, entries, data, tar.FormatUnknown)
	h, err := tar.NewReader(bytes.NewReader(out)).Next()
	mustDo(t, err)
	if diff := cmp.Diff(map[string]string{"comment": "c0ffee"}, h.PAXRecords); h.Typeflag != tar.TypeXGlobalHeader || diff != "" {
		t.Errorf("first header %q, records (-want +got):\n%s", h.Typeflag, diff)
	}
	for _, tool := range []string{"tar", "bsdtar"} {
		// GNU tar lists "1234/99", bsdtar "1234  99".
		l := listing(t, out, tool)
		if !regexp.MustCompile(`\b1234[/ ]+99 .* a\n`).MatchString(l) || !regexp.MustCompile(`\b0[/ ]+0 .* added\n`).MatchString(l) {
			t.Errorf("%s -tv:\n%s\nwant a as 1234/99 and added as 0/0", tool, l)
		}
	}
	back, _ := readTar(t, out)
	if back[0].UID != 1234 || back[0].GID != 99 || back[1].UID != 0 || back[1].GID != 0 {
		t.Errorf("read back: a %d/%d, added %d/%d", back[0].UID, back[0].GID, back[1].UID, back[1].GID)
	}
}

// sparseArchivers are every sparse form GNU tar 1.34 writes, and bsdtar's.
var sparseArchivers = []struct {
	name, tool string
	args       []string
	kind       string
}{
	{"gnu", "tar", []string{"--format=gnu", "--sparse"}, "gnu"},
	{"oldgnu", "tar", []string{"--format=oldgnu", "--sparse"}, "gnu"},
	{"posix-0.0", "tar", []string{"--format=posix", "--sparse", "--sparse-version=0.0"}, "pax-0.0"},
	{"posix-0.1", "tar", []string{"--format=posix", "--sparse", "--sparse-version=0.1"}, "pax-0.1"},
	{"posix-1.0", "tar", []string{"--format=posix", "--sparse", "--sparse-version=1.0"}, "pax-1.0"},
	{"posix-default", "tar", []string{"--format=posix", "--sparse"}, "pax-1.0"},
	{"bsdtar", "bsdtar", nil, "pax-1.0"},
}

// TestTarSparse: a sparse file in each form is read as its holes expanded,
// written back to tar sparse (PAX 1.0, the same map), and GNU tar, bsdtar
// and GNU cpio read the same content back from what rootfs-trim writes
// (newc has no holes: expanded).
func TestTarSparse(t *testing.T) {
	requireGNUTar(t)
	requireTool(t, "bsdtar")
	requireTool(t, "cpio")
	src := t.TempDir()
	holeyFile(t, filepath.Join(src, "holey"), 3<<20+100, map[int64]string{0: "start", 1 << 20: "middle", 3<<20 + 95: "end!\n"})
	holeyFile(t, filepath.Join(src, "tailhole"), 2<<20, map[int64]string{4096: "data, then a hole to the end"})
	mustDo(t, os.WriteFile(filepath.Join(src, "plain"), []byte("not sparse\n"), 0o644))
	mustDo(t, archivetest.SetTimes(src, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)))
	want, err := archivetest.TreeListing(src)
	mustDo(t, err)
	want = relisted(want)
	holey, err := os.ReadFile(filepath.Join(src, "holey"))
	mustDo(t, err)
	for _, a := range sparseArchivers {
		t.Run(a.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "a.tar")
			runIn(t, src, nil, a.tool, append(a.args, "-cf", file, "holey", "tailhole", "plain")...)
			in, err := os.ReadFile(file)
			mustDo(t, err)
			entries, data := readTar(t, in)
			sparse := map[string]string{}
			for _, e := range entries {
				// Offset is where the entry's first header block is, past
				// the sparse data before it.
				if e.Offset+512 > int64(len(in)) || string(in[e.Offset+257:e.Offset+262]) != "ustar" {
					t.Errorf("%s: no header at offset %d", e.Name, e.Offset)
				}
				if f := e.Format.(*TarFormat); f.Sparse != nil {
					sparse[e.Name] = f.Sparse.Format
					if f.Sparse.Stored >= e.Size {
						t.Errorf("%s: %d bytes stored of %d", e.Name, f.Sparse.Stored, e.Size)
					}
				}
			}
			if diff := cmp.Diff(map[string]string{"holey": a.kind, "tailhole": a.kind}, sparse); diff != "" {
				t.Errorf("sparse entries (-want +got):\n%s", diff)
			}
			if data["holey"] != string(holey) {
				t.Errorf("holey: read %d bytes, not the file's %d", len(data["holey"]), len(holey))
			}
			out := copyTar(t, in, KindTar, nil)
			// Written back sparse, as PAX 1.0, storing what the input stored.
			back, _ := readTar(t, out)
			for i, e := range back {
				was, is := entries[i].Format.(*TarFormat).Sparse, e.Format.(*TarFormat).Sparse
				if (was == nil) != (is == nil) || is != nil && (is.Format != "pax-1.0" || is.Stored != was.Stored || !cmp.Equal(is.Map, was.Map)) {
					t.Errorf("%s: written %+v, read %+v", e.Name, is, was)
				}
			}
			if len(out) > 64<<10 {
				t.Errorf("rewrite of %d bytes, holes and all", len(out))
			}
			for _, tool := range []string{"tar", "bsdtar"} {
				if diff := cmp.Diff(want, extracted(t, out, tool, true)); diff != "" {
					t.Errorf("%s -x of the rewrite (-source +extracted):\n%s", tool, diff)
				}
			}
			wantNoDirTimes := extracted(t, in, "tar", false)
			if diff := cmp.Diff(wantNoDirTimes, extracted(t, copyTar(t, in, KindCpio, nil), "cpio", false)); diff != "" {
				t.Errorf("cpio -i of the newc (-tar -x +cpio -i):\n%s", diff)
			}
		})
	}
}

// relisted drops the root's line: the source's root is a temporary
// directory whose mtime the archive does not carry.
func relisted(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(l, ". ") {
			out = append(out, l)
		}
	}
	return out
}

// TestTarSparseToNewcStreams: a sparse file goes to newc expanded, in
// constant memory: what is allocated does not grow with its holes.
func TestTarSparseToNewcStreams(t *testing.T) {
	requireGNUTar(t)
	src := t.TempDir()
	const size = 2 << 30
	holeyFile(t, filepath.Join(src, "big"), size, map[int64]string{0: "head", size - 4: "end\n"})
	file := filepath.Join(t.TempDir(), "a.tar")
	runIn(t, src, nil, "tar", "--format=gnu", "--sparse", "-cf", file, "big")
	in, err := os.ReadFile(file)
	mustDo(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cw := &countWriter{}
	w := NewCpioWriter(cw, Newc)
	scan, err := ScanLinks(NewTarReader(bytes.NewReader(in)))
	mustDo(t, err)
	mustDo(t, Copy(w, NewTarReader(bytes.NewReader(in)), CopyOptions{Dest: KindCpio, Links: scan}))
	mustDo(t, w.Close())
	runtime.ReadMemStats(&after)
	if cw.n < size {
		t.Fatalf("newc of %d bytes, want over %d", cw.n, size)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > 16<<20 {
		t.Errorf("allocated %d bytes to expand %d bytes of holes", alloc, size)
	}
	t.Logf("%d bytes allocated for %d bytes of newc", alloc, cw.n)
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// TestTarGlobalAfterExtendedHeader: archive/tar drops an extended header
// that a global header follows, while GNU tar (list.c, read_header) keeps
// it for the next entry: its records, a path among them, would apply there
// for GNU tar alone. The archive is refused.
func TestTarGlobalAfterExtendedHeader(t *testing.T) {
	xattr := buildTar(t, []tarItem{{hdr: tar.Header{Name: "x", Typeflag: tar.TypeReg, Mode: 0o644,
		PAXRecords: map[string]string{"SCHILY.xattr.user.stray": "v"}}}})
	if xattr[156] != tar.TypeXHeader {
		t.Fatalf("archive/tar wrote no extended header first: %q", xattr[156])
	}
	rest := buildTar(t, []tarItem{
		{hdr: tar.Header{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "c0ffee"}}},
		{hdr: tar.Header{Name: "f", Typeflag: tar.TypeReg, Mode: 0o644}},
	})
	in := append(append([]byte{}, xattr[:1024]...), rest...)
	_, err := NewTarReader(bytes.NewReader(in)).Next()
	if err == nil || !strings.Contains(err.Error(), "PAX global header at offset 0 comes after a 'x' header meant for the next entry") {
		t.Errorf("err = %v, want the global header refused", err)
	}
}

// The tool helpers the archive and container tests share.
var (
	requireGNUTar = archivetest.RequireGNUTar
	runIn         = archivetest.RunIn
	holeyFile     = archivetest.HoleyFile
)
