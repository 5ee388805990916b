package ociimage

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// The tests of issue 37's images: where skopeo, podman load or
// containerd's importer could read another image than rootfs-trim judges,
// the input is refused; where they read one image, rootfs-trim reads that
// one. skopeo is the oracle where it is installed.

// tarMember is one member of a tarball being rewritten.
type tarMember struct {
	hdr  tar.Header
	data []byte
}

// readMembers reads every member of the tarball at name.
func readMembers(t testing.TB, name string) []tarMember {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var out []tarMember
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarMember{*h, b})
	}
}

// writeMembers writes members as the tarball name.
func writeMembers(t testing.TB, name string, members []tarMember) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		h := m.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(m.data))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func file(name string, data []byte) tarMember {
	return tarMember{tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, ModTime: ocitest.MTime}, data}
}

func memberData(t *testing.T, ms []tarMember, name string) []byte {
	t.Helper()
	for _, m := range ms {
		if m.hdr.Name == name {
			return m.data
		}
	}
	t.Fatalf("no member %s", name)
	return nil
}

// twoImages are two images of one layer each, the second with a CNI
// config the first does not have.
func twoImages() (clean, evil []ocitest.Step) {
	clean = []ocitest.Step{{CreatedBy: "clean", Entries: []ocitest.Entry{{Name: "etc/", Type: tar.TypeDir}, {Name: "etc/os-release", Data: "clean\n"}}}}
	evil = []ocitest.Step{{CreatedBy: "evil", Entries: []ocitest.Entry{{Name: "etc/", Type: tar.TypeDir}, {Name: "etc/cni/", Type: tar.TypeDir},
		{Name: "etc/cni/net.d/", Type: tar.TypeDir}, {Name: "etc/cni/net.d/00-evil.conflist", Data: "{}"}}}}
	return clean, evil
}

// skopeoLayers is what skopeo inspect says of ref: its layers' digests
// and its config's (from inspect --config).
func skopeoLayers(t *testing.T, ref string) (layers []string, ok bool) {
	t.Helper()
	if _, err := exec.LookPath("skopeo"); err != nil {
		if os.Getenv(archivetest.RequireToolsEnv) == "1" {
			t.Fatalf("skopeo is not installed, and %s=1 forbids skipping", archivetest.RequireToolsEnv)
		}
		t.Logf("skopeo is not installed: not held to it")
		return nil, false
	}
	out, err := exec.Command("skopeo", "inspect", ref).CombinedOutput()
	if err != nil {
		t.Fatalf("skopeo inspect %s: %v\n%s", ref, err, out)
	}
	var i struct{ Layers []string }
	if err := json.Unmarshal(out, &i); err != nil {
		t.Fatal(err)
	}
	return i.Layers, true
}

// skopeoConfig is the digest of the config skopeo reads of ref, as it is
// stored (inspect --config --raw).
func skopeoConfig(t *testing.T, ref string) string {
	t.Helper()
	cfg, err := exec.Command("skopeo", "inspect", "--config", "--raw", ref).Output()
	if err != nil {
		t.Fatalf("skopeo inspect --config %s: %v", ref, err)
	}
	return "sha256:" + digest.Bytes(cfg)
}

// diffIDs are the image's layers as skopeo's docker-archive names them:
// by the uncompressed tar's digest.
func diffIDs(img *Image) []string {
	var out []string
	for _, l := range img.Layers {
		out = append(out, l.DiffID)
	}
	return out
}

func wantRefused(t *testing.T, name, want string) {
	t.Helper()
	img, err := Open(name, Options{})
	if err == nil {
		img.Close()
		t.Fatalf("opened, as layers %q; want refused: %s", diffIDs(img), want)
	}
	if !regexpMatch(want, err.Error()) {
		t.Errorf("error %q, want %s", err, want)
	}
}

// TestMemberTwice: a docker save tarball holding a member twice is
// refused. skopeo reads the first manifest.json (findTarComponent),
// containerd the last; rootfs-trim took the last, so a hostile image's
// tarball with a clean image's members and manifest.json appended was
// judged clean while skopeo loads the hostile one.
func TestMemberTwice(t *testing.T) {
	dir := t.TempDir()
	clean, evil := twoImages()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	ocitest.WriteDocker25(a, ocitest.Image(evil, "linux/amd64"), "kic:evil")
	ocitest.WriteDockerArchive(b, ocitest.Image(clean, "linux/amd64"), "kic:clean")
	evilMembers, cleanMembers := readMembers(t, a), readMembers(t, b)
	evilOnly := filepath.Join(dir, "evil-only.tar")
	writeMembers(t, evilOnly, evilMembers)
	// The evil Docker 25 tarball, then the clean image's members, its
	// manifest.json last.
	hostile := filepath.Join(dir, "hostile.tar")
	writeMembers(t, hostile, append(append([]tarMember{}, evilMembers...), cleanMembers...))
	if layers, ok := skopeoLayers(t, "docker-archive:"+hostile); ok {
		want, _ := skopeoLayers(t, "docker-archive:"+evilOnly)
		if d := cmp.Diff(want, layers); d != "" {
			t.Fatalf("skopeo no longer takes the first manifest.json (-first +got):\n%s", d)
		}
	}
	wantRefused(t, hostile, `"manifest\.json" is in the tarball twice`)

	for _, tc := range []struct{ name, again string }{
		{"index.json", "./index.json"},
		{"oci-layout", "oci-layout"},
		{"a layer", ""},
		{"the config", "config"},
		{"a hard link", "link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := append([]tarMember{}, evilMembers...)
			var extra tarMember
			var man []struct {
				Config string
				Layers []string
			}
			if err := json.Unmarshal(memberData(t, ms, "manifest.json"), &man); err != nil {
				t.Fatal(err)
			}
			switch tc.again {
			case "":
				extra = file(man[0].Layers[0], ocitest.Tar([]ocitest.Entry{{Name: "etc/os-release", Data: "other\n"}}))
			case "config":
				extra = file(man[0].Config, []byte(`{}`))
			case "link":
				extra = tarMember{tar.Header{Name: "manifest.json", Typeflag: tar.TypeLink, Linkname: "index.json", ModTime: ocitest.MTime}, nil}
			default:
				extra = file(tc.again, []byte(`{}`))
			}
			// First, so that the image's own member is the second.
			name := filepath.Join(t.TempDir(), "twice.tar")
			writeMembers(t, name, append([]tarMember{extra}, ms...))
			wantRefused(t, name, `" is in the tarball twice: skopeo reads the first, containerd the last$`)
		})
	}
}

// TestSharedLayerLink: docker save writes a layer an image holds twice
// once, and the second <id>/layer.tar as a symlink to the first; skopeo
// follows it, one level (openTarComponentWithHeader), and so does
// rootfs-trim. It was refused as missing. A link to a link, or out of the
// tarball, is not followed.
func TestSharedLayerLink(t *testing.T) {
	dir := t.TempDir()
	same := ocitest.Step{CreatedBy: "same", Entries: []ocitest.Entry{{Name: "etc/", Type: tar.TypeDir}, {Name: "etc/os-release", Data: "same\n"}}}
	a := filepath.Join(dir, "a.tar")
	ocitest.WriteDockerArchive(a, ocitest.DockerImage([]ocitest.Step{same, same}, "linux/amd64"), "kic:same")
	ms := readMembers(t, a)
	var man []map[string]any
	if err := json.Unmarshal(memberData(t, ms, "manifest.json"), &man); err != nil {
		t.Fatal(err)
	}
	layers := man[0]["Layers"].([]any)
	if layers[0] != layers[1] {
		t.Fatalf("go-containerregistry wrote the shared layer twice: %q", layers)
	}
	id1, id2 := fmt.Sprintf("%064x", 1), fmt.Sprintf("%064x", 2)
	build := func(link string) string {
		var out []tarMember
		for _, m := range ms {
			switch m.hdr.Name {
			case layers[0]:
				m.hdr.Name = id1 + "/layer.tar"
			case "manifest.json":
				continue
			}
			out = append(out, m)
		}
		man[0]["Layers"] = []string{id1 + "/layer.tar", id2 + "/layer.tar"}
		b, err := json.Marshal(man)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarMember{tar.Header{Name: id2 + "/layer.tar", Typeflag: tar.TypeSymlink, Linkname: link, ModTime: ocitest.MTime}, nil}, file("manifest.json", b))
		name := filepath.Join(t.TempDir(), "shared.tar")
		writeMembers(t, name, out)
		return name
	}
	name := build("../" + id1 + "/layer.tar")
	img, err := Open(name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if err := drain(img); err != nil {
		t.Fatal(err)
	}
	if got, ok := skopeoLayers(t, "docker-archive:"+name); ok {
		if d := cmp.Diff(got, diffIDs(img)); d != "" {
			t.Errorf("layers (-skopeo +rootfs-trim):\n%s", d)
		}
		if got := skopeoConfig(t, "docker-archive:"+name); got != img.ID() {
			t.Errorf("skopeo's config %s, rootfs-trim's %s", got, img.ID())
		}
		// What skopeo copies out of it (converting the config to OCI's) is
		// the image rootfs-trim reads: the same layers.
		copied := filepath.Join(t.TempDir(), "copied")
		if out, err := exec.Command("skopeo", "copy", "--quiet", "docker-archive:"+name, "oci:"+copied+":x").CombinedOutput(); err != nil {
			t.Fatalf("skopeo copy: %v\n%s", err, out)
		}
		c, err := Open(copied, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if d := cmp.Diff(diffIDs(c), diffIDs(img)); d != "" {
			t.Errorf("layers (-skopeo copy +rootfs-trim):\n%s", d)
		}
	}
	wantRefused(t, build("../"+id2+"/layer.tar"), `blob `+id2+`/layer\.tar is missing`)
	wantRefused(t, build("../../"+id1+"/layer.tar"), `blob `+id2+`/layer\.tar is missing`)
}
