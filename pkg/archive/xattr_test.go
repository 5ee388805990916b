package archive

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// capTree makes a tree with what a real image carries in extended
// attributes: a ping that needs cap_net_raw (setcap, as Debian's
// iputils-ping postinst does), a user attribute on a file and one on a
// directory.
func capTree(t *testing.T) string {
	t.Helper()
	archivetest.RequireRoot(t, "setting security.capability")
	requireTool(t, "setcap")
	root := t.TempDir()
	mustDo(t, os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755))
	mustDo(t, os.MkdirAll(filepath.Join(root, "etc/cni"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(root, "usr/bin/ping"), []byte("#!/bin/true\n"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(root, "etc/motd"), []byte("hi\n"), 0o644))
	runIn(t, "", nil, "setcap", "cap_net_raw+ep", filepath.Join(root, "usr/bin/ping"))
	mustDo(t, unix.Setxattr(filepath.Join(root, "etc/motd"), "user.origin", []byte("base\x00layer"), 0))
	mustDo(t, unix.Setxattr(filepath.Join(root, "etc/cni"), "user.dir", []byte("d"), 0))
	return root
}

// treeXattrs reads what getcap and getxattr say of the tree's files.
func treeXattrs(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{"getcap usr/bin/ping": strings.TrimSpace(strings.TrimPrefix(runIn(t, "", nil, "getcap", filepath.Join(root, "usr/bin/ping")), filepath.Join(root, "usr/bin/ping")))}
	for _, f := range []struct{ name, attr string }{{"etc/motd", "user.origin"}, {"etc/cni", "user.dir"}} {
		buf := make([]byte, 256)
		n, err := unix.Getxattr(filepath.Join(root, f.name), f.attr, buf)
		if err != nil {
			got[f.name+" "+f.attr] = err.Error()
			continue
		}
		got[f.name+" "+f.attr] = string(buf[:n])
	}
	return got
}

var wantTreeXattrs = map[string]string{"getcap usr/bin/ping": "cap_net_raw=ep", "etc/motd user.origin": "base\x00layer", "etc/cni user.dir": "d"}

// TestXattrsTarToTreeToTar: the extended attributes GNU tar --xattrs and
// bsdtar store (PAX SCHILY.xattr, and bsdtar's LIBARCHIVE.xattr) are set
// on the tree written from the tar, read from the tree, and written to a
// tar again that GNU tar extracts with them: getcap shows the capability
// at every step.
func TestXattrsTarToTreeToTar(t *testing.T) {
	requireGNUTar(t)
	src := capTree(t)
	if diff := cmp.Diff(wantTreeXattrs, treeXattrs(t, src)); diff != "" {
		t.Fatalf("the source tree (-want +got):\n%s", diff)
	}
	for _, tool := range [][]string{{"tar", "--xattrs", "--xattrs-include=*", "--format=posix"}, {"bsdtar", "--xattrs"}} {
		t.Run(tool[0], func(t *testing.T) {
			requireTool(t, tool[0])
			in := filepath.Join(t.TempDir(), "in.tar")
			runIn(t, src, nil, tool[0], append(tool[1:], "-cf", in, ".")...)
			b, err := os.ReadFile(in)
			mustDo(t, err)

			tree := tarToTree(t, b)
			if diff := cmp.Diff(wantTreeXattrs, treeXattrs(t, tree)); diff != "" {
				t.Errorf("tar -> tree (-want +got):\n%s", diff)
			}

			r, err := NewDirReader(tree, DirReaderOptions{})
			mustDo(t, err)
			var out bytes.Buffer
			tw := NewTarWriter(&out, tar.FormatUnknown)
			mustDo(t, Copy(tw, r, CopyOptions{Dest: KindTar}))
			mustDo(t, tw.Close())
			back := filepath.Join(t.TempDir(), "out.tar")
			mustDo(t, os.WriteFile(back, out.Bytes(), 0o644))
			x := t.TempDir()
			runIn(t, x, nil, "tar", "--xattrs", "--xattrs-include=*", "-xpf", back)
			if diff := cmp.Diff(wantTreeXattrs, treeXattrs(t, x)); diff != "" {
				t.Errorf("tree -> tar -> GNU tar -x (-want +got):\n%s", diff)
			}
		})
	}
}

// TestXattrsRefused: what cannot be carried is refused, naming the file:
// an ACL in text (GNU tar --acls) written to a tree, an attribute whose
// two records disagree.
func TestXattrsRefused(t *testing.T) {
	tests := []struct {
		name string
		recs map[string]string
		dir  bool
		want string
	}{
		{"acl to a tree", map[string]string{"SCHILY.acl.access": "user::rw-,group::r--,other::r--"}, true, `entry "f": its POSIX ACL (PAX record "SCHILY.acl.access") cannot be written to a tree`},
		{"schily and libarchive differ", map[string]string{"SCHILY.xattr.security.capability": "a", "LIBARCHIVE.xattr.security.capability": "Yg"}, false, `tar "f" at offset 0: extended attribute "security.capability": SCHILY.xattr and LIBARCHIVE.xattr records differ`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := buildTar(t, []tarItem{{hdr: tar.Header{Name: "f", Typeflag: tar.TypeReg, Mode: 0o644, PAXRecords: tc.recs, Format: tar.FormatPAX}}})
			var w Writer = NewTarWriter(&bytes.Buffer{}, tar.FormatUnknown)
			if tc.dir {
				dw, err := NewDirWriter(t.TempDir(), DirWriterOptions{})
				mustDo(t, err)
				defer dw.Close()
				w = dw
			}
			err := Copy(w, NewTarReader(bytes.NewReader(in)), CopyOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// tarToTree writes the tar archive b as a tree through DirWriter, as
// repack and apply write a tree output, and returns the tree's path.
func tarToTree(t *testing.T, b []byte) string {
	t.Helper()
	tree := filepath.Join(t.TempDir(), "tree")
	mustDo(t, os.Mkdir(tree, 0o755))
	w, err := NewDirWriter(tree, DirWriterOptions{})
	mustDo(t, err)
	mustDo(t, Copy(w, NewTarReader(bytes.NewReader(b)), CopyOptions{Dest: KindDir}))
	mustDo(t, w.Close())
	return tree
}
