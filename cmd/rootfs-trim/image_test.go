package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// imageInputs writes the kicbase-like image in each kind apply reads.
func imageInputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	steps := ocitest.Kicbase("../../testdata/packages")
	img := ocitest.Image(steps, "linux/amd64")
	in := map[string]string{"layout": filepath.Join(dir, "kic"), "docker-archive": filepath.Join(dir, "kic.tar"), "docker25": filepath.Join(dir, "kic25.tar")}
	ocitest.WriteLayout(in["layout"], img, "kicbase")
	ocitest.WriteDockerArchive(in["docker-archive"], img, "kicbase:test")
	ocitest.WriteDocker25(in["docker25"], img, "kicbase:test")
	// zstd layers: the new layer is zstd too, and go-containerregistry
	// reads it.
	in["zstd"] = filepath.Join(dir, "kicz")
	ocitest.WriteLayout(in["zstd"], ocitest.ZstdImage(steps, "linux/amd64"), "kicbase")
	// A layer twice, by digest, as an image's empty layers are: one blob.
	in["repeated"] = filepath.Join(dir, "kicr")
	ocitest.WriteLayout(in["repeated"], ocitest.Image(append(steps, steps[len(steps)-1]), "linux/amd64"), "kicbase")
	return in
}

// readImage reads an image with go-containerregistry: a layout's one
// image, or a tarball's (its manifest.json).
func readImage(t *testing.T, path string) v1.Image {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() {
		img, err := tarball.ImageFromPath(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	idx, err := layout.ImageIndexFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// flat is the filesystem go-containerregistry's mutate.Extract makes of an
// image: name -> type, mode and content.
func flat(t *testing.T, img v1.Image) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range ocitest.Flatten(img) {
		out[f.Name] = string(f.Type) + " " + string(rune('0'+f.Mode&7)) + " " + f.Linkname + " " + f.Data
	}
	return out
}

func layerDigests(t *testing.T, img v1.Image) []string {
	t.Helper()
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.String())
	}
	return out
}

func rawConfig(t *testing.T, img v1.Image) map[string]json.RawMessage {
	t.Helper()
	b, err := img.RawConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestImageApply: apply on each kind of image, into each kind, keeps the
// input's layers byte for byte and adds one layer, or with --squash writes
// one; go-containerregistry reads the output, its flattened filesystem is
// the input's with what the rules strip and move gone and what apply adds
// there; the config keeps every field but rootfs, history and created;
// a second run gives the same bytes; audit finds the output clean.
func TestImageApply(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	inputs := imageInputs(t, dir)
	for _, inKind := range []string{"layout", "docker-archive", "docker25", "zstd", "repeated"} {
		in := readImage(t, inputs[inKind])
		inFlat := flat(t, in)
		for _, tc := range []struct {
			name   string
			format string
			squash bool
		}{{"as-input", "", false}, {"oci", "oci", false}, {"docker-archive", "docker-archive", false}, {"squash", "", true}} {
			t.Run(inKind+"/"+tc.name, func(t *testing.T) {
				var outs []string
				for run := range 2 {
					out := filepath.Join(t.TempDir(), "out")
					args := []string{"apply", "--rules", "../../rules", "--quiet"}
					if tc.format != "" {
						args = append(args, "--archive-format", tc.format)
					}
					if tc.squash {
						args = append(args, "--squash")
					}
					cmd := exec.Command(bin, append(args, inputs[inKind], out)...)
					cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000")
					if r := runBinary(t, cmd); r.code != 0 {
						t.Fatalf("run %d: exit %d: %s", run, r.code, r.stderr)
					}
					outs = append(outs, out)
				}
				if d := cmp.Diff(treeBytes(t, outs[0]), treeBytes(t, outs[1])); d != "" {
					t.Errorf("two runs differ (-first +second):\n%s", d)
				}
				got := readImage(t, outs[0])
				checkLayers(t, in, got, tc.squash, inKind == "docker25" && tc.format == "oci")
				checkConfig(t, in, got)
				checkFlat(t, inFlat, flat(t, got), tc.squash)
				if inKind == "zstd" && tc.format != "docker-archive" {
					// go-containerregistry's tarball reader makes up a
					// manifest of its own: a layout's is rootfs-trim's.
					ls, err := got.Layers()
					if err != nil {
						t.Fatal(err)
					}
					if mt, err := ls[len(ls)-1].MediaType(); err != nil || mt != types.OCILayerZStd {
						t.Errorf("the new layer: %s %v, want %s", mt, err, types.OCILayerZStd)
					}
				}
				if r := runBinary(t, exec.Command(bin, "audit", "--rules", "../../rules", outs[0])); r.code != 0 || !strings.HasPrefix(r.stdout, "owners: from the dpkg database") || !strings.Contains(r.stdout, "clean: nothing offends") {
					t.Errorf("audit of the output: exit %d\n%s%s", r.code, r.stdout, r.stderr)
				}
			})
		}
	}
}

// checkLayers: the output's first layers are the input's, by digest and
// diff_id. A Docker 25 tarball's layers are uncompressed: their blobs'
// digests are their diff_ids (go-containerregistry reports the digest of
// its own compression for a tarball's uncompressed layer).
func checkLayers(t *testing.T, in, out v1.Image, squash, raw bool) {
	t.Helper()
	a, b := layerDigests(t, in), layerDigests(t, out)
	if raw {
		a = diffIDs(t, in)
	}
	if d := diffIDs(t, out); !squash && !slices.Equal(diffIDs(t, in), d[:min(len(d), len(a))]) {
		t.Errorf("diff_ids: %q, want the input's first", d)
	}
	if squash {
		if len(b) != 1 {
			t.Errorf("squashed: %d layers", len(b))
		}
		return
	}
	if len(b) != len(a)+1 || !slices.Equal(a, b[:len(a)]) {
		t.Errorf("layers:\n in  %q\n out %q\nwant the input's and one more", a, b)
	}
}

func diffIDs(t *testing.T, img v1.Image) []string {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range cf.RootFS.DiffIDs {
		out = append(out, d.String())
	}
	return out
}

func checkConfig(t *testing.T, in, out v1.Image) {
	t.Helper()
	a, b := rawConfig(t, in), rawConfig(t, out)
	for _, k := range []string{"rootfs", "history", "created"} {
		delete(a, k)
		delete(b, k)
	}
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("config fields besides rootfs, history and created (-in +out):\n%s", d)
	}
	cf, err := out.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	inCf, _ := in.ConfigFile()
	h := cf.History
	if len(h) != len(inCf.History)+1 || !strings.HasPrefix(h[len(h)-1].CreatedBy, "rootfs-trim apply --rules ../../rules (rootfs-trim ") {
		t.Errorf("history: %+v", h)
	}
	if cf.Created.Unix() != 1700000000 || h[len(h)-1].Created.Unix() != 1700000000 {
		t.Errorf("created %v, history's %v: want SOURCE_DATE_EPOCH", cf.Created, h[len(h)-1].Created)
	}
	nonEmpty := 0
	for _, e := range h {
		if !e.EmptyLayer {
			nonEmpty++
		}
	}
	if want := len(cf.RootFS.DiffIDs); nonEmpty != want {
		t.Errorf("%d history entries with a layer, %d layers", nonEmpty, want)
	}
}

// checkFlat compares the flattened filesystems: what the rules take out
// of /etc is gone, what apply moves and adds is there, the rest as it was.
func checkFlat(t *testing.T, in, out map[string]string, squash bool) {
	t.Helper()
	gone := []string{"etc/crictl.yaml", "etc/cni/net.d/87-podman-bridge.conflist", "etc/cni/net.d/10-crio-bridge.conflist.disabled"}
	added := []string{"etc/containers/net.d/87-podman-bridge.conflist", "etc/containers/containers.conf",
		"usr/share/minikube/deferred/crio+none/etc/cni/net.d/10-crio-bridge.conflist.disabled", "usr/share/minikube/rootfs-trim/index.json"}
	for _, p := range gone {
		if _, ok := out[p]; ok {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range added {
		if _, ok := out[p]; !ok {
			t.Errorf("%s is missing", p)
		}
	}
	if out["etc/containers/net.d/87-podman-bridge.conflist"] != in["etc/cni/net.d/87-podman-bridge.conflist"] {
		t.Errorf("the relocated conflist changed")
	}
	for p, v := range in {
		if slices.Contains(gone, p) || squash && p == "usr/bin/perl5.36.0" {
			continue
		}
		if out[p] != v {
			t.Errorf("%s: %q, was %q", p, out[p], v)
		}
	}
	// go-containerregistry keeps the hard link whose first name a later
	// layer removed, pointing at nothing; the merged view rootfs-trim
	// squashes makes it the file.
	if got := out["usr/bin/perl5.36.0"]; squash && got != "0 5  #!perl\n" {
		t.Errorf("usr/bin/perl5.36.0: %q, want the file", got)
	}
}

// treeBytes is every file under root (or root itself) with its bytes.
func treeBytes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(bytes.Clone(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
