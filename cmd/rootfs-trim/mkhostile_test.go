package main

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// mkhostiletar NAME OUT [layout]: archivetest's hostile tar NAME (an entry
// whose name sources disagree), as a tar file, or with "layout" as the one
// layer of an OCI layout.
func mkhostiletar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 || len(args) == 3 && args[2] != "layout" {
		ts.Fatalf("usage: mkhostiletar NAME OUT [layout]")
	}
	for _, h := range archivetest.HostileTars() {
		if h.Name != args[0] {
			continue
		}
		if len(args) == 3 {
			ocitest.WriteLayout(ts.MkAbs(args[1]), ocitest.Image([]ocitest.Step{{CreatedBy: "ADD hostile.tar /", Raw: h.Tar}}, "linux/amd64"), "hostile")
			return
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), h.Tar, 0o644))
		return
	}
	ts.Fatalf("mkhostiletar: no hostile tar %q", args[0])
}
