package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// skipcpio is dracut-core's: it prints an initrd past its early raw cpio.
const skipcpio = "/usr/lib/dracut/skipcpio"

// listed is what list --json says of an initrd: each segment's entry
// names (trailers aside) and the segments.
type listed struct {
	names [][]string
	segs  []struct {
		Offset, Length int64
		Compression    string
	}
}

func listInitrd(t *testing.T, bin, img string) listed {
	t.Helper()
	r := runBinary(t, exec.Command(bin, "list", "--json", img))
	if r.code != 0 {
		t.Fatalf("list %s: exit %d: %s", img, r.code, r.stderr)
	}
	var doc struct {
		Entries []struct {
			Name, Type string
			Segment    int
		}
		Segments []struct {
			Offset, Length int64
			Compression    string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var l listed
	l.segs = doc.Segments
	l.names = make([][]string, len(doc.Segments))
	for _, e := range doc.Entries {
		k := max(e.Segment, 1) - 1
		if e.Type != "trailer" && e.Name != "." {
			l.names[k] = append(l.names[k], strings.TrimPrefix(e.Name, "./"))
		}
	}
	for _, n := range l.names {
		slices.Sort(n)
	}
	return l
}

// cpioNames is what GNU cpio -t lists of the shell pipeline's output.
func cpioNames(t *testing.T, pipeline string) []string {
	t.Helper()
	out, err := exec.Command("sh", "-c", pipeline+" | cpio -t --quiet").Output()
	if err != nil {
		t.Fatalf("%s | cpio -t: %v", pipeline, err)
	}
	var names []string
	for _, n := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if n = strings.TrimPrefix(n, "./"); n != "." && n != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// treeNames lists a directory unmkinitramfs extracted into.
func treeNames(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		names = append(names, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// TestInitrdProducers: initrds as dracut and Debian's initramfs-tools
// write them (an early raw cpio with the microcode, made here since
// Debian's microcode packages are non-free, then the main cpio
// compressed), read by rootfs-trim as the peers dracut's skipcpio with the
// codec's tool and cpio -t, and initramfs-tools' unmkinitramfs, read them;
// then applied, and the peers read the output with everything kept.
func TestInitrdProducers(t *testing.T) {
	if testing.Short() {
		t.Skip("dracut and mkinitramfs take minutes: not with -short")
	}
	for _, tool := range []string{"cpio", "unmkinitramfs", "zstd", "gzip", "xz", skipcpio} {
		archivetest.RequireTool(t, tool)
	}
	bin := binary(t)
	dir := t.TempDir()
	crictl := filepath.Join(dir, "crictl.yaml")
	mustOK(t, os.WriteFile(crictl, []byte("runtime-endpoint: unix:///run/containerd/containerd.sock\n"), 0o644))
	type codec struct{ codec, decomp string }
	zstd, gzip, xz := codec{"zstd", "zstd -dc"}, codec{"gzip", "gzip -dc"}, codec{"xz", "xz -dc"}
	// Three compressions in all, as the issue allows: both producers'
	// zstd and gzip, and dracut's xz (--check=crc32, the kernel's only
	// check), whose changed segment goes through the xz splice.
	producers := []struct {
		name   string
		make   func(t *testing.T, dir, crictl, codec string) (img string, want []string)
		codecs []codec
	}{{"dracut", dracutInitrd, []codec{zstd, gzip, xz}}, {"mkinitramfs", mkinitramfsInitrd, []codec{zstd, gzip}}}
	for _, p := range producers {
		for _, c := range p.codecs {
			t.Run(p.name+"/"+c.codec, func(t *testing.T) {
				img, want := p.make(t, dir, crictl, c.codec)
				checkApplied(t, bin, img, c.decomp, append(want, "etc/crictl.yaml"))
			})
		}
	}
}

// dracutInitrd has dracut write an initrd without a kernel's modules,
// the early microcode from a firmware directory made here.
func dracutInitrd(t *testing.T, dir, crictl, codec string) (string, []string) {
	archivetest.RequireTool(t, "dracut")
	fw := filepath.Join(dir, "fw", "intel-ucode")
	mustOK(t, os.MkdirAll(fw, 0o755))
	mustOK(t, os.WriteFile(filepath.Join(fw, "06-55-04"), []byte("microcode made for the test\n"), 0o644))
	img := filepath.Join(dir, "dracut-"+codec+".img")
	cmd := exec.Command("dracut", "--no-kernel", "--no-hostonly", "--early-microcode", "--fwdir", filepath.Dir(fw),
		"-m", "base", "--"+codec, "--include", crictl, "/etc/crictl.yaml", "--reproducible", "--force", "--quiet", img)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dracut: %v\n%s", err, out)
	}
	return img, nil
}

// checkApplied checks what rootfs-trim lists of img, an early raw cpio
// then a compressed one holding etc/crictl.yaml, against the peers; then
// applies the rules to it and checks that the peers read the output: the
// early segment byte for byte, the main one with everything but
// etc/crictl.yaml, the same names, types, modes and contents.
func checkApplied(t *testing.T, bin, img, decomp string, want []string) {
	t.Helper()
	dir := filepath.Dir(img)
	in := listInitrd(t, bin, img)
	if len(in.segs) != 2 || in.segs[0].Compression != "none" {
		t.Fatalf("segments %+v, want an early raw cpio and the main one", in.segs)
	}
	unIn := checkPeers(t, img, in, decomp, dir)
	if !slices.Contains(in.names[0], "kernel/x86/microcode/GenuineIntel.bin") {
		t.Fatalf("no microcode in the early segment: %q", in.names[0])
	}
	for _, n := range want {
		if !slices.Contains(in.names[1], n) {
			t.Fatalf("no %s in the main segment", n)
		}
	}

	out := strings.TrimSuffix(img, ".img") + "-applied.img"
	r := runBinary(t, exec.Command(bin, "apply", "--rules", "../../rules", "--package", "containerd-bin", img, out))
	if r.code != 0 {
		t.Fatalf("apply: exit %d: %s", r.code, r.stderr)
	}
	got := listInitrd(t, bin, out)
	if len(got.segs) != 2 {
		// The main segment changes: what apply adds goes in it, where
		// unmkinitramfs, which reads one compressed remainder to its
		// first trailer, sees it too (issue 37).
		t.Fatalf("output segments %+v, want the two, what apply adds in the main one", got.segs)
	}
	a, _ := os.ReadFile(img)
	b, _ := os.ReadFile(out)
	if n := in.segs[0].Length; string(a[:n]) != string(b[:n]) {
		t.Error("the early segment is not copied byte for byte")
	}
	kept := slices.DeleteFunc(slices.Clone(in.names[1]), func(n string) bool { return n == "etc/crictl.yaml" })
	added := slices.DeleteFunc(slices.Clone(got.names[1]), func(n string) bool { return slices.Contains(kept, n) })
	stayed := slices.DeleteFunc(slices.Clone(got.names[1]), func(n string) bool { return slices.Contains(added, n) })
	if diff := cmp.Diff(kept, stayed); diff != "" {
		t.Errorf("the main segment's entries after apply, what apply added aside (-want +got):\n%s", diff)
	}
	if !slices.Contains(added, "usr/share/minikube/rootfs-trim/index.json") {
		t.Errorf("what apply added to the main segment: %q, no index", added)
	}
	// The peers read what both segments hold, what apply added included.
	unOut := checkPeers(t, out, got, decomp, dir)
	wantTree := treeFiles(t, filepath.Join(unIn, "main"))
	delete(wantTree, "etc/crictl.yaml")
	for _, part := range []string{"early", "main"} {
		w := treeFiles(t, filepath.Join(unIn, part))
		g := treeFiles(t, filepath.Join(unOut, part))
		if part == "main" {
			w = wantTree
			for _, n := range added {
				if _, ok := g[n]; !ok {
					t.Errorf("unmkinitramfs's main of apply's output has no %s, which apply added", n)
				}
				if _, ok := w[n]; !ok {
					delete(g, n)
				}
			}
		}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("unmkinitramfs's %s of the input and of apply's output (-input +output):\n%s", part, diff)
		}
	}
}

// checkPeers compares each segment's names with what skipcpio and cpio,
// and unmkinitramfs, extract of img, and returns where unmkinitramfs
// extracted it.
func checkPeers(t *testing.T, img string, l listed, decomp, dir string) string {
	t.Helper()
	early := cpioNames(t, fmt.Sprintf("head -c %d %s", l.segs[0].Length, img))
	if diff := cmp.Diff(l.names[0], early); diff != "" {
		t.Errorf("%s: segment 1 and cpio -t of it (-rootfs-trim +cpio):\n%s", img, diff)
	}
	main := cpioNames(t, fmt.Sprintf("%s %s | %s", skipcpio, img, decomp))
	if diff := cmp.Diff(l.names[1], main); diff != "" {
		t.Errorf("%s: segment 2 and skipcpio | %s | cpio -t (-rootfs-trim +skipcpio):\n%s", img, decomp, diff)
	}
	un := filepath.Join(dir, "un-"+filepath.Base(img))
	os.RemoveAll(un)
	if out, err := exec.Command("unmkinitramfs", img, un).CombinedOutput(); err != nil {
		t.Fatalf("unmkinitramfs: %v\n%s", err, out)
	}
	if diff := cmp.Diff(l.names[0], treeNames(t, filepath.Join(un, "early"))); diff != "" {
		t.Errorf("%s: segment 1 and unmkinitramfs's early (-rootfs-trim +unmkinitramfs):\n%s", img, diff)
	}
	if diff := cmp.Diff(l.names[1], treeNames(t, filepath.Join(un, "main"))); diff != "" {
		t.Errorf("%s: segment 2 and unmkinitramfs's main (-rootfs-trim +unmkinitramfs):\n%s", img, diff)
	}
	return un
}

// treeFiles describes each entry under root: its mode and, for a file,
// its content's digest, for a symlink its target.
func treeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		desc := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + digest.Bytes(data)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		files[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
