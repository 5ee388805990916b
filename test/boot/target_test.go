package boot

import (
	"os"
	"path/filepath"
	"testing"
)

// target lays out a Buildroot target directory for a boot test and keeps
// its packages-file-list.txt lines ("package,./path", as Buildroot writes
// them) for what each package installed.
type target struct {
	t      *testing.T
	root   string
	owners []string
}

func (tg *target) own(pkg, path string) { tg.owners = append(tg.owners, pkg+",./"+path) }

// write puts a file at path with exactly mode (Chmod: WriteFile's mode is
// filtered by the umask); pkg "" means an overlay or a script made it.
func (tg *target) write(pkg, path string, data []byte, mode os.FileMode) {
	tg.t.Helper()
	p := filepath.Join(tg.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tg.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		tg.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		tg.t.Fatal(err)
	}
	if pkg != "" {
		tg.own(pkg, path)
	}
}

// podmanConflist is podman v3.4.7's cni/87-podman-bridge.conflist, from the
// package fixtures (testdata/packages/upstream/podman-v3.4.7).
func podmanConflist(t *testing.T, repo string) []byte {
	t.Helper()
	return readFileBytes(t, filepath.Join(repo, "testdata/packages/upstream/podman-v3.4.7/root/etc/cni/net.d/87-podman-bridge.conflist"))
}
