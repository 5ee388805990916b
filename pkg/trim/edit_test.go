package trim

import (
	"bytes"
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
				res, err := Audit(set, []AuditInput{{Path: path, Dpkg: dpkg}}, nil, container.OpenOptions{})
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
