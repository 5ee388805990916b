package diff

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
)

// A config an edit rule judges by its content is judged on its data on
// both of diff's reads: as it comes, and recorded until the input's own
// dpkg database (read after it) gives the owners. The recorded read once
// kept no data of it, so a bump that disabled the CRI went unseen.
func TestImagesJudgeEditedContent(t *testing.T) {
	const config = "etc/containerd/config.toml"
	set := loadRules(t)
	mt := time.Unix(1700000000, 0).UTC()
	build := func(content string) string {
		var buf bytes.Buffer
		w := archive.NewCpioWriter(&buf, archive.Newc)
		list := "/etc/containerd/config.toml\n"
		for i, e := range []*archive.Entry{
			{Name: "etc", Type: archive.TypeDir, Mode: 0o755, Nlink: 3, ModTime: mt},
			{Name: "etc/containerd", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
			{Name: config, Type: archive.TypeRegular, Mode: 0o644, Nlink: 1, ModTime: mt, Size: int64(len(content))},
			{Name: "var/lib/dpkg/info/containerd.io.list", Type: archive.TypeRegular, Mode: 0o644, Nlink: 1, ModTime: mt, Size: int64(len(list))},
		} {
			e.Inode = uint64(i + 1)
			if err := w.WriteHeader(e); err != nil {
				t.Fatal(err)
			}
			data := map[string]string{config: content, "var/lib/dpkg/info/containerd.io.list": list}[e.Name]
			if _, err := w.Write([]byte(data)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "in.cpio")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, new := build("disabled_plugins = []\n"), build("# bumped\ndisabled_plugins = [\"cri\"]\n")
	type found struct{ Package, Path, Key, Value string }
	want := []found{{"containerd.io", config, "disabled_plugins", `["cri"]`}}
	for _, dpkg := range []bool{false, true} {
		in := func(p string) Input {
			i := Input{Path: p, Source: container.SourceOf(p, container.OpenOptions{}), Dpkg: dpkg}
			if !dpkg {
				o := owners.New()
				o.Fixed = "containerd.io"
				i.Owners = o
			}
			return i
		}
		res, err := Images(Options{Set: set}, in(old), in(new))
		if err != nil {
			t.Fatal(err)
		}
		var got []found
		for _, p := range res.Packages {
			for _, f := range p.OffendersNew {
				got = append(got, found{p.Package, f.Path, f.Key, f.Value})
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("dpkg %v: new offenders (-want +got):\n%s", dpkg, d)
		}
	}
}
