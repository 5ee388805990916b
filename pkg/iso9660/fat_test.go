package iso9660

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// TestFATLongName: a file the firmware finds by its long name,
// BootX64.efi, whose short name says BOOTX64.TXT, is found: on a1bb362
// only short names were compared, so an EFI program (or a grub.cfg)
// under another short name went unread. A long name whose checksum does
// not match its short entry is an orphan, ignored as readers ignore it.
func TestFATLongName(t *testing.T) {
	for _, tool := range []string{"mkfs.fat", "mmd", "mcopy"} {
		archivetest.RequireTool(t, tool)
	}
	dir := t.TempDir()
	img, src := filepath.Join(dir, "efiboot.img"), filepath.Join(dir, "BootX64.efi")
	if err := os.WriteFile(src, []byte("a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{"mkfs.fat", "-C", img, "64"}, {"mmd", "-i", img, "::/EFI", "::/EFI/BOOT"}, {"mcopy", "-i", img, src, "::/EFI/BOOT/"}} {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1", "LC_ALL=C")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c[0], err, b)
		}
	}
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, []byte("BOOTX64 EFI"))
	if at < 32 || b[at-32+11] != 0x0F {
		t.Fatalf("mcopy wrote no long name before BOOTX64.EFI (at %d)", at)
	}
	copy(b[at+8:], "TXT")
	find := func(b []byte) []string {
		fat, err := OpenFAT(bytes.NewReader(b), 0, int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		found, err := fat.FindFunc(func(name string) bool { return matchName(name, []string{"bootx64.efi"}) }, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range found {
			out = append(out, f.Path+" "+string(f.Data))
		}
		return out
	}
	var sum byte
	for _, c := range b[at : at+11] {
		sum = (sum&1)<<7 + sum>>1 + c
	}
	orphan := bytes.Clone(b)
	for i := at - 32; i >= 0 && b[i+11] == 0x0F; i -= 32 {
		b[i+13] = sum
	}
	if d := cmp.Diff([]string{"/EFI/BOOT/BOOTX64.TXT a program"}, find(b)); d != "" {
		t.Errorf("by its long name (-want +got):\n%s", d)
	}
	if got := find(orphan); len(got) != 0 {
		t.Errorf("an orphan long name was taken: %q", got)
	}
}
