package iso9660

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// grubModule is one module of a modules area: its type and body.
type grubModule struct {
	typ  uint32
	body []byte
}

// fakeGrub is a PE file whose one section, "mods", holds modules as
// grub-mkimage lays them out (util/mkimage.c): a grub_module_info, then
// each module's header and body, aligned to the pointer size.
func fakeGrub(wide bool, mods ...grubModule) []byte {
	align, info := 4, 12
	if wide {
		align, info = 8, 24
	}
	var area bytes.Buffer
	for _, m := range mods {
		h := binary.LittleEndian.AppendUint32(nil, m.typ)
		h = binary.LittleEndian.AppendUint32(h, uint32(8+len(m.body)))
		area.Write(h)
		area.Write(m.body)
		for area.Len()%align != 0 {
			area.WriteByte(0)
		}
	}
	le32, le64 := binary.LittleEndian.AppendUint32, binary.LittleEndian.AppendUint64
	sec := le32(nil, grubModuleMagic)
	if wide {
		sec = le64(le32(sec, 0), uint64(info))
		sec = le64(sec, uint64(info+area.Len()))
	} else {
		sec = le32(le32(sec, uint32(info)), uint32(info+area.Len()))
	}
	return fakePE(wide, append(sec, area.Bytes()...))
}

// fakePE is a PE file of one section, "mods", holding sec.
func fakePE(wide bool, sec []byte) []byte {
	optSize := 224
	magic := uint16(0x10b)
	if wide {
		optSize, magic = 240, 0x20b
	}
	b := make([]byte, 0x40)
	copy(b, "MZ")
	binary.LittleEndian.PutUint32(b[0x3c:], 0x40)
	b = append(b, "PE\x00\x00"...)
	coff := make([]byte, 20)
	binary.LittleEndian.PutUint16(coff[2:], 1)
	binary.LittleEndian.PutUint16(coff[16:], uint16(optSize))
	b = append(b, coff...)
	opt := make([]byte, optSize)
	binary.LittleEndian.PutUint16(opt, magic)
	b = append(b, opt...)
	data := len(b) + 40
	h := make([]byte, 40)
	copy(h, "mods")
	binary.LittleEndian.PutUint32(h[8:], uint32(len(sec)))
	binary.LittleEndian.PutUint32(h[16:], uint32(len(sec)))
	binary.LittleEndian.PutUint32(h[20:], uint32(data))
	return append(append(b, h...), sec...)
}

// ustar is a tar of the given headers, file bodies from their names'
// contents map.
func ustar(t testing.TB, hdrs []*tar.Header, content map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	for _, h := range hdrs {
		h.Size = int64(len(content[h.Name]))
		if h.Format == tar.FormatUnknown {
			h.Format = tar.FormatUSTAR
		}
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content[h.Name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadGrubImage: the modules area read as FOR_MODULES walks it, and
// what is refused.
func TestReadGrubImage(t *testing.T) {
	cfg := grubModule{grubObjConfig, []byte("search --label X --set root\n\x00\x00\x00")}
	prefix := grubModule{grubObjPrefix, []byte("/EFI/BOOT\x00\x00\x00")}
	md := ustar(t, []*tar.Header{{Name: "boot/", Typeflag: tar.TypeDir, Mode: 0o755}, {Name: "boot/grub/grub.cfg", Typeflag: tar.TypeReg, Mode: 0o644}},
		map[string]string{"boot/grub/grub.cfg": "configfile /x\n"})
	memdisk := grubModule{grubObjMemdisk, md}
	elf := grubModule{grubObjELF, []byte("\x7fELF module")}
	for _, tc := range []struct {
		name string
		img  []byte
		want *GrubImage
		err  string
	}{
		{name: "mkimage-64", img: fakeGrub(true, elf, cfg, prefix),
			want: &GrubImage{Config: []byte("search --label X --set root\n"), HasPrefix: true, Prefix: "/EFI/BOOT"}},
		{name: "mkimage-32", img: fakeGrub(false, elf, prefix, cfg),
			want: &GrubImage{Config: []byte("search --label X --set root\n"), HasPrefix: true, Prefix: "/EFI/BOOT"}},
		{name: "standalone", img: fakeGrub(true, memdisk, grubModule{grubObjPrefix, []byte("(memdisk)/boot/grub\x00")}),
			want: &GrubImage{HasPrefix: true, Prefix: "(memdisk)/boot/grub", Memdisk: map[string][]byte{"/boot/grub/grub.cfg": []byte("configfile /x\n")}}},
		{name: "two-configs", img: fakeGrub(true, cfg, cfg), err: "a second embedded configuration"},
		{name: "two-prefixes", img: fakeGrub(true, prefix, elf, prefix), err: "a second prefix"},
		{name: "not-pe", img: []byte("#!/bin/sh\n"), err: ErrNotGrub.Error()},
		{name: "no-mods", img: bytes.Replace(fakeGrub(true, cfg), []byte("mods\x00"), []byte("data\x00"), 1), err: ErrNotGrub.Error()},
		{name: "no-magic", img: bytes.Replace(fakeGrub(true, cfg), []byte("mimg"), []byte("mimq"), 1), err: "no module information"},
		{name: "symlink-in-memdisk", img: fakeGrub(true, grubModule{grubObjMemdisk, ustar(t, []*tar.Header{{Name: "boot/grub/grub.cfg", Typeflag: tar.TypeSymlink, Linkname: "/x"}}, nil)}),
			err: "GRUB memdisk: tar entry \"boot/grub/grub.cfg\": type '2', not a file or directory"},
		{name: "twice-in-memdisk", img: fakeGrub(true, grubModule{grubObjMemdisk, ustar(t, []*tar.Header{{Name: "a", Typeflag: tar.TypeReg}, {Name: "./a", Typeflag: tar.TypeReg}}, nil)}),
			err: "tar entry /a: twice"},
		{name: "pax-in-memdisk", img: fakeGrub(true, grubModule{grubObjMemdisk, ustar(t, []*tar.Header{{Name: "a", Typeflag: tar.TypeReg, Format: tar.FormatPAX, PAXRecords: map[string]string{"comment": "b"}}}, nil)}),
			err: "type 'x', not a file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ReadGrubImage(tc.img)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, g); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestReadGrubImageSizes: a module whose size is below its header's or
// beyond the area (GRUB's FOR_MODULES would loop or read past it).
func TestReadGrubImageSizes(t *testing.T) {
	img := fakeGrub(true, grubModule{grubObjConfig, []byte("abcdefgh")})
	at := bytes.Index(img, []byte("abcdefgh")) - 4
	for size, want := range map[uint32]string{0: "size 0 out of bounds", 7: "size 7 out of bounds", 1 << 20: "out of bounds"} {
		bad := bytes.Clone(img)
		binary.LittleEndian.PutUint32(bad[at:], size)
		if _, err := ReadGrubImage(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("size %d: error %v, want %q", size, err, want)
		}
	}
}

// TestReadGrubImageReal: GRUB's own tools as the writers: grub-mkimage's
// -c and -p, grub-mkstandalone's memdisk and prefix, read back as given.
func TestReadGrubImageReal(t *testing.T) {
	archivetest.RequireTool(t, "grub-mkimage")
	archivetest.RequireTool(t, "grub-mkstandalone")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "stub.cfg")
	stub := "insmod iso9660\nsearch --no-floppy --label EFIBOOTISO --set root\n# used to find the cd\n"
	if err := os.WriteFile(cfg, []byte(stub), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) []byte {
		out := filepath.Join(dir, name+".efi")
		cmd := exec.Command(name, append([]string{"-O", "x86_64-efi", "-o", out}, args...)...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	g, err := ReadGrubImage(run("grub-mkimage", "-p", "/EFI/BOOT", "-c", cfg, "iso9660", "search_label", "normal"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&GrubImage{Config: []byte(stub), HasPrefix: true, Prefix: "/EFI/BOOT"}, g); d != "" {
		t.Errorf("grub-mkimage (-want +got):\n%s", d)
	}
	g, err = ReadGrubImage(run("grub-mkstandalone", "--modules=iso9660", "--install-modules=iso9660 normal", "--locales=", "--fonts=", "--themes=", "boot/grub/grub.cfg="+cfg))
	if err != nil {
		t.Fatal(err)
	}
	if g.Config != nil || g.Prefix != "(memdisk)/boot/grub" || string(g.Memdisk["/boot/grub/grub.cfg"]) != stub {
		t.Errorf("grub-mkstandalone: config %q, prefix %q, memdisk grub.cfg %q", g.Config, g.Prefix, g.Memdisk["/boot/grub/grub.cfg"])
	}
}
