package owners

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

func TestDpkgPackage(t *testing.T) {
	tests := []struct {
		base, want string
		ok         bool
	}{
		{"podman.list", "podman", true},
		{"libc6:amd64.list", "libc6", true},
		{"golang-github-containers-common.list", "golang-github-containers-common", true},
		{"libstdc++6:arm64.list", "libstdc++6", true},
		{"docker.io.list", "docker.io", true},
		{"podman.md5sums", "", false},
		{"Podman.list", "", false},
		{"-x.list", "", false},
		{"a.list", "", false},
		{".list", "", false},
		{"../x.list", "", false},
		{"a b.list", "", false},
	}
	for _, tc := range tests {
		got, ok := DpkgPackage(tc.base)
		if got != tc.want || ok != tc.ok {
			t.Errorf("DpkgPackage(%q) = %q, %v; want %q, %v", tc.base, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseDpkgList(t *testing.T) {
	huge := "/" + strings.Repeat("a", pathx.PathMax+10) + "\n"
	tests := []struct {
		name    string
		list    string
		want    map[string][]string // path -> owners, for the paths asked about
		ignored int
	}{
		{"dpkg's own", "/.\n/etc\n/etc/cni\n/etc/cni/net.d\n/etc/cni/net.d/87-podman-bridge.conflist\n",
			map[string][]string{"etc/cni/net.d/87-podman-bridge.conflist": {"podman"}, "etc": {"podman"}}, 0},
		{"no final newline", "/etc/crictl.yaml",
			map[string][]string{"etc/crictl.yaml": {"podman"}}, 0},
		{"a line without a leading /", "etc/crictl.yaml\n/etc/containers/policy.json\n",
			map[string][]string{"etc/crictl.yaml": nil, "etc/containers/policy.json": {"podman"}}, 1},
		{"a huge line", huge + "/etc/crictl.yaml\n",
			map[string][]string{"etc/crictl.yaml": {"podman"}}, 1},
		{"a huge last line", "/etc/crictl.yaml\n" + huge[:len(huge)-1],
			map[string][]string{"etc/crictl.yaml": {"podman"}}, 1},
		{"binary garbage", "\x00\xff\xfe/\x00\n\x7fELF\x02\x01\n/../../etc/shadow\n/etc/crictl.yaml\n",
			map[string][]string{"etc/crictl.yaml": {"podman"}, "etc/shadow": nil}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := New()
			ignored, err := o.ParseDpkgList(strings.NewReader(tc.list), "podman")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for p := range tc.want {
				got[p] = o.Of(p)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("owners (-want +got):\n%s", diff)
			}
			if ignored != tc.ignored {
				t.Errorf("ignored %d lines, want %d", ignored, tc.ignored)
			}
			if !o.Present("podman") {
				t.Error("podman not present")
			}
		})
	}
}

// TestLoadDpkgTree: a tree's database is read beneath it; a .list that is
// a symlink (here out of the tree) is not followed, and a file no list
// names, or whose list is unreadable, is owned by "unknown".
func TestLoadDpkgTree(t *testing.T) {
	root := t.TempDir()
	info := filepath.Join(root, DpkgInfoDir)
	if err := os.MkdirAll(info, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "evil.list")
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(info, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("podman.list", "/.\n/etc/cni/net.d/87-podman-bridge.conflist\n")
	write("libc6:amd64.list", "/.\n/lib/x86_64-linux-gnu/libc.so.6\n")
	write("BAD NAME.list", "/etc/crictl.yaml\n")
	write("cri-o.list", "\x00\xff garbage\n")
	if err := os.WriteFile(outside, []byte("/etc/shadow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(info, "evil.list")); err != nil {
		t.Fatal(err)
	}
	db, err := Load(root, container.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if db == nil {
		t.Fatal("no database found")
	}
	got := map[string]string{}
	for _, p := range []string{"etc/cni/net.d/87-podman-bridge.conflist", "lib/x86_64-linux-gnu/libc.so.6", "etc/crictl.yaml", "etc/shadow"} {
		got[p] = db.Owners.Owner(p)
	}
	want := map[string]string{
		"etc/cni/net.d/87-podman-bridge.conflist": "podman",
		"lib/x86_64-linux-gnu/libc.so.6":          "libc6",
		"etc/crictl.yaml":                         Unknown,
		"etc/shadow":                              Unknown,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	if len(db.Packages) != 3 || db.Ignored != 3 {
		t.Errorf("Packages, Ignored = %d, %d; want 3 (podman, libc6, cri-o), 3 (BAD NAME, evil, a garbage line)", len(db.Packages), db.Ignored)
	}

	none, err := Load(t.TempDir(), container.OpenOptions{})
	if err != nil || none != nil {
		t.Errorf("a tree without var/lib/dpkg/info: %v, %v; want nil, nil", none, err)
	}
}

// FuzzDpkgList: no .list content makes the parser fail or panic, and
// every path it records is a clean relative path.
func FuzzDpkgList(f *testing.F) {
	f.Add([]byte("/.\n/etc\n/etc/cni/net.d/87-podman-bridge.conflist\n"))
	f.Add([]byte("etc/no-slash\n/../../x\n/a//b/./c\n\x00\xff\n"))
	f.Add(bytes.Repeat([]byte("/"), 5000))
	f.Fuzz(func(t *testing.T, data []byte) {
		o := New()
		if _, err := o.ParseDpkgList(bytes.NewReader(data), "pkg"); err != nil {
			t.Fatalf("error on in-memory input: %v", err)
		}
		for p := range o.byPath {
			if c, err := pathx.CleanRule(p); err != nil || c != p || p == "" {
				t.Fatalf("recorded %q, not a clean path (%v)", p, err)
			}
		}
	})
}

// TestLoadOwnersDir: an image's own lists (ListsDir) are read after
// dpkg's, so a tarball's file that overwrote a packaged one is the
// tarball's; versions come from dpkg's status file and the .version
// files; a list that is a symlink, a bad name or a bad version is counted.
func TestLoadOwnersDir(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(DpkgInfoDir+"/containerd.io.list", "/.\n/usr/bin/runc\n/usr/bin/containerd\n")
	write(DpkgStatus, "Package: containerd.io\nStatus: install ok installed\nVersion: 2.3.4-1\nDescription: x\n more: text\n\n"+
		"Package: gone\nStatus: deinstall ok config-files\nVersion: 1.0\n\nPackage: bad\nStatus: install ok installed\nVersion: 1 2\n")
	write(ListsDir+"/buildkit.list", "/usr/local/bin/buildkitd\n/usr/bin/runc\n")
	write(ListsDir+"/buildkit.version", "v0.32.2\n")
	write(ListsDir+"/crictl.version", "$(id)\n")
	write(ListsDir+"/README", "not a list\n")
	if err := os.Symlink("/etc/passwd", filepath.Join(root, ListsDir, "evil.list")); err != nil {
		t.Fatal(err)
	}
	db, err := Load(root, container.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range []string{"usr/bin/containerd", "usr/bin/runc", "usr/local/bin/buildkitd", "etc/passwd"} {
		got[p] = db.Owners.Owner(p)
	}
	want := map[string]string{
		"usr/bin/containerd":      "containerd.io",
		"usr/bin/runc":            "buildkit", // the last writer
		"usr/local/bin/buildkitd": "buildkit",
		"etc/passwd":              Unknown,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"containerd.io": "2.3.4-1", "buildkit": "v0.32.2"}, db.Versions); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	// Ignored: bad's version, crictl's version, evil.list.
	if len(db.Packages) != 1 || len(db.Local) != 1 || db.Ignored != 3 {
		t.Errorf("Packages, Local, Ignored = %d, %d, %d; want 1, 1, 3", len(db.Packages), len(db.Local), db.Ignored)
	}
	if got, want := db.Describe("img"), "owners: from the dpkg database in img (1 package) and /"+ListsDir+" (1 package); 3 unreadable entries ignored, their files are owned by unknown"; got != want {
		t.Errorf("Describe:\n got %q\nwant %q", got, want)
	}
}

// FuzzDpkgStatus: no status file makes the parser fail or panic, and
// every version it records is a valid one, of a valid package name.
func FuzzDpkgStatus(f *testing.F) {
	f.Add([]byte("Package: podman\nStatus: install ok installed\nVersion: 4.3.1+ds1-8+deb12u1+b3\n\n"))
	f.Add([]byte("Package: a\r\nVersion: 1\r\nStatus: install ok installed\r\n"))
	f.Add([]byte("Package:\nVersion:\nStatus: installed\n\n\n Package: x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		db := newDB()
		if err := db.readStatus(bytes.NewReader(data)); err != nil {
			t.Fatalf("error on in-memory input: %v", err)
		}
		for p, v := range db.Versions {
			if _, ok := DpkgPackage(p + ".list"); !ok || !validVersion(v) {
				t.Fatalf("recorded %q = %q", p, v)
			}
		}
	})
}
