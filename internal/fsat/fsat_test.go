package fsat

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// tree makes a directory dst beside outside/secret, with in dst: a
// symlink out (out -> ../outside), one inside (in -> d), a directory d and
// a symlink at a file's name (f -> ../outside/secret).
func tree(t *testing.T) (dst, outside string) {
	t.Helper()
	base := t.TempDir()
	dst, outside = filepath.Join(base, "dst"), filepath.Join(base, "outside")
	for _, d := range []string{dst, outside, filepath.Join(dst, "d")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"out": "../outside", "in": "d", "f": "../outside/secret"} {
		if err := os.Symlink(target, filepath.Join(dst, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dst, outside
}

func openBoth(t *testing.T, dst string) map[string]*Tree {
	t.Helper()
	r, err := os.OpenRoot(dst)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	strict, err := OpenNoSymlinks(dst, Options{MakeParents: true, ReplaceTemp: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { strict.Close() })
	return map[string]*Tree{"beneath": New(r, Options{}), "nosymlinks": strict}
}

func checkOutside(t *testing.T, outside string) {
	t.Helper()
	ents, _ := os.ReadDir(outside)
	b, _ := os.ReadFile(filepath.Join(outside, "secret"))
	if len(ents) != 1 || string(b) != "secret" {
		t.Errorf("outside now holds %v, secret %q", ents, b)
	}
}

// TestWritesStayInTheTree writes through each symlink of the tree: nothing
// outside changes in either mode, a link at the name is replaced, and
// NoSymlinks refuses even the link that stays inside.
func TestWritesStayInTheTree(t *testing.T) {
	file := File{Data: bytes.NewReader(nil), Mode: 0o644}
	tests := []struct {
		name       string
		write      string
		beneathErr bool // in a Beneath tree
	}{
		{name: "through a symlink out", write: "out/x", beneathErr: true},
		{name: "through a symlink inside", write: "in/x", beneathErr: false},
		{name: "over a symlink out", write: "f", beneathErr: false},
	}
	for _, tc := range tests {
		for _, mode := range []string{"beneath", "nosymlinks"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				dst, outside := tree(t)
				file.Data = bytes.NewReader([]byte("new"))
				err := openBoth(t, dst)[mode].WriteFile(tc.write, tc.write+".tmp", file)
				wantErr := tc.beneathErr
				if mode == "nosymlinks" && tc.write != "f" {
					wantErr = true
					if !errors.Is(err, ErrSymlinkOnPath) {
						t.Errorf("err = %v, want ErrSymlinkOnPath", err)
					}
				}
				if (err != nil) != wantErr {
					t.Errorf("err = %v, want an error: %v", err, wantErr)
				}
				checkOutside(t, outside)
				if tc.write == "f" {
					if fi, err := os.Lstat(filepath.Join(dst, "f")); err != nil || !fi.Mode().IsRegular() {
						t.Errorf("f: %v, %v; want the link replaced by a file", fi, err)
					}
				}
			})
		}
	}
}

// TestRemoveAllFollowsNothing removes a symlink to a directory: the link
// goes, the directory and what it holds stay.
func TestRemoveAllFollowsNothing(t *testing.T) {
	dst, outside := tree(t)
	r, err := os.OpenRoot(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := New(r, Options{})
	for _, name := range []string{"out", "in", "f", "missing", "missing/x"} {
		if err := tr.RemoveAll(name); err != nil {
			t.Errorf("RemoveAll(%q): %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "d")); err != nil {
		t.Errorf("d: %v", err)
	}
	ents, _ := os.ReadDir(dst)
	if len(ents) != 1 {
		t.Errorf("dst holds %v, want d alone", ents)
	}
	checkOutside(t, outside)
}
