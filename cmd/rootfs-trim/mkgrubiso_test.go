package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
)

// mkgrubiso [-standalone] [-file PATH=SRC]... EMBEDDED GRUBCFG INITRD OUT:
// an EFI ISO as minikube's aarch64 one is made (isotest.GrubEFI): GRUB
// from grub-mkimage -p /EFI/BOOT -c EMBEDDED (or grub-mkstandalone with
// EMBEDDED as its memdisk's grub.cfg), GRUBCFG as EFI/BOOT/grub.cfg,
// INITRD as boot/initrd, and each SRC at PATH in the ISO.
func mkgrubiso(ts *testscript.TestScript, neg bool, args []string) {
	var g isotest.GrubEFI
	g.Files = map[string]string{}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-standalone":
			g.Standalone = true
			args = args[1:]
		case args[0] == "-file" && len(args) > 1:
			p, src, ok := strings.Cut(args[1], "=")
			if !ok {
				ts.Fatalf("mkgrubiso: -file PATH=SRC")
			}
			b, err := os.ReadFile(ts.MkAbs(src))
			ts.Check(err)
			g.Files[p] = string(b)
			args = args[2:]
		default:
			ts.Fatalf("mkgrubiso: unknown option %s", args[0])
		}
	}
	if neg || len(args) != 4 {
		ts.Fatalf("usage: mkgrubiso [-standalone] [-file PATH=SRC]... EMBEDDED GRUBCFG INITRD OUT")
	}
	read := func(p string) string {
		b, err := os.ReadFile(ts.MkAbs(p))
		ts.Check(err)
		return string(b)
	}
	g.Embedded, g.Grub = read(args[0]), read(args[1])
	work, err := os.MkdirTemp(ts.Getenv("WORK"), "mkgrubiso-")
	ts.Check(err)
	defer os.RemoveAll(work)
	kernel := filepath.Join(work, "kernel")
	ts.Check(os.WriteFile(kernel, []byte("a stand-in kernel"), 0o644))
	ts.Check(g.Make(work, kernel, ts.MkAbs(args[2]), ts.MkAbs(args[3])))
}
