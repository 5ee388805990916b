package main

import (
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660/isotest"
)

// mkiso [-corrupt HOW] [-early EARLY] bios|hybrid|efi INITRD OUT: one of
// minikube's ISOs (pkg/iso9660/isotest) around INITRD, with a stand-in
// kernel; -early loads EARLY before it (isotest.Early); -corrupt then
// breaks it (isotest.Corruptions).
func mkiso(ts *testscript.TestScript, neg bool, args []string) {
	var corrupt string
	var extra map[string]string
	for len(args) > 2 && (args[0] == "-corrupt" || args[0] == "-early") {
		if args[0] == "-corrupt" {
			corrupt = args[1]
		} else {
			early, err := os.ReadFile(ts.MkAbs(args[1]))
			ts.Check(err)
			extra = map[string]string{isotest.Early: string(early)}
		}
		args = args[2:]
	}
	if neg || len(args) != 3 {
		ts.Fatalf("usage: mkiso [-corrupt HOW] [-early EARLY] bios|hybrid|efi INITRD OUT")
	}
	work, err := os.MkdirTemp(ts.Getenv("WORK"), "mkiso-")
	ts.Check(err)
	defer os.RemoveAll(work)
	kernel := filepath.Join(work, "kernel")
	ts.Check(os.WriteFile(kernel, []byte("a stand-in kernel"), 0o644))
	out := ts.MkAbs(args[2])
	ts.Check(isotest.Make(isotest.Kind(args[0]), work, kernel, ts.MkAbs(args[1]), out, extra))
	if corrupt != "" {
		img, err := os.ReadFile(out)
		ts.Check(err)
		ts.Check(isotest.Corrupt(img, corrupt))
		ts.Check(os.WriteFile(out, img, 0o644))
	}
}
