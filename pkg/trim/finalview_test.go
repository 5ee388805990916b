package trim

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
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
			res, err := Audit(set, []AuditInput{{Path: path, Source: container.SourceOf(path, container.OpenOptions{})}}, nil, container.OpenOptions{})
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

// TestAuditNamesTheInitrdFile: a finding in an ISO image names the
// initrd file and the segment its entry is in, as an image finding names
// its layer (issue 37); a plain initrd of segments names the segment.
func TestAuditNamesTheInitrdFile(t *testing.T) {
	archivetest.RequireTool(t, "xorriso")
	const bridge = "etc/cni/net.d/10-crio-bridge.conflist"
	early := newcSegment(t, compress.None, finalEntry{'d', "kernel", ""}, finalEntry{'f', "kernel/GenuineIntel.bin", "ucode"})
	main := newcSegment(t, compress.Gzip, finalEntry{'d', "etc", ""}, finalEntry{'d', "etc/cni", ""}, finalEntry{'d', "etc/cni/net.d", ""}, finalEntry{'f', bridge, "{}"})
	iso := func(t *testing.T, cfg string, files map[string][]byte) string {
		dir := t.TempDir()
		root := filepath.Join(dir, "root")
		files["boot/grub/grub.cfg"] = []byte(cfg)
		files["boot/bzImage"] = []byte("a kernel")
		for p, b := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, p), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(dir, "x.iso")
		cmd := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-R", "-J", "-o", out, root)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("xorriso: %v\n%s", err, b)
		}
		return out
	}
	plain := filepath.Join(t.TempDir(), "initrd.img")
	if err := os.WriteFile(plain, append(slices.Clone(early), main...), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       *container.Place
		note       string
	}{
		{name: "two files", path: iso(t, "menuentry x {\n linux /boot/bzImage\n initrd /boot/early.cpio /boot/initrd\n}\n",
			map[string][]byte{"boot/early.cpio": early, "boot/initrd": main}),
			want: &container.Place{File: "/boot/initrd", Segment: 2, Compression: "gzip"}, note: " [initrd /boot/initrd, segment 2 (gzip at offset 0)]"},
		{name: "one file of two segments", path: iso(t, "menuentry x {\n linux /boot/bzImage\n initrd /boot/initrd\n}\n",
			map[string][]byte{"boot/initrd": append(slices.Clone(early), main...)}),
			want: &container.Place{File: "/boot/initrd", Segment: 2, Compression: "gzip", Offset: int64(len(early))},
			note: fmt.Sprintf(" [initrd /boot/initrd, segment 2 (gzip at offset %d)]", len(early))},
		{name: "one file of one stream", path: iso(t, "menuentry x {\n linux /boot/bzImage\n initrd /boot/initrd\n}\n",
			map[string][]byte{"boot/initrd": main}),
			want: &container.Place{File: "/boot/initrd"}, note: " [initrd /boot/initrd]"},
		{name: "an initrd of its own", path: plain,
			want: &container.Place{Segment: 2, Compression: "gzip", Offset: int64(len(early))}, note: fmt.Sprintf(" [segment 2 (gzip at offset %d)]", len(early))},
	}
	set := shippedRules(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, dpkg := range []bool{false, true} { // read as it comes, and recorded first
				res, err := Audit(set, []AuditInput{{Path: tc.path, Source: container.SourceOf(tc.path, container.OpenOptions{}), Dpkg: dpkg}}, nil, container.OpenOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Findings) != 1 || res.Findings[0].Path != bridge {
					t.Fatalf("findings %+v, want %s's alone", res.Findings, bridge)
				}
				f := res.Findings[0]
				if diff := cmp.Diff(tc.want, f.Initrd); diff != "" {
					t.Errorf("dpkg %v: place (-want +got):\n%s", dpkg, diff)
				}
				// Said beside the reason, as an image's layer is, not in it.
				if got := " [" + f.Initrd.String() + "]"; f.Initrd == nil || got != tc.note {
					t.Errorf("dpkg %v: place %+v, want it said as %q", dpkg, f.Initrd, tc.note)
				}
				if strings.Contains(f.Reason, "[initrd") || strings.Contains(f.Reason, "[segment") {
					t.Errorf("dpkg %v: reason %q repeats the place", dpkg, f.Reason)
				}
			}
		})
	}
}
