package boot

import (
	"bytes"
	"io"

	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// TestBootSegments boots an initrd of segments that apply wrote (issue
// 28), as Debian and dracut lay them out: an early raw cpio with a
// microcode file, then the fixture's rootfs in gzip. apply copies the
// early segment byte for byte and writes the gzip one anew, with what it
// adds inside it, before its trailer (where lsinitramfs, which stops at
// the first trailer of the compressed rest, reads it: issue 37); the
// kernel must unpack, path for path, what GNU cpio extracts from the
// merged view, early files included, stripped files not.
func TestBootSegments(t *testing.T) {
	fx := newBootFixture(t)
	gz := filepath.Join(fx.work, "segments-rootfs.cpio.gz")
	makeCpioGz(t, fx.tree, gz)
	early := earlyCpio(t)
	input := filepath.Join(fx.work, "segments.img")
	writeFile(t, input, append(append([]byte{}, early...), readFileBytes(t, gz)...))
	image := filepath.Join(fx.work, "segments-image.img")
	out := string(fx.apply(t, input, image))
	img := readFileBytes(t, image)
	if !bytes.Equal(img[:len(early)], early) {
		t.Fatal("apply did not copy the early segment byte for byte")
	}
	list, err := exec.Command(fx.rootfsTrim, "list", image).CombinedOutput()
	if err != nil || !strings.Contains(string(list), "-- segment 2: gzip at offset") || strings.Contains(string(list), "-- segment 3") {
		t.Fatalf("the image is not two segments (%v):\n%s", err, list)
	}

	// GNU cpio's view of the merged entries: the tree they make, archived.
	merged := filepath.Join(fx.work, "segments-merged")
	if out, err := exec.Command(fx.rootfsTrim, "repack", "--archive-format", "dir", image, merged).CombinedOutput(); err != nil {
		t.Fatalf("repack to a tree: %v\n%s", err, out)
	}
	ref := filepath.Join(fx.work, "segments-ref.cpio.gz")
	makeCpioGz(t, merged, ref)
	want := archiveManifest(t, ref, filepath.Join(fx.work, "segments-extracted"))
	for _, p := range []string{"/kernel/x86/microcode/GenuineIntel.bin", "/boot-test-early"} {
		if _, ok := want[p]; !ok {
			t.Fatalf("the merged view has no %s", p)
		}
	}
	r := fx.boot(t, image, "boot an initrd of two segments")
	guest := r.lines(t, "manifest")
	checkUnpacked(t, want, guest)
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "removed" && f[0] != "deferred" && f[0] != "relocated") {
			continue
		}
		for _, g := range guest {
			if strings.HasSuffix(g, "|/"+f[1]) {
				t.Errorf("apply %s %s, and the guest has it: %s", f[0], f[1], g)
			}
		}
	}
}

// earlyCpio is an early segment as initramfs-tools' and dracut's: the
// microcode (made here: Debian's microcode packages are non-free) and a
// file of its own, uncompressed.
func earlyCpio(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := archive.NewCpioWriter(&b, archive.Newc)
	mt := time.Unix(1700000000, 0).UTC()
	files := map[string]string{"kernel/x86/microcode/GenuineIntel.bin": "microcode made for the boot test\n", "boot-test-early": "from the early segment\n"}
	for i, n := range []string{"kernel/", "kernel/x86/", "kernel/x86/microcode/", "kernel/x86/microcode/GenuineIntel.bin", "boot-test-early"} {
		e := &archive.Entry{Name: strings.TrimSuffix(n, "/"), Type: archive.TypeRegular, Mode: 0o644, ModTime: mt, Nlink: 1, Inode: uint64(900001 + i), Size: int64(len(files[n]))}
		if strings.HasSuffix(n, "/") {
			e.Type, e.Mode, e.Nlink = archive.TypeDir, 0o755, 2
		}
		if err := w.WriteHeader(e); err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[n])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
