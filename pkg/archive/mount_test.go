package archive

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// mountTreeEnv hands the tree to the copy of the test binary that runs in
// a private mount namespace.
const mountTreeEnv = "ROOTFS_TRIM_TEST_MOUNT_TREE"

// TestDirReaderStaysOnOneFilesystem: a tmpfs mounted inside the tree (as
// /proc, /sys or a bind mount are on a live root) is listed as the
// directory it is mounted on, and nothing of it is read. The mount is made
// in a private mount namespace (unshare(1), as root) by a second run of
// this test binary, so the host never sees it.
func TestDirReaderStaysOnOneFilesystem(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare(1) is not installed")
	}
	tree := t.TempDir()
	for _, d := range []string{"etc", "proc", "mnt/bind"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tree, "etc/hostname"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, namesOnly := range []bool{false, true} {
		cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0], "-test.run=^TestDirReaderMountHelper$")
		cmd.Env = append(os.Environ(), mountTreeEnv+"="+tree, "ROOTFS_TRIM_TEST_NAMES_ONLY="+map[bool]string{true: "1"}[namesOnly])
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("namesOnly=%v: %v\n%s", namesOnly, err, out)
		}
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			if n, ok := strings.CutPrefix(l, "entry "); ok {
				got = append(got, n)
			}
		}
		want := []string{".", "etc", "etc/hostname", "mnt", "mnt/bind", "proc"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("namesOnly=%v: listing (-want +got):\n%s\n%s", namesOnly, diff, out)
		}
	}
}

// TestDirReaderMountHelper runs only under TestDirReaderStaysOnOneFilesystem.
func TestDirReaderMountHelper(t *testing.T) {
	tree := os.Getenv(mountTreeEnv)
	if tree == "" {
		t.Skip("run by TestDirReaderStaysOnOneFilesystem")
	}
	if err := unix.Mount("tmpfs", filepath.Join(tree, "proc"), "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "proc/inside"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A bind mount of the same filesystem: st_dev does not change, the
	// mount does.
	if err := unix.Mount(filepath.Join(tree, "etc"), filepath.Join(tree, "mnt/bind"), "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	d, err := NewDirReader(tree, DirReaderOptions{NamesOnly: os.Getenv("ROOTFS_TRIM_TEST_NAMES_ONLY") == "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for {
		e, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("entry " + e.Name + "\n")
	}
}
