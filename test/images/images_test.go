// Package images proves that the images apply writes are images to the
// tools that read them: skopeo (inspect, copy) on layouts and tarballs,
// umoci (unpack, by the layout's ref name) and podman (load, create,
// export, with the vfs driver and a private storage root, no network).
// The input is ocitest's kicbase-like image of four layers, written by
// go-containerregistry.
package images

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

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "images-test-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "rootfs-trim")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/rootfs-trim")
	cmd.Dir, cmd.Env = "../..", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.Bytes(), errb.Bytes())
	}
	return out.String()
}

// applied writes the kicbase-like image as a layout and applies the
// shipped rules to it, into a layout and a docker-archive tarball.
func applied(t *testing.T) (in, layout, tarball string) {
	t.Helper()
	dir := t.TempDir()
	in = filepath.Join(dir, "kic")
	ocitest.WriteLayout(in, ocitest.Image(ocitest.Kicbase("../../testdata/packages"), "linux/amd64"), "kicbase")
	layout, tarball = filepath.Join(dir, "out"), filepath.Join(dir, "out.tar")
	run(t, bin, "apply", "--rules", "../../rules", "--quiet", in, layout)
	run(t, bin, "apply", "--rules", "../../rules", "--quiet", "--archive-format", "docker-archive", in, tarball)
	return in, layout, tarball
}

// gone and there are what apply changes in the kicbase-like image.
var (
	gone  = []string{"etc/crictl.yaml", "etc/cni/net.d/87-podman-bridge.conflist", "etc/cni/net.d/10-crio-bridge.conflist.disabled", "etc/motd", "tmp/junk"}
	there = []string{"etc/containers/net.d/87-podman-bridge.conflist", "etc/containers/containers.conf", "etc/os-release", "etc/kic-release",
		"usr/share/minikube/rootfs-trim/index.json", "usr/bin/perl5.36.0", "etc/cni/net.d"}
)

// merged is rootfs-trim's list of an image: the names of its merged view.
func merged(t *testing.T, image string) []string {
	t.Helper()
	var names []string
	for _, l := range strings.Split(run(t, bin, "list", image), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		names = append(names, strings.TrimSuffix(f[5], "/"))
	}
	slices.Sort(names)
	return names
}

func checkNames(t *testing.T, what string, names []string) {
	t.Helper()
	for _, p := range gone {
		if slices.Contains(names, p) {
			t.Errorf("%s: %s is still there", what, p)
		}
	}
	for _, p := range there {
		if !slices.Contains(names, p) {
			t.Errorf("%s: %s is missing", what, p)
		}
	}
}

type inspected struct {
	Digest       string
	Layers       []string
	Architecture string
	Os           string
	Env          []string
}

func inspect(t *testing.T, ref string) inspected {
	t.Helper()
	var i inspected
	if err := json.Unmarshal([]byte(run(t, "skopeo", "inspect", ref)), &i); err != nil {
		t.Fatal(err)
	}
	return i
}

// TestSkopeo: skopeo inspects the layout (by its ref name) and the
// tarball, sees the input's layers and one more, and copies both; what it
// copies reads back as the same filesystem.
func TestSkopeo(t *testing.T) {
	archivetest.RequireTool(t, "skopeo")
	in, layout, tarball := applied(t)
	before := inspect(t, "oci:"+in+":kicbase")
	for _, ref := range []string{"oci:" + layout + ":kicbase", "docker-archive:" + tarball} {
		got := inspect(t, ref)
		if len(got.Layers) != len(before.Layers)+1 || got.Os != "linux" || got.Architecture != "amd64" || !slices.Contains(got.Env, "container=docker") {
			t.Errorf("skopeo inspect %s: %+v, input %+v", ref, got, before)
		}
		if strings.HasPrefix(ref, "oci:") && !slices.Equal(got.Layers[:len(before.Layers)], before.Layers) {
			t.Errorf("%s: layers %q, want the input's %q first", ref, got.Layers, before.Layers)
		}
	}
	dir := t.TempDir()
	want := merged(t, layout)
	checkNames(t, "layout", want)
	skopeoCopies(t, dir, want, "oci:"+layout+":kicbase", "docker-archive:"+tarball)
	tarCopy := filepath.Join(dir, "copy.tar")
	run(t, "skopeo", "copy", "--quiet", "oci:"+layout+":kicbase", "docker-archive:"+tarCopy+":kicbase:trimmed")
	if got := merged(t, tarCopy); !slices.Equal(got, want) {
		t.Errorf("skopeo copy to docker-archive: merged view differs")
	}
}

// skopeoCopies copies each ref with skopeo into a layout in dir and checks
// that its merged view is want.
func skopeoCopies(t *testing.T, dir string, want []string, refs ...string) {
	t.Helper()
	for i, ref := range refs {
		copied := filepath.Join(dir, "copy"+string(rune('0'+i)))
		run(t, "skopeo", "copy", "--quiet", ref, "oci:"+copied+":kicbase")
		if got := merged(t, copied); !slices.Equal(got, want) {
			t.Errorf("skopeo copy %s: merged view differs:\n%q\nwant\n%q", ref, got, want)
		}
	}
}

// TestUmoci: umoci unpacks the layout by its ref name into the tree the
// merged view says, with the trimmed files gone.
func TestUmoci(t *testing.T) {
	archivetest.RequireTool(t, "umoci")
	_, layout, _ := applied(t)
	rootfs, names := umociUnpack(t, layout)
	checkNames(t, "umoci unpack", names)
	if want := merged(t, layout); !slices.Equal(names, want) {
		t.Errorf("umoci's tree:\n%q\nrootfs-trim's merged view:\n%q", names, want)
	}
	b, err := os.ReadFile(filepath.Join(rootfs, "etc/containers/net.d/87-podman-bridge.conflist"))
	want, _ := os.ReadFile("../../testdata/packages/debian-12/podman/root/etc/cni/net.d/87-podman-bridge.conflist")
	if err != nil || !bytes.Equal(b, want) {
		t.Errorf("the relocated conflist: %v %q", err, b)
	}
}

// umociUnpack unpacks the layout's kicbase image with umoci and returns
// its rootfs and the names in it, sorted.
func umociUnpack(t *testing.T, layout string) (string, []string) {
	t.Helper()
	bundle := filepath.Join(t.TempDir(), "bundle")
	args := []string{"unpack", "--image", layout + ":kicbase", bundle}
	if os.Geteuid() != 0 {
		args = []string{"unpack", "--rootless", "--image", layout + ":kicbase", bundle}
	}
	run(t, "umoci", args...)
	rootfs := filepath.Join(bundle, "rootfs")
	var names []string
	err := filepath.WalkDir(rootfs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == rootfs {
			return err
		}
		rel, _ := filepath.Rel(rootfs, p)
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return rootfs, names
}

// TestZstd: an image of zstd layers gets its new layer in zstd; skopeo
// sees the media type and copies it, from a layout and from a tarball;
// podman loads the tarball and exports the trimmed filesystem. Debian's
// umoci 0.4.7 reads no zstd layer at all ("blob is not correct
// mediatype", the input's own layers too): for it, --squash --compress
// gzip makes one gzip layer, which it unpacks into the same tree.
func TestZstd(t *testing.T) {
	archivetest.RequireTool(t, "skopeo")
	dir := t.TempDir()
	in, layout, tarball := filepath.Join(dir, "kic"), filepath.Join(dir, "out"), filepath.Join(dir, "out.tar")
	ocitest.WriteLayout(in, ocitest.ZstdImage(ocitest.Kicbase("../../testdata/packages"), "linux/amd64"), "kicbase")
	run(t, bin, "apply", "--rules", "../../rules", "--quiet", in, layout)
	run(t, bin, "apply", "--rules", "../../rules", "--quiet", "--archive-format", "docker-archive", in, tarball)
	// skopeo's docker-archive: source makes up a Docker manifest of gzip
	// types whatever the blobs are (it detects the compression when it
	// reads them): only the layout's manifest is rootfs-trim's own.
	var raw struct {
		Layers []struct{ MediaType string }
	}
	if err := json.Unmarshal([]byte(run(t, "skopeo", "inspect", "--raw", "oci:"+layout+":kicbase")), &raw); err != nil {
		t.Fatal(err)
	}
	if n := len(raw.Layers); n != 5 || raw.Layers[n-1].MediaType != "application/vnd.oci.image.layer.v1.tar+zstd" {
		t.Errorf("skopeo inspect --raw: layers %+v, want 5 ending in a tar+zstd one", raw.Layers)
	}
	want := merged(t, layout)
	checkNames(t, "zstd layout", want)
	skopeoCopies(t, dir, want, "oci:"+layout+":kicbase", "docker-archive:"+tarball)
	t.Run("umoci", func(t *testing.T) {
		archivetest.RequireTool(t, "umoci")
		squashed := filepath.Join(dir, "squashed")
		run(t, bin, "apply", "--rules", "../../rules", "--quiet", "--squash", "--compress", "gzip", in, squashed)
		if _, got := umociUnpack(t, squashed); !slices.Equal(got, want) {
			t.Errorf("umoci's tree:\n%q\nrootfs-trim's merged view:\n%q", got, want)
		}
	})
	t.Run("podman", func(t *testing.T) {
		archivetest.RequireTool(t, "podman")
		archivetest.RequireRoot(t, "podman with a private storage root")
		names := podmanExport(t, tarball)
		for _, n := range want {
			if !slices.Contains(names, n) {
				t.Errorf("podman export lacks %s", n)
			}
		}
	})
}

func TestPodman(t *testing.T) {
	archivetest.RequireTool(t, "podman")
	archivetest.RequireRoot(t, "podman with a private storage root")
	_, layout, tarball := applied(t)
	names := podmanExport(t, tarball)
	checkNames(t, "podman export", names)
	// podman adds the mount points a container gets (/etc/hosts and
	// friends, /dev, /proc, /run, /sys) and nothing else.
	for _, n := range merged(t, layout) {
		if !slices.Contains(names, n) {
			t.Errorf("podman export lacks %s", n)
		}
	}
}

// podmanExport loads the tarball into a private podman storage, creates a
// container of it and returns the names its export holds.
func podmanExport(t *testing.T, tarball string) []string {
	t.Helper()
	w := t.TempDir()
	conf := filepath.Join(w, "containers.conf")
	if err := os.WriteFile(conf, []byte("[engine]\nevents_logger = \"file\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	podman := func(args ...string) string {
		t.Helper()
		full := append([]string{"--root", filepath.Join(w, "root"), "--runroot", filepath.Join(w, "run"), "--tmpdir", filepath.Join(w, "tmp"),
			"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "file"}, args...)
		cmd := exec.Command("podman", full...)
		cmd.Env = []string{"CONTAINERS_CONF=" + conf, "HOME=" + w, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + w}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, out.Bytes(), errb.Bytes())
		}
		return strings.TrimSpace(out.String())
	}
	loaded := podman("load", "--quiet", "--input", tarball)
	id := podman("images", "--quiet", "--no-trunc")
	if id == "" {
		t.Fatalf("podman load: %s; no image", loaded)
	}
	cid := podman("create", "--pull", "never", "--network", "none", strings.Fields(id)[0], "/bin/true")
	exported := filepath.Join(w, "fs.tar")
	podman("export", "--output", exported, cid)
	return archivetest.TarNames(t, exported)
}

// TestUnchanged: repack of an image, and apply on an image it already
// applied, write the input image: skopeo sees the same manifest digest
// and layers, in a layout and in a tarball.
func TestUnchanged(t *testing.T) {
	archivetest.RequireTool(t, "skopeo")
	in, layout, _ := applied(t)
	dir := t.TempDir()
	for _, c := range []struct{ from, kind string }{{in, "oci"}, {in, "docker-archive"}, {layout, "oci"}, {layout, "docker-archive"}} {
		want := inspect(t, "oci:"+c.from+":kicbase")
		out := filepath.Join(dir, filepath.Base(c.from)+"-"+c.kind)
		cmd := "repack"
		if c.from == layout {
			cmd = "apply"
		}
		args := []string{cmd, "--archive-format", c.kind, c.from, out}
		if cmd == "apply" {
			args = append([]string{cmd, "--rules", "../../rules", "--quiet"}, args[1:]...)
		}
		run(t, bin, args...)
		ref := "oci:" + out + ":kicbase"
		if c.kind != "oci" {
			ref = "docker-archive:" + out
		}
		got := inspect(t, ref)
		// skopeo names a docker-archive's layers by their diff_ids: there,
		// only their number can be held to the layout's.
		if len(got.Layers) != len(want.Layers) || c.kind == "oci" && (!slices.Equal(got.Layers, want.Layers) || got.Digest != want.Digest) {
			t.Errorf("%s %s to %s: manifest %s, layers %q; want the input's %s, %q", cmd, c.from, c.kind, got.Digest, got.Layers, want.Digest, want.Layers)
		}
	}
}
