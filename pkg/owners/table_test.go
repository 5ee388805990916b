package owners

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOwnersOrder checks that owners come back in the order Buildroot
// listed them, once each, and that paths with one owner, which share
// their list, stay apart when one of them gains another.
func TestOwnersOrder(t *testing.T) {
	o := New()
	err := o.ParseFileList(strings.NewReader(strings.Join([]string{
		"skeleton,./etc/a", "skeleton,./etc/b", "skeleton,./etc/c",
		"busybox,./etc/a", "skeleton,./etc/a", "cri-o,./etc/c",
		"podman,./etc/a", "busybox,./etc/d",
	}, "\n")), "packages-file-list.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, p := range []string{"etc/a", "etc/b", "etc/c", "etc/d", "etc/e"} {
		got[p] = o.Of(p)
	}
	want := map[string][]string{
		"etc/a": {"skeleton", "busybox", "podman"},
		"etc/b": {"skeleton"},
		"etc/c": {"skeleton", "cri-o"},
		"etc/d": {"busybox"},
		"etc/e": nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
	for _, p := range []string{"skeleton", "busybox", "cri-o", "podman"} {
		if !o.Present(p) {
			t.Errorf("package %s not present", p)
		}
	}
}

func TestFileListErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"podman ./etc/x\n", "files.txt:1: want <package>,./<path>"},
		{"ok,./a\n,./etc/x\n", "files.txt:2: want <package>,./<path>"},
		{"ok,./a\nbad pkg,./etc/x\n", `files.txt:2: bad package name "bad pkg"`},
		{"p,./../../etc/passwd\n", "files.txt:1: unsafe path"},
	} {
		err := New().ParseFileList(strings.NewReader(tc.in), "files.txt")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzFileList(f *testing.F) {
	f.Add("podman,./etc/cni/net.d/87-podman-bridge.conflist\ncrio-bin,./usr/bin/crio\n")
	f.Add("a,./b,c\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		o := New()
		if err := o.ParseFileList(strings.NewReader(in), "f"); err != nil {
			return
		}
		for _, p := range o.Packages() {
			if p == "" || strings.ContainsAny(p, " \t/") {
				t.Fatalf("accepted package name %q", p)
			}
		}
	})
}

// BenchmarkReadFileList loads a file list shaped like a minikube target's:
// 20,000 paths from 200 packages, a few with a second owner.
func BenchmarkReadFileList(b *testing.B) {
	var sb strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&sb, "pkg%d,./usr/lib/pkg%d/share/file-%05d.so\n", i%200, i%200, i)
		if i%100 == 0 {
			fmt.Fprintf(&sb, "skeleton,./usr/lib/pkg%d/share/file-%05d.so\n", i%200, i)
		}
	}
	name := filepath.Join(b.TempDir(), "packages-file-list.txt")
	if err := os.WriteFile(name, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := New().ReadFileList(name); err != nil {
			b.Fatal(err)
		}
	}
}
