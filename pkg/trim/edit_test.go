package trim

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

// Audit judges a file an edit rule matches by its content: containerd's
// config is a finding, with its key and value, only while it disables the
// CRI; read as it comes and recorded first (owners from a dpkg database
// read after it), alike.
func TestAuditJudgesEditedContent(t *testing.T) {
	const config = "etc/containerd/config.toml"
	type found struct{ Path, Key, Value string }
	set := shippedRules(t)
	for _, tc := range []struct {
		name, content string
		want          []found
	}{
		{"version 1, CRI disabled", "# c\ndisabled_plugins = [\"cri\"]\n", []found{{Path: config, Key: "disabled_plugins", Value: `["cri"]`}}},
		{"version 2, CRI disabled", "version = 2\ndisabled_plugins = ['io.containerd.grpc.v1.cri']\n", []found{{Path: config, Key: "disabled_plugins", Value: `["io.containerd.grpc.v1.cri"]`}}},
		{"version 2, CRI on", "version = 2\ndisabled_plugins = [\"cri\"]\n", nil},
		{"no list", "version = 3\n", nil},
		{"not TOML", "version = \n", []found{{Path: config, Key: "disabled_plugins"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in bytes.Buffer
			w := archive.NewCpioWriter(&in, archive.Newc)
			mt := time.Unix(1700000000, 0).UTC()
			for _, e := range []*archive.Entry{
				{Name: "etc", Type: archive.TypeDir, Mode: 0o755, Nlink: 3, ModTime: mt},
				{Name: "etc/containerd", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
				{Name: config, Type: archive.TypeRegular, Mode: 0o644, Nlink: 1, ModTime: mt, Size: int64(len(tc.content))},
			} {
				w.WriteHeader(e)
				if e.Size > 0 {
					w.Write([]byte(tc.content))
				}
			}
			w.Close()
			path := filepath.Join(t.TempDir(), "in.cpio")
			if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, dpkg := range []bool{false, true} {
				res, err := Audit(set, []AuditInput{{Path: path, Source: container.SourceOf(path, container.OpenOptions{}), Dpkg: dpkg}}, nil, container.OpenOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var got []found
				for _, f := range res.Findings {
					got = append(got, found{f.Path, f.Key, f.Value})
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("dpkg %v: findings (-want +got):\n%s", dpkg, diff)
				}
			}
		})
	}
}

// A stream apply edits the file at its place, header and inode kept: with
// the owners from the archive's own dpkg database, read after it (the one
// pass writes it as it comes, and the database then names the same rule),
// and when the file has nothing to change, the output is the input.
func TestStreamEditsInPlace(t *testing.T) {
	const config = "etc/containerd/config.toml"
	set := shippedRules(t)
	mt := time.Unix(1700000000, 0).UTC()
	build := func(content string) []byte {
		var in bytes.Buffer
		w := archive.NewCpioWriter(&in, archive.Newc)
		list := "/etc/containerd/config.toml\n"
		for i, e := range []*archive.Entry{
			{Name: "etc", Type: archive.TypeDir, Mode: 0o755, Nlink: 3, ModTime: mt},
			{Name: "etc/containerd", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
			{Name: config, Type: archive.TypeRegular, Mode: 0o644, Nlink: 1, ModTime: mt, Size: int64(len(content))},
			{Name: "var", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
			{Name: "var/lib", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
			{Name: "var/lib/dpkg", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
			{Name: "var/lib/dpkg/info", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
			{Name: "var/lib/dpkg/info/containerd.io.list", Type: archive.TypeRegular, Mode: 0o644, Nlink: 1, ModTime: mt, Size: int64(len(list))},
		} {
			e.Inode = uint64(i + 1)
			w.WriteHeader(e)
			switch e.Name {
			case config:
				w.Write([]byte(content))
			case "var/lib/dpkg/info/containerd.io.list":
				w.Write([]byte(list))
			}
		}
		w.Close()
		return in.Bytes()
	}
	apply := func(in []byte) ([]byte, *Report) {
		var out bytes.Buffer
		ow := archive.NewCpioWriter(&out, archive.Newc)
		rep, err := ApplyStream(ow, archive.KindCpio, archive.NewCpioReader(bytes.NewReader(in)), Options{Set: set, Dpkg: "in", Epoch: &mt}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ow.Close()
		return out.Bytes(), rep
	}

	out, rep := apply(build("# c\ndisabled_plugins = [\"cri\", \"x\"] # why\n"))
	var names []string
	var got string
	var inode uint64
	eachCpioEntry(t, out, func(e *archive.Entry, r io.Reader) {
		names = append(names, e.Name)
		if e.Name == config {
			b, _ := io.ReadAll(r)
			got, inode = string(b), e.Inode
		}
	})
	if diff := cmp.Diff("# c\ndisabled_plugins = [\"x\"] # why\n", got); diff != "" {
		t.Errorf("edited file (-want +got):\n%s", diff)
	}
	if names[2] != config || inode != 3 {
		t.Errorf("the edited file is entry %q of %q, inode %d: not at its place", names[2], names, inode)
	}
	var change []string
	for _, c := range rep.Changes {
		if c.Path == config {
			change = append(change, string(c.Kind), c.Package, c.Reason)
		}
	}
	if diff := cmp.Diff([]string{"edited", "containerd.io", `disabled_plugins: ["cri", "x"] -> ["x"]`}, change); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}

	// Nothing to change: no change recorded, and the output starts with
	// the input's entries as they were (what apply adds comes after).
	clean := build("version = 2\n")
	out, rep = apply(clean)
	for _, c := range rep.Changes {
		if c.Path == config {
			t.Errorf("a config with nothing to change: %+v", c)
		}
	}
	trailer := bytes.LastIndex(clean, []byte("TRAILER!!!")) - 110 // its header's start
	if !bytes.Equal(out[:trailer], clean[:trailer]) {
		t.Errorf("a config with nothing to change: the input's entries are not the output's start")
	}
}
