package trim

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

// finalEntry is one entry of a newc segment built for a test: a type
// ('d', 'l', 'f'), its name, a symlink's target or a file's data.
type finalEntry struct {
	typ        byte
	name, data string
}

func newcSegment(t *testing.T, codec compress.Codec, entries ...finalEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _, err := compress.NewWriter(&buf, codec, compress.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := archive.NewCpioWriter(zw, archive.Newc)
	for i, f := range entries {
		e := &archive.Entry{Name: f.name, Mode: 0o644, Inode: uint64(i + 1), Nlink: 1}
		switch f.typ {
		case 'd':
			e.Type, e.Mode = archive.TypeDir, 0o755
		case 'l':
			e.Type, e.Linkname, e.Mode = archive.TypeSymlink, f.data, 0o777
		default:
			e.Type, e.Size = archive.TypeRegular, int64(len(f.data))
		}
		if err := w.WriteHeader(e); err != nil {
			t.Fatal(err)
		}
		if e.Type == archive.TypeRegular {
			if _, err := w.Write([]byte(f.data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestAuditReportsTheFinalTree: in an initrd of two segments, a later
// segment's entry replaces an earlier one at the same place, as the
// kernel unpacks them (init/initramfs.c do_name, do_symlink: clean_path
// unlinks what is there); audit reports what the final tree holds, the
// later entry, not both (issue 37: a symlink replaced by a file was
// reported twice, the symlink as if it booted).
func TestAuditReportsTheFinalTree(t *testing.T) {
	const bridge = "etc/cni/net.d/10-crio-bridge.conflist"
	dirs := []finalEntry{{'d', "etc", ""}, {'d', "etc/cni", ""}, {'d', "etc/cni/net.d", ""}}
	tests := []struct {
		name        string
		first, then []finalEntry
		want        []string // path type
	}{
		{name: "a symlink, then a file", first: append(dirs, finalEntry{'l', bridge, "/dev/null"}), then: []finalEntry{{'f', bridge, "{}"}},
			want: []string{bridge + " file"}},
		{name: "a file, then a symlink", first: append(dirs, finalEntry{'f', bridge, "{}"}), then: []finalEntry{{'l', bridge, "/dev/null"}},
			want: []string{bridge + " symlink"}},
		{name: "a file, then a file", first: append(dirs, finalEntry{'f', bridge, "{}"}), then: []finalEntry{{'f', bridge, "{ }"}},
			want: []string{bridge + " file"}},
		{name: "two files", first: append(dirs, finalEntry{'f', bridge, "{}"}), then: []finalEntry{{'f', "etc/cni/net.d/87-podman-bridge.conflist", "{}"}},
			want: []string{bridge + " file", "etc/cni/net.d/87-podman-bridge.conflist file"}},
	}
	set := shippedRules(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := append(newcSegment(t, compress.None, tc.first...), newcSegment(t, compress.Gzip, tc.then...)...)
			path := filepath.Join(t.TempDir(), "initrd.img")
			if err := os.WriteFile(path, file, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Audit(set, []AuditInput{{Path: path}}, nil, container.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Findings {
				if f.Path != "" {
					got = append(got, f.Path+" "+f.Type)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
