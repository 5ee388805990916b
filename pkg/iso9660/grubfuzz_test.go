package iso9660

import (
	"archive/tar"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzGrubImage: whatever the bytes, ReadGrubImage ends with what lies
// inside them or an error, never a panic or an endless walk of modules.
// Seeds: modules areas as grub-mkimage and grub-mkstandalone lay them
// out, and, when grub-mkimage is here, a real program's.
func FuzzGrubImage(f *testing.F) {
	md := ustar(f, []*tar.Header{{Name: "boot/grub/grub.cfg", Typeflag: tar.TypeReg, Mode: 0o644}}, map[string]string{"boot/grub/grub.cfg": "configfile /x\n"})
	f.Add(fakeGrub(true, grubModule{grubObjELF, []byte("\x7fELF")}, grubModule{grubObjConfig, []byte("search --label X --set root\n\x00")}, grubModule{grubObjPrefix, []byte("/EFI/BOOT\x00")}))
	f.Add(fakeGrub(false, grubModule{grubObjPrefix, []byte("(memdisk)/boot/grub\x00")}, grubModule{grubObjMemdisk, md}))
	if _, err := exec.LookPath("grub-mkimage"); err == nil {
		dir := f.TempDir()
		cfg, out := filepath.Join(dir, "stub.cfg"), filepath.Join(dir, "x.efi")
		if err := os.WriteFile(cfg, []byte("search --no-floppy --label EFIBOOTISO --set root\n"), 0o644); err != nil {
			f.Fatal(err)
		}
		cmd := exec.Command("grub-mkimage", "-O", "x86_64-efi", "-o", out, "-p", "/EFI/BOOT", "-c", cfg)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if b, err := cmd.CombinedOutput(); err != nil {
			f.Fatalf("grub-mkimage: %v\n%s", err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			f.Fatal(err)
		}
		// Its mods section alone, in a small PE file: the fuzzer is
		// slow on a program's 127 KB.
		mods, wide, err := peSection(b, "mods")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(fakePE(wide, mods))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ReadGrubImage(b)
		if err != nil {
			return
		}
		if len(g.Config) > len(b) || strings.IndexByte(g.Prefix, 0) >= 0 {
			t.Fatalf("config of %d bytes, prefix %q from %d bytes", len(g.Config), g.Prefix, len(b))
		}
		for p, data := range g.Memdisk {
			if len(data) > len(b) || path.Clean(p) != p || !strings.HasPrefix(p, "/") {
				t.Fatalf("memdisk %q: %d bytes from %d", p, len(data), len(b))
			}
		}
	})
}

// FuzzGrubConfig: whatever the text, a GRUB configuration is followed or
// refused, never a panic or an endless run; what it names is an absolute
// clean path of the image with no "($root)" marker left in it. The seeds
// are minikube's grub.cfg and grub-stub.cfg (aarch64, x86_64) and the cases of
// TestGrubConfig's kinds.
func FuzzGrubConfig(f *testing.F) {
	for _, arch := range []string{"aarch64", "x86_64"} {
		for _, name := range []string{"grub.cfg", "grub-stub.cfg"} {
			b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "minikube-eb25dbc7", "deploy", "iso", "minikube-iso", "board", "minikube", arch, name))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, name == "grub-stub.cfg")
		}
	}
	for _, s := range []string{
		"set default=0\nmenuentry 'a' --class x {\n linux ($root)/boot/bzimage console=ttyS0\n initrd /boot/initrd /boot/b # c\n}\n",
		"search --no-floppy --label EFIBOOTISO --set=root\nset prefix=($root)/EFI/BOOT\nconfigfile ($root)/a.cfg\nsource /a.cfg\n",
		"set rd=/x\ninitrd $rd\nloopback loop /x\ninitrd (loop)/x newc:a:/b\n",
		"menuentry \"x {\n}\n",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, cfg []byte, embedded bool) {
		src := grubTestSource(map[string]string{"/a.cfg": "menuentry b {\n initrd /boot/a\n}\nsource /b.cfg\n", "/b.cfg": "initrd /boot/b\n"}, map[string]string{"/m.cfg": "source /a.cfg\n"})
		r := &grubRun{src: src}
		st := grubState{root: devImage}
		if err := r.runText("g", cfg, embedded, &st, nil); err != nil {
			return
		}
		for _, l := range r.lines {
			for _, p := range l.files {
				if path.Clean(p) != p || !strings.HasPrefix(p, "/") || strings.Contains(p, rootWord) {
					t.Fatalf("%s: file %q", l.where, p)
				}
			}
		}
	})
}
