package archive

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// TestTarNameSources: an entry whose name or link target GNU tar reads
// from another source than archive/tar is refused. GNU tar and bsdtar are
// the oracles: they list the CNI config where archive/tar (what audit saw
// before) lists a document.
func TestTarNameSources(t *testing.T) {
	requireGNUTar(t)
	requireTool(t, "bsdtar")
	tests := map[string]struct {
		gnu, bsd, golang string // the name (or link target) each reads
		err              string
	}{
		"pax-path-then-gnu-long-name":   {archivetest.Shown, archivetest.Shown, archivetest.Decoy, `GNU tar reads the name "etc/cni/net.d/10-evil.conflist" (header name "short", GNU long name "usr/share/doc/evil/README", PAX path "etc/cni/net.d/10-evil.conflist")`},
		"gnu-long-name-then-pax-path":   {archivetest.Shown, archivetest.Decoy, archivetest.Decoy, `GNU tar reads the name "etc/cni/net.d/10-evil.conflist"`},
		"sparse-name-on-plain-file":     {archivetest.Shown, archivetest.Shown, archivetest.Decoy, `PAX GNU.sparse.name "etc/cni/net.d/10-evil.conflist"`},
		"sparse-name-over-header":       {archivetest.Shown, archivetest.Shown, archivetest.Decoy, `GNU tar reads the name "etc/cni/net.d/10-evil.conflist"`},
		"gnu-header-bad-atime":          {archivetest.Shown, archivetest.Shown, "usr/share/doc/evil/" + archivetest.Shown, `prefix field "usr/share/doc/evil" with magic "ustar  \x00"`},
		"pax-linkpath-vs-gnu-long-link": {archivetest.LinkShown, archivetest.LinkShown, archivetest.LinkDecoy, `its link target is "/usr/share/doc/evil/README", GNU tar reads "/etc/cni/net.d/10-evil.conflist"`},
		"extended-header-before-global": {archivetest.Shown, archivetest.Shown, archivetest.Decoy, `PAX global header at offset 0 comes after a 'x' header`},
		"two-extended-headers":          {archivetest.Decoy, archivetest.Decoy, archivetest.Decoy, `two PAX extended headers for one entry`},
	}
	for _, h := range archivetest.HostileTars() {
		t.Run(h.Name, func(t *testing.T) {
			tc, ok := tests[h.Name]
			if !ok {
				t.Fatalf("no expectation for %s", h.Name)
			}
			file := filepath.Join(t.TempDir(), "in.tar")
			mustDo(t, os.WriteFile(file, h.Tar, 0o644))
			got := map[string]string{"gnu": toolName(t, "tar", file), "bsd": toolName(t, "bsdtar", file), "go": stdlibName(t, h.Tar)}
			want := map[string]string{"gnu": tc.gnu, "bsd": tc.bsd, "go": tc.golang}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("names read (-want +got):\n%s", diff)
			}
			r := NewTarReader(bytes.NewReader(h.Tar))
			var err error
			for err == nil {
				_, err = r.Next()
			}
			if err == io.EOF || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "refusing it") {
				t.Errorf("err = %v\nwant one containing %q", err, tc.err)
			}
		})
	}
}

// toolName is the name, or a symlink's target, of the one entry tool -tf
// lists in file.
func toolName(t *testing.T, tool, file string) string {
	t.Helper()
	cmd := runTool(tool, "-tvf", file)
	line := strings.TrimSpace(strings.SplitN(cmd, "\n", 2)[0])
	if _, target, ok := strings.Cut(line, " -> "); ok {
		return target
	}
	f := strings.Fields(line)
	return f[len(f)-1]
}

func runTool(tool string, args ...string) string {
	out, _ := exec.Command(tool, args...).Output() // bsdtar exits 1 on a malformed record, and still lists
	return string(out)
}

// stdlibName is what archive/tar alone reads: the name audit judged before.
func stdlibName(t *testing.T, b []byte) string {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		mustDo(t, err)
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if h.Typeflag == tar.TypeSymlink {
			return h.Linkname
		}
		return h.Name
	}
}

// TestTarNameSourcesAgree: what GNU tar and bsdtar write (long names and
// link targets in GNU and PAX form, sparse files named by GNU.sparse.name)
// is read, under the name GNU tar lists.
func TestTarNameSourcesAgree(t *testing.T) {
	requireGNUTar(t)
	requireTool(t, "bsdtar")
	src := t.TempDir()
	long := strings.Repeat("d", 120) + "/" + strings.Repeat("f", 110)
	mustDo(t, os.MkdirAll(filepath.Join(src, filepath.Dir(long)), 0o755))
	holeyFile(t, filepath.Join(src, long), 1<<20, map[int64]string{0: "head", 1<<20 - 4: "tail"})
	mustDo(t, os.Symlink("/"+long, filepath.Join(src, strings.Repeat("l", 150))))
	for _, args := range [][]string{
		{"tar", "--format=gnu", "--sparse"}, {"tar", "--format=posix", "--sparse"},
		{"tar", "--format=posix", "--sparse", "--sparse-version=0.1"}, {"bsdtar"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "a.tar")
			runIn(t, src, nil, args[0], append(args[1:], "-cf", file, ".")...)
			in, err := os.ReadFile(file)
			mustDo(t, err)
			entries, _ := readTar(t, in)
			var names []string
			for _, e := range entries {
				names = append(names, strings.TrimSuffix(strings.TrimPrefix(e.Name, "./"), "/"))
			}
			var theirs []string
			for _, l := range strings.Split(strings.TrimSpace(runIn(t, "", nil, "tar", "-tf", file)), "\n") {
				theirs = append(theirs, strings.TrimSuffix(strings.TrimPrefix(l, "./"), "/"))
			}
			if diff := cmp.Diff(theirs, names); diff != "" {
				t.Errorf("names (-GNU tar +ours):\n%s", diff)
			}
		})
	}
}
