package podman

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/internal/docblock"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// TestPodmanBuildKicbase is kicbase's build step with a real builder: the
// amd64 kicbase-like tree (testdata/packages/kicbase/amd64) becomes a base
// image with `podman import` (no registry), a Containerfile FROM it copies
// in a static rootfs-trim (CGO_ENABLED=0, as the patched Dockerfile's
// rootfs-trim-${TARGETARCH}) and runs `rootfs-trim apply --rules ...
// --strict /` with the rules bind-mounted (RUN --mount): the two lines of
// docs/recipes.md's Dockerfile recipe, as printed there. The image
// `podman build` commits, exported through `podman create` and `podman
// export`, audits clean, keeps /var as it was and holds what apply wrote.
//
// The build uses buildah's chroot isolation (--isolation chroot), which
// runs the RUN step without an OCI runtime: on this kind of machine (cgroup
// v1 and v2 mounted together, "hybrid") crun refuses to create a container
// ("cgroups in hybrid mode not supported"). The step still gets what a
// builder gives a RUN: /proc, /sys, /dev and /etc/hosts and
// /etc/resolv.conf mounted into its root. Storage is vfs in temp
// directories, in a private mount namespace.
func TestPodmanBuildKicbase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs podman build: not with -short")
	}
	for _, tool := range []string{"podman", "unshare", "go", "tar", "busybox"} {
		archivetest.RequireTool(t, tool)
	}
	archivetest.RequireRoot(t, "podman build as root, in a mount namespace")
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	w := t.TempDir()
	ctx := filepath.Join(w, "ctx")
	if err := os.CopyFS(filepath.Join(ctx, "rules"), os.DirFS(filepath.Join(repo, "rules"))); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(ctx, "rootfs-trim")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/rootfs-trim")
	build.Dir = repo
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The step is docs/recipes.md's, as a user copies it: its RUN is in
	// shell form, as kicbase's (which has a shell), so the base gets
	// busybox as /bin/sh.
	step, err := docblock.Block(repo, "recipe-dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	containerfile := "FROM localhost/kicbase-like:test\n" + step
	if err := os.WriteFile(filepath.Join(ctx, "Containerfile"), []byte(containerfile), 0o644); err != nil {
		t.Fatal(err)
	}

	// The base: the fixture with the mount points git does not keep.
	tree := filepath.Join(w, "tree")
	if err := os.CopyFS(tree, os.DirFS(filepath.Join(repo, "testdata/packages/kicbase/amd64/root"))); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"proc", "sys", "dev", "run", "tmp"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	busyboxPath, err := exec.LookPath("busybox") // busybox-static's
	if err != nil {
		t.Fatal(err)
	}
	busybox, err := os.ReadFile(busyboxPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "usr/bin/busybox"), busybox, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("busybox", filepath.Join(tree, "usr/bin/sh")); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(w, "kicbase.tar")
	archivetest.RunIn(t, tree, nil, "tar", "--numeric-owner", "--owner=0", "--group=0", "-cf", base, ".")

	p := &builder{w: w}
	p.podman(t, "import", base, "localhost/kicbase-like:test")
	out := p.podman(t, "build", "--isolation", "chroot", "--pull=never", "-t", "localhost/kicbase-trimmed:test", ctx)
	for _, want := range []string{
		// The one Go binary no record names is rootfs-trim itself, COPY'd in.
		"owners: from the dpkg database in / (15 packages) and /usr/local/share/rootfs-trim/owners (6 packages); 1 file from Go build information\n",
		"removed    etc/crictl.yaml ",
		"relocated  etc/cni/net.d/87-podman-bridge.conflist -> etc/containers/net.d/87-podman-bridge.conflist ",
		"deferred   etc/cni/net.d/10-crio-bridge.conflist.disabled -> ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("podman build: no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "unreviewed") {
		t.Errorf("podman build: apply left something unreviewed:\n%s", out)
	}
	cid := strings.TrimSpace(p.podman(t, "create", "--pull=never", "localhost/kicbase-trimmed:test", "/usr/bin/rootfs-trim", "version"))
	exported := filepath.Join(w, "exported.tar")
	p.podman(t, "export", "-o", exported, cid)

	audit := exec.Command(bin, "audit", "--rules", filepath.Join(repo, "rules"), exported)
	// Clean but for the notes that docker, the policy's runtime, starts.
	if got, err := audit.CombinedOutput(); err != nil || !strings.Contains(string(got), "\n0 offending file(s), 0 error(s), 0 warning(s), ") {
		t.Errorf("audit of the built image: %v\n%s", err, got)
	}
	before, after := archivetest.TarNames(t, base), archivetest.TarNames(t, exported)
	under := func(names []string, dir string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !strings.HasPrefix(n, dir) })
	}
	for _, name := range []string{"etc/containers/net.d/87-podman-bridge.conflist", "etc/containers/containers.conf", "usr/share/minikube/rootfs-trim/index.json", "usr/bin/rootfs-trim"} {
		if !slices.Contains(after, name) {
			t.Errorf("the built image has no %s", name)
		}
	}
	for _, name := range []string{"etc/crictl.yaml", "etc/cni/net.d/87-podman-bridge.conflist", "etc/cni/net.d/10-crio-bridge.conflist.disabled"} {
		if slices.Contains(after, name) {
			t.Errorf("the built image still has %s", name)
		}
	}
	// The rules were mounted, not copied: buildah leaves the empty mount
	// point, nothing in it.
	if in := under(after, "tmp/rootfs-trim-rules/"); len(in) > 0 {
		t.Errorf("the rules are in the built image: %q", in)
	}
	if diff := cmp.Diff(under(before, "var/"), under(after, "var/")); diff != "" {
		t.Errorf("/var in the built image (-base +built):\n%s", diff)
	}
}

// builder runs a podman of its own: storage, run and tmp directories in
// w, vfs, in a private mount namespace.
type builder struct{ w string }

func (b *builder) podman(t *testing.T, args ...string) string {
	t.Helper()
	full := append([]string{"-m", "--propagation", "private", "podman",
		"--root", filepath.Join(b.w, "storage"),
		"--runroot", filepath.Join(b.w, "run"),
		"--tmpdir", filepath.Join(b.w, "tmp"),
		"--storage-driver", "vfs",
		"--cgroup-manager", "cgroupfs",
		"--events-backend", "file",
	}, args...)
	cmd := exec.Command("unshare", full...)
	cmd.Env = []string{
		"HOME=" + filepath.Join(b.w, "home"),
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LC_ALL=C",
		"TMPDIR=" + b.w,
		"CONTAINERS_CONF=/dev/null",
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
