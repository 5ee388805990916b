package container

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
)

// TestISOInitrdNamedAsPattern: an initrd named /boot/* is one file to
// isolinux, and to xorriso only with pattern expansion off; with it on
// (xorriso's default), apply's -chmod, -chown, -chgrp and -alter_date of
// that initrd gave its mode, owner and dates to every file of /boot.
// Each other file of /boot keeps its own, read back by the project's
// reader and by xorriso -lsl.
func TestISOInitrdNamedAsPattern(t *testing.T) {
	dir := t.TempDir()
	var cpio bytes.Buffer
	w := archive.NewCpioWriter(&cpio, archive.Newc)
	for _, name := range []string{"etc/keep", "etc/drop"} {
		mustDo(t, w.WriteHeader(&archive.Entry{Name: name, Type: archive.TypeRegular, Mode: 0o644, Size: 2}))
		_, err := w.Write([]byte("x\n"))
		mustDo(t, err)
	}
	mustDo(t, w.Close())
	initrd, kernel := filepath.Join(dir, "initrd"), filepath.Join(dir, "kernel")
	mustDo(t, os.WriteFile(initrd, []byte("the initrd no entry loads"), 0o644))
	mustDo(t, os.WriteFile(kernel, []byte("a kernel"), 0o644))
	built := filepath.Join(dir, "built.iso")
	isotest.Build(t, isotest.BIOS, kernel, initrd, built, map[string]string{
		"isolinux/isolinux.cfg": "label a\n kernel /boot/bzImage\n append initrd=/boot/*\n",
		"boot/*":                cpio.String(),
	})
	// Distinct modes, owners and dates for each file of /boot, set by
	// xorriso itself (isotest writes every file 0644 and now).
	in := filepath.Join(dir, "in.iso")
	// no_emul_toc as apply's own xorriso run: one descriptor set at
	// sector 16, where isolinux's boot info table must name it.
	xorriso(t, "-no_rc", "-iso_rr_pattern", "off", "-indev", built, "-outdev", in, "-boot_image", "any", "replay",
		"-compliance", "no_emul_toc",
		"-chmod", "0600", "/boot/initrd", "--", "-chown", "7", "/boot/initrd", "--", "-chgrp", "8", "/boot/initrd", "--",
		"-alter_date", "m-c", "=1000000000", "/boot/initrd", "--",
		"-chmod", "0751", "/boot/bzImage", "--", "-chown", "9", "/boot/bzImage", "--",
		"-alter_date", "m-c", "=1100000000", "/boot/bzImage", "--",
		"-chmod", "0640", "/boot/*", "--", "-alter_date", "m-c", "=1200000000", "/boot/*", "--",
		"-commit", "-end")
	before := bootAttrs(t, in)
	if before["/boot/initrd"] == before["/boot/*"] || before["/boot/bzImage"] == before["/boot/*"] {
		t.Fatalf("the input's files of /boot are not distinct: %v", before)
	}

	out := filepath.Join(dir, "out.iso")
	drop := func(e *archive.Entry) (archive.Action, error) {
		if e.Name == "etc/drop" {
			return archive.Drop, nil
		}
		return archive.Keep, nil
	}
	res, err := Rewrite(in, out, RewriteOptions{Reuse: true, Transform: func(e Entries) error {
		return archive.Copy(e.Out, e.In, archive.CopyOptions{Dest: e.OutFormat.Kind, Decide: drop})
	}})
	mustDo(t, err)
	if !strings.HasSuffix(res.Compressor, "; image: "+CompressorXorriso) {
		t.Fatalf("compressor %q: not written by xorriso", res.Compressor)
	}
	if d := cmp.Diff(before, bootAttrs(t, out)); d != "" {
		t.Errorf("mode, owner or date of /boot's files after apply (-in +out):\n%s", d)
	}
	// xorriso's own view of the output: the same modes and owners.
	lsl := map[string]string{}
	for _, l := range strings.Split(xorriso(t, "-no_rc", "-indev", out, "-lsl", "/boot"), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(l, "-") {
			lsl[f[len(f)-1]] = strings.Join([]string{f[0], f[2], f[3]}, " ")
		}
	}
	want := map[string]string{"'*'": "-rw-r----- 0 0", "'bzImage'": "-rwxr-x--x 9 0", "'initrd'": "-rw------- 7 8"}
	if d := cmp.Diff(want, lsl); d != "" {
		t.Errorf("xorriso -lsl /boot of the output (-want +got):\n%s", d)
	}
}

// bootAttrs is each file of the image's /boot with its Rock Ridge mode,
// owner and modification time.
func bootAttrs(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	mustDo(t, err)
	im, err := iso9660.Open(bytes.NewReader(data), int64(len(data)))
	mustDo(t, err)
	out := map[string]string{}
	mustDo(t, im.Walk(func(f iso9660.File) error {
		if strings.HasPrefix(f.Path, "/boot/") {
			out[f.Path] = fmt.Sprintf("%o %d:%d %s", f.UnixMode, f.UID, f.GID, f.ModTime.UTC().Format(time.RFC3339))
		}
		return nil
	}))
	return out
}

// xorriso runs xorriso in the C locale and returns its output.
func xorriso(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("xorriso", args...)
	cmd.Env = append(envWithout("SOURCE_DATE_EPOCH"), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso %q: %v\n%s", args, err, out)
	}
	return string(out)
}
