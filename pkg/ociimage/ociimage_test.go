package ociimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

const packages = "../../testdata/packages"

// merged lists an image's merged view: name, type, mode and data.
func merged(t *testing.T, path string, opt Options) []string {
	t.Helper()
	img, err := Open(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	r := img.Reader()
	defer r.Close()
	var out []string
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if opt.Keep != nil && r.again != nil {
			t.Errorf("%s: its layer read again, though the pass kept every file's data", e.Name)
		}
		name := strings.TrimSuffix(e.Name, "/")
		if e.Type == archive.TypeHardlink {
			b = []byte("-> " + e.Linkname)
		}
		out = append(out, fmt.Sprintf("%s %s %o %q", name, e.Type, e.Mode, b))
	}
	return out
}

// extracted is go-containerregistry's flattening (mutate.Extract) of the
// same image, in the same form: the oracle the merged view is held to.
func extracted(t *testing.T, steps []ocitest.Step) []string {
	t.Helper()
	var out []string
	for _, f := range ocitest.Flatten(ocitest.Image(steps, "linux/amd64")) {
		typ := map[byte]archive.Type{tar.TypeReg: archive.TypeRegular, tar.TypeDir: archive.TypeDir, tar.TypeSymlink: archive.TypeSymlink, tar.TypeLink: archive.TypeHardlink}[f.Type]
		b := f.Data
		if typ == archive.TypeHardlink {
			b = "-> " + f.Linkname
		}
		out = append(out, fmt.Sprintf("%s %s %o %q", f.Name, typ, f.Mode, b))
	}
	return out
}

// TestMergedView: the kicbase-like image's merged view, in each kind of
// input, its data kept by the pass or read again from the layers, is what
// go-containerregistry flattens it to, whiteouts and the
// opaque directory applied; only the hard link whose first name a later
// layer removes differs: go-containerregistry keeps the link to nothing,
// the merged view gives it the data.
func TestMergedView(t *testing.T) {
	steps := ocitest.Kicbase(packages)
	want := extracted(t, steps)
	i := slices.Index(want, `usr/bin/perl5.36.0 hardlink 644 "-> usr/bin/perl"`)
	if i < 0 {
		t.Fatalf("go-containerregistry's flattening changed: %q", want)
	}
	want[i] = `usr/bin/perl5.36.0 file 755 "#!perl\n"`
	slices.Sort(want)
	for _, gone := range []string{"etc/motd", "tmp/junk", "var/cache/apt/pkgcache.bin", "usr/bin/perl"} {
		if slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, gone+" ") }) {
			t.Fatalf("the oracle has %s", gone)
		}
	}
	dir := t.TempDir()
	img := ocitest.Image(steps, "linux/amd64")
	paths := map[string]string{"layout": filepath.Join(dir, "layout"), "docker-archive": filepath.Join(dir, "d.tar"), "docker25": filepath.Join(dir, "d25.tar"), "multi": filepath.Join(dir, "multi")}
	ocitest.WriteLayout(paths["layout"], img, "kicbase")
	ocitest.WriteDockerArchive(paths["docker-archive"], img, "kicbase:test")
	ocitest.WriteDocker25(paths["docker25"], img, "kicbase:test")
	ocitest.WriteMulti(paths["multi"], steps, "kicbase", "linux/amd64", "linux/arm64/v8")
	// The data the pass keeps is the data a layer read again gives.
	paths["layout, data kept"] = filepath.Join(dir, "kept")
	ocitest.WriteLayout(paths["layout, data kept"], img, "kicbase")
	for kind, p := range paths {
		t.Run(kind, func(t *testing.T) {
			opt := Options{}
			if kind == "multi" {
				opt.Platform = "linux/amd64"
			}
			if strings.HasSuffix(kind, "kept") {
				opt.Keep = func(string) bool { return true }
			}
			got := merged(t, p, opt)
			slices.Sort(got)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("merged view (-go-containerregistry +rootfs-trim):\n%s", d)
			}
		})
	}
}

// TestPlatforms: a multi-platform layout needs --platform, and the error
// lists what it holds.
func TestPlatforms(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "multi")
	ocitest.WriteMulti(dir, ocitest.Kicbase(packages), "kicbase", "linux/amd64", "linux/arm64/v8")
	for _, tc := range []struct{ platform, want string }{
		{"", "it holds 2 images (linux/amd64, linux/arm64/v8): choose one with --platform, or by name as DIR:TAG"},
		{"linux/s390x", "no image for platform linux/s390x; it holds linux/amd64, linux/arm64/v8"},
		{"linux/arm64/v7", "no image for platform linux/arm64/v7; it holds linux/amd64, linux/arm64/v8"},
		{"linux/arm64", ""},
		{"linux/arm64/v8", ""},
	} {
		img, err := Open(dir, Options{Platform: tc.platform})
		got := ""
		if err != nil {
			got = strings.TrimPrefix(err.Error(), dir+": ")
		} else {
			if img.Platform != "linux/arm64/v8" {
				t.Errorf("%q: opened %s", tc.platform, img.Platform)
			}
			img.Close()
		}
		if got != tc.want {
			t.Errorf("--platform %q: %q, want %q", tc.platform, got, tc.want)
		}
	}
}

// TestWhiteoutsInTheirLayer: a whiteout hides only the layers below, even
// when it comes after its layer's own entry of that name; an opaque
// directory keeps what its own layer puts in it.
func TestWhiteoutsInTheirLayer(t *testing.T) {
	steps := []ocitest.Step{
		{CreatedBy: "base", Entries: []ocitest.Entry{{Name: "d/", Type: tar.TypeDir}, {Name: "d/a", Data: "old"}, {Name: "d/b", Data: "old"}, {Name: "f", Data: "old"}}},
		{CreatedBy: "two", Entries: []ocitest.Entry{{Name: "f", Data: "new"}, {Name: ".wh.f"}, {Name: "d/", Type: tar.TypeDir}, {Name: "d/c", Data: "new"}, {Name: "d/.wh..wh..opq"}}},
	}
	dir := filepath.Join(t.TempDir(), "img")
	ocitest.WriteLayout(dir, ocitest.Image(steps, "linux/amd64"), "x")
	got := merged(t, dir, Options{})
	want := []string{`d dir 755 ""`, `f file 644 "new"`, `d/c file 644 "new"`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
}

// TestLinksToAGoneFile: of the hard links to a file a later layer
// removes, the first yields the data under its own name and the others
// link to it (plan: the gone entry's first link owns its data).
func TestLinksToAGoneFile(t *testing.T) {
	steps := []ocitest.Step{
		{CreatedBy: "base", Entries: []ocitest.Entry{{Name: "a", Data: "data"}, {Name: "l1", Type: tar.TypeLink, Linkname: "a"},
			{Name: "l2", Type: tar.TypeLink, Linkname: "a"}, {Name: "l3", Type: tar.TypeLink, Linkname: "l1"}}},
		{CreatedBy: "two", Entries: []ocitest.Entry{{Name: ".wh.a"}}},
	}
	dir := filepath.Join(t.TempDir(), "img")
	ocitest.WriteLayout(dir, ocitest.Image(steps, "linux/amd64"), "x")
	got := merged(t, dir, Options{})
	want := []string{`l1 file 644 "data"`, `l2 hardlink 644 "-> l1"`, `l3 hardlink 644 "-> l1"`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
}

// TestBadInput: each hostile image fails to open, naming the layer.
func TestBadInput(t *testing.T) {
	want := map[string]string{
		"digest":              `^layer 1 \(sha256:[0-9a-f]{64}\): digest mismatch: the blob's sha256 is sha256:[0-9a-f]{64}$`,
		"diff-id":             `^layer 1 \(sha256:[0-9a-f]{64}\): diff_id mismatch: the config says sha256:0{63}1, the uncompressed layer's sha256 is sha256:[0-9a-f]{64}$`,
		"whiteout-above-root": `^layer 1 \(sha256:[0-9a-f]{64}\): entry "\.wh\.\.\.": a whiteout of "\.\.": above the root$`,
		"hardlink-whitened":   `^layer 1 \(sha256:[0-9a-f]{64}\): entry "etc/motd2": a hard link to "etc/motd", which the whiteout in layer 1 removed$`,
		"not-tar":             `^layer 1 \(sha256:[0-9a-f]{64}\): not a tar: unknown archive format: starts with "this is "$`,
		"missing-blob":        `^manifest sha256:[0-9a-f]{64}: layer 1: blob sha256:[0-9a-f]{64} is missing$`,
	}
	for _, kind := range ocitest.BadKinds {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bad")
			ocitest.WriteBad(dir, kind)
			_, err := Open(dir, Options{})
			if err == nil {
				t.Fatal("opened")
			}
			msg := strings.TrimPrefix(err.Error(), dir+": ")
			if !regexpMatch(want[kind], msg) {
				t.Errorf("error %q, want %s", msg, want[kind])
			}
		})
	}
}

// TestChangedBetweenPasses: a layer blob replaced after Open (the one
// pass over the layers) fails where the Reader reads its data again.
func TestChangedBetweenPasses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "img")
	ocitest.WriteBad(dir, "none")
	img, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	good := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(img.Layers[1].Digest, "sha256:"))
	var buf bytes.Buffer
	buf.Write(ocitest.Tar([]ocitest.Entry{{Name: "etc/issue", Data: "evil"}}))
	if err := os.WriteFile(good, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := img.Reader()
	defer r.Close()
	for {
		_, err := r.Next()
		if err == nil {
			_, err = io.ReadAll(r)
		}
		if err == io.EOF {
			t.Fatal("read to the end")
		}
		if err != nil {
			if !strings.Contains(err.Error(), "layer 1 (") || !strings.Contains(err.Error(), "digest mismatch") {
				t.Errorf("error %q", err)
			}
			return
		}
	}
}

// TestEntryBeneathALowerSymlink: a layer's entry beneath a name a lower
// layer made a symlink is refused, naming both: extractors disagree on
// whether it goes through the link.
func TestEntryBeneathALowerSymlink(t *testing.T) {
	steps := []ocitest.Step{
		{CreatedBy: "base", Entries: []ocitest.Entry{{Name: "etc/", Type: tar.TypeDir}, {Name: "x", Type: tar.TypeSymlink, Linkname: "etc/cni/net.d"}}},
		{CreatedBy: "two", Entries: []ocitest.Entry{{Name: "x/00-evil.conflist", Data: "{}"}}},
	}
	dir := filepath.Join(t.TempDir(), "img")
	ocitest.WriteLayout(dir, ocitest.Image(steps, "linux/amd64"), "x")
	_, err := Open(dir, Options{})
	want := `layer 1 \(sha256:[0-9a-f]{64}\): entry "x/00-evil.conflist": x above it is a symlink in the layers so far, not a directory$`
	if err == nil || !regexpMatch(want, err.Error()) {
		t.Errorf("error %v, want %s", err, want)
	}
}
