package main

import (
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// mkimage KIND OUT: the kicbase-like image of ocitest (one layer per
// Dockerfile step, from $PACKAGES, with whiteouts), written by
// go-containerregistry as KIND: layout (ref name kicbase), multi (a
// layout of linux/amd64 and linux/arm64), docker-archive (its docker save
// tarball) or docker25 (Docker 25+'s tarball, an OCI layout inside).
func mkimage(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: mkimage layout|zstd|multi|docker-archive|docker25 OUT")
	}
	steps := ocitest.Kicbase(ts.Getenv("PACKAGES"))
	out := ts.MkAbs(args[1])
	switch args[0] {
	case "layout":
		ocitest.WriteLayout(out, ocitest.Image(steps, "linux/amd64"), "kicbase")
	case "zstd":
		ocitest.WriteLayout(out, ocitest.ZstdImage(steps, "linux/amd64"), "kicbase")
	case "multi":
		ocitest.WriteMulti(out, steps, "kicbase", "linux/amd64", "linux/arm64")
	case "docker-archive":
		ocitest.WriteDockerArchive(out, ocitest.Image(steps, "linux/amd64"), "kicbase:test")
	case "docker25":
		ocitest.WriteDocker25(out, ocitest.Image(steps, "linux/amd64"), "kicbase:test")
	default:
		if bad, ok := strings.CutPrefix(args[0], "bad-"); ok && slices.Contains(ocitest.BadKinds, bad) {
			ocitest.WriteBad(out, bad)
			return
		}
		ts.Fatalf("mkimage: unknown kind %q", args[0])
	}
}
