package fsat

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestXattrs: attributes set on an entry (by OnEntry, as the tree writer
// does) are those listed, with /proc and without; a symlink out of the
// tree (f -> ../outside/secret) gets and gives nothing of its target's.
func TestXattrs(t *testing.T) {
	for _, noProc := range []bool{false, true} {
		t.Run(map[bool]string{false: "proc", true: "no proc"}[noProc], func(t *testing.T) {
			if noProc {
				old := procMissing
				procMissing = func() bool { return true }
				t.Cleanup(func() { procMissing = old })
			}
			dst, outside := tree(t)
			if err := os.WriteFile(filepath.Join(dst, "d", "file"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := unix.Setxattr(filepath.Join(outside, "secret"), "user.secret", []byte("s"), 0); err != nil {
				t.Skipf("no user attributes here: %v", err)
			}
			r, err := os.OpenRoot(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			tr := New(r, Options{})
			want := map[string]string{"user.a": "1", "user.bin": "\x00\x01"}
			for _, name := range []string{"d/file", "d"} {
				if err := tr.OnEntry(name, func(at *At) error { return SetXattrs(at, name, want) }); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			got := map[string]map[string]string{}
			for _, name := range []string{"d/file", "d", "f"} {
				err := tr.InParent(name, func(dir int, base string) error {
					var st unix.Stat_t
					if err := unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
						return err
					}
					x, err := ListXattrs(dir, base, name, &st)
					got[name] = x
					return err
				})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			wantAll := map[string]map[string]string{"d/file": want, "d": want, "f": nil}
			if diff := cmp.Diff(wantAll, got); diff != "" {
				t.Errorf("listed (-want +got):\n%s", diff)
			}
			err = tr.OnEntry("f", func(at *At) error { return SetXattrs(at, "f", map[string]string{"user.x": "y"}) })
			if err == nil {
				t.Error("an attribute set on a symlink, want an error (user.* is not allowed there)")
			}
		})
	}
}
