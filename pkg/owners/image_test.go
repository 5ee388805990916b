package owners

import (
	"archive/tar"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// TestLoadDpkgImage: an image's owners and versions are read from its
// merged view as from the tree a container of it gets, which
// go-containerregistry's mutate.Extract makes (the oracle), whether the
// image is a layout or a docker save tarball: dpkg's lists and status, the
// ListsDir lists and versions a later layer adds (the last writer), one a
// whiteout or an opaque directory hides, dpkg's status rewritten by a
// later layer, an image with no dpkg at all.
func TestLoadDpkgImage(t *testing.T) {
	dir := func(name string) ocitest.Entry { return ocitest.Entry{Name: name + "/", Type: tar.TypeDir} }
	file := func(name, data string) ocitest.Entry { return ocitest.Entry{Name: name, Data: data} }
	owners := ListsDir + "/"
	dpkgBase := []ocitest.Entry{
		dir("usr"), dir("usr/local"), dir("usr/local/share"), dir("usr/local/share/rootfs-trim"), dir(ListsDir),
		file(owners+"nerdctl.list", "/usr/local/bin/nerdctl\n"),
		file(owners+"nerdctl.version", "2.3.5\n"),
		file(owners+"crictl.list", "/usr/local/bin/crictl\n"),
		file(owners+"crictl.version", "v1.35.0\n"),
		dir("var"), dir("var/lib"), dir("var/lib/dpkg"), dir(DpkgInfoDir),
		file(DpkgInfoDir+"/containerd.io.list", "/.\n/usr/bin/runc\n/usr/bin/containerd\n"),
		file(DpkgStatus, "Package: containerd.io\nStatus: install ok installed\nVersion: 2.3.4-1\n"),
	}
	cases := []struct {
		name  string
		steps [][]ocitest.Entry
		// versions are the tree's, and so the image's: a .version over
		// dpkg's status, as it is read after it.
		versions map[string]string
	}{
		{"a later layer's list, a whiteout, a status rewritten", [][]ocitest.Entry{dpkgBase, {
			dir("usr"), dir("usr/local"), dir("usr/local/share"), dir("usr/local/share/rootfs-trim"), dir(ListsDir),
			file(owners+"buildkit.list", "/usr/local/bin/buildkitd\n/usr/bin/runc\n"),
			file(owners+"buildkit.version", "v0.32.2\n"),
			{Name: owners + ".wh.nerdctl.list"},
			dir("var"), dir("var/lib"), dir("var/lib/dpkg"),
			file(DpkgStatus, "Package: containerd.io\nStatus: install ok installed\nVersion: 2.3.5-1\n\n"+
				"Package: crictl\nStatus: install ok installed\nVersion: 1.0-1\n"),
		}}, map[string]string{"containerd.io": "2.3.5-1", "crictl": "v1.35.0", "buildkit": "v0.32.2", "nerdctl": "2.3.5"}},
		{"an opaque owners directory", [][]ocitest.Entry{dpkgBase, {
			dir("usr"), dir("usr/local"), dir("usr/local/share"), dir("usr/local/share/rootfs-trim"), dir(ListsDir),
			{Name: owners + ".wh..wh..opq"},
			file(owners+"cri-containerd-cni.list", "/etc/cni/net.d/10-containerd-net.conflist\n/usr/bin/runc\n"),
		}}, map[string]string{"containerd.io": "2.3.4-1"}},
		{"no dpkg, an owners list in a later layer", [][]ocitest.Entry{{dir("etc"), file("etc/os-release", "ID=debian\n")}, {
			dir("usr"), dir("usr/local"), dir("usr/local/share"), dir("usr/local/share/rootfs-trim"), dir(ListsDir),
			file(owners+"crictl.list", "/usr/local/bin/crictl\n/etc/crictl.yaml\n"),
			file(owners+"crictl.version", "v1.35.0\n"),
		}}, map[string]string{"crictl": "v1.35.0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var steps []ocitest.Step
			for _, es := range tc.steps {
				steps = append(steps, ocitest.Step{CreatedBy: "RUN step", Entries: es})
			}
			img := ocitest.Image(steps, "linux/amd64")
			d := t.TempDir()
			tree, layout, archive := filepath.Join(d, "tree"), filepath.Join(d, "layout"), filepath.Join(d, "img.tar")
			writeFlat(t, tree, ocitest.Flatten(img))
			ocitest.WriteLayout(layout, img, "test")
			ocitest.WriteDockerArchive(archive, img, "test:test")
			want := ownershipOf(t, tree)
			if diff := cmp.Diff(tc.versions, want.Versions); diff != "" {
				t.Fatalf("the tree's versions (-want +got):\n%s", diff)
			}
			for _, p := range []string{layout, archive} {
				if diff := cmp.Diff(want, ownershipOf(t, p)); diff != "" {
					t.Errorf("%s (-tree +image):\n%s", filepath.Base(p), diff)
				}
			}
		})
	}
}

// ownership is what Load found, in a form cmp compares.
type ownership struct {
	Owners                      map[string][]string
	Packages                    []string
	Versions                    map[string]string
	Dpkg, Local, Index, Ignored int
	Found                       bool
}

func ownershipOf(t *testing.T, input string) ownership {
	t.Helper()
	db, err := Load(input, container.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if db == nil {
		return ownership{}
	}
	o := ownership{Owners: db.Owners.byPath, Versions: db.Versions, Packages: db.Owners.Packages(),
		Dpkg: len(db.Packages), Local: len(db.Local), Index: db.Index, Ignored: db.Ignored, Found: true}
	slices.Sort(o.Packages)
	return o
}

// writeFlat writes a flattened image as the tree a container gets.
func writeFlat(t *testing.T, root string, flat []ocitest.Flat) {
	t.Helper()
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range flat {
		p := filepath.Join(root, filepath.FromSlash(f.Name))
		var err error
		switch f.Type {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			err = os.WriteFile(p, []byte(f.Data), 0o644)
		default:
			t.Fatalf("%s: type %c: not in these fixtures", f.Name, f.Type)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
