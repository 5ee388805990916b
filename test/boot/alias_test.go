package boot

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// Issue 23: a second initrd segment whose entries are not made at their
// literal names. The kernel unpacks it after the image, into the same
// rootfs (the image's etc/cni/net.d is there already): the guest's
// manifest says where each entry landed, which must be where
// archive.Resolver says, fed both segments; apply --strict, audit and
// check on the same initrd must see the conflists at those places.

// aliasSpec is the segment: "d NAME", "f NAME" (its content is its
// name), "l NAME TARGET", "h NAME INO" (a hard-link member, nlink 2).
var aliasSpec = []string{
	// An empty directory gives way to a link; the file goes through it.
	"d alias-empty", "l alias-empty etc/cni/net.d", "f alias-empty/00-empty.conflist",
	// One that is not empty stays; the link fails (EEXIST).
	"d alias-full", "f alias-full/keep", "l alias-full etc/cni/net.d", "f alias-full/01-full.conflist",
	// A chain of links, an absolute target and a ".." one.
	"l alias-a alias-b", "l alias-b /etc/cni/alias-z", "l etc/cni/alias-z ../cni", "f alias-a/net.d/02-chain.conflist",
	"l usr/alias-up ../../etc/cni/net.d", "f usr/alias-up/03-up.conflist",
	// The alias two levels above the file.
	"d alias-two", "l alias-two etc", "f alias-two/cni/net.d/04-two.conflist",
	// A link, then a directory: the link goes.
	"l alias-sd etc/cni/net.d", "d alias-sd", "f alias-sd/05-sd.conflist",
	// A file, then a directory; a file over a directory that is not empty.
	"f alias-fd", "d alias-fd", "f alias-fd/06-fd.conflist",
	"d alias-fo", "f alias-fo/keep", "f alias-fo", "f alias-fo/07-fo.conflist",
	// A hard link to a name that became a symlink is that symlink.
	"h alias-h1 90001", "l alias-h1 etc/cni/net.d", "h alias-h2 90001", "f alias-h2/08-hl.conflist",
}

// aliasLands is where the kernel makes each conflist, by init/initramfs.c.
var aliasLands = map[string]string{
	"00-empty.conflist": "etc/cni/net.d/00-empty.conflist",
	"01-full.conflist":  "alias-full/01-full.conflist",
	"02-chain.conflist": "etc/cni/net.d/02-chain.conflist",
	"03-up.conflist":    "etc/cni/net.d/03-up.conflist",
	"04-two.conflist":   "etc/cni/net.d/04-two.conflist",
	"05-sd.conflist":    "alias-sd/05-sd.conflist",
	"06-fd.conflist":    "alias-fd/06-fd.conflist",
	"07-fo.conflist":    "alias-fo/07-fo.conflist",
	"08-hl.conflist":    "etc/cni/net.d/08-hl.conflist",
}

func aliasEntries() []*archive.Entry {
	mt := time.Unix(1700000000, 0).UTC()
	var out []*archive.Entry
	for i, s := range aliasSpec {
		f := strings.SplitN(s, " ", 3)
		e := &archive.Entry{Name: f[1], Mode: 0o644, Nlink: 1, Inode: uint64(80000 + i), ModTime: mt}
		switch f[0] {
		case "d":
			e.Type, e.Mode, e.Nlink = archive.TypeDir, 0o755, 2
		case "f":
			e.Type, e.Size = archive.TypeRegular, int64(len(e.Name))
		case "l":
			e.Type, e.Linkname, e.Mode = archive.TypeSymlink, f[2], 0o777
		case "h":
			e.Type, e.Nlink, e.Size = archive.TypeRegular, 2, int64(len(e.Name))
			fmt.Sscan(f[2], &e.Inode)
		}
		out = append(out, e)
	}
	return out
}

// appendAliasSegment writes image followed by the segment, gzip-compressed
// as a second member, and returns the initrd's path.
func appendAliasSegment(t *testing.T, image string) string {
	t.Helper()
	var seg bytes.Buffer
	zw := gzip.NewWriter(&seg)
	w := archive.NewCpioWriter(zw, archive.Newc)
	for _, e := range aliasEntries() {
		if err := w.WriteHeader(e); err != nil {
			t.Fatal(err)
		}
		if e.Size > 0 {
			io.WriteString(w, e.Name)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	initrd := strings.TrimSuffix(image, ".cpio.gz") + "-aliased.cpio.gz"
	writeFile(t, initrd, append(readFileBytes(t, image), seg.Bytes()...))
	return initrd
}

// checkAliasTools: on the initrd the kernel boots, apply --strict, audit
// and check find each conflist that lands in etc/cni/net.d, at that path.
func checkAliasTools(t *testing.T, fx bootFixture, initrd string) {
	t.Helper()
	var inNetd []string
	for name, at := range aliasLands {
		if strings.HasPrefix(at, "etc/cni/net.d/") {
			inNetd = append(inNetd, name)
		}
	}
	sort.Strings(inNetd)
	rules := filepath.Join(fx.repo, "rules")
	run := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(fx.rootfsTrim, args...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != want {
			t.Errorf("rootfs-trim %s: exit %d (%v), want %d\n%s", strings.Join(args, " "), code, err, want, out)
		}
		return string(out)
	}
	out := run(1, "apply", "--strict", "--rules", rules, "--packages-file-list", fx.packages, initrd, filepath.Join(fx.work, "aliased-out.cpio.gz"))
	check := run(1, "check", "--rules", rules, "--lock", filepath.Join(fx.work, "aliased.lock"), "--allow-new", "aliased="+initrd)
	for _, name := range inNetd {
		for what, text := range map[string]string{"apply": out, "check": check} {
			if !strings.Contains(text, "sees it as etc/cni/net.d/"+name) {
				t.Errorf("%s does not see %s in etc/cni/net.d:\n%s", what, name, text)
			}
		}
	}
	var audit struct {
		Findings []struct{ Path, Reason string }
	}
	if err := json.Unmarshal([]byte(run(1, "audit", "--format", "json", "--rules", rules, "--packages-file-list", fx.packages, initrd)), &audit); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, f := range audit.Findings {
		if _, after, ok := strings.Cut(f.Reason, "sees it as etc/cni/net.d/"); ok {
			seen = append(seen, strings.SplitN(after, ",", 2)[0])
		}
	}
	sort.Strings(seen)
	if diff := strings.Join(seen, " "); diff != strings.Join(inNetd, " ") {
		t.Errorf("audit sees in etc/cni/net.d: %s, want %s", diff, strings.Join(inNetd, " "))
	}
}

// checkAliasGuest compares the guest's rootfs with archive.Resolver fed
// every entry of the initrd: each conflist is where aliasLands says, and
// every path the guest has from the initrd has the type (and target) the
// resolver says is there.
func checkAliasGuest(t *testing.T, initrd string, guest []string) {
	t.Helper()
	got := map[string]string{} // path -> manifest line
	for _, line := range guest {
		got[strings.TrimPrefix(line[strings.LastIndexByte(line, '|')+1:], "/")] = line
	}
	for name, at := range aliasLands {
		line, ok := got[at]
		if !ok || !strings.HasPrefix(line, "f|") {
			t.Errorf("%s: the kernel did not make it at /%s (%q)", name, at, line)
		}
		var elsewhere []string
		for p := range got {
			if filepath.Base(p) == name && p != at {
				elsewhere = append(elsewhere, p)
			}
		}
		if len(elsewhere) > 0 {
			t.Errorf("%s: also at %v in the guest", name, elsewhere)
		}
	}
	r := archive.NewResolver(archive.KindCpio)
	landed := map[string]string{} // path -> the literal name of the file that landed there
	f, err := os.Open(initrd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f) // multistream: both members
	if err != nil {
		t.Fatal(err)
	}
	cr := archive.NewCpioReader(zr)
	for {
		e, err := cr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if l, _ := r.Resolve(e); l.Path != "" && e.Type == archive.TypeRegular && e.Size > 0 && strings.HasSuffix(e.Name, ".conflist") {
			data, _ := io.ReadAll(cr)
			landed[l.Path] = string(data)
		}
	}
	for name, at := range aliasLands {
		if !strings.HasSuffix(landed[at], name) {
			t.Errorf("the resolver puts no %s at %s, where the kernel does", name, at)
		}
		if line := got[at]; line != "" {
			sum := sha256.Sum256([]byte(landed[at]))
			if !strings.Contains(line, hex.EncodeToString(sum[:])) {
				t.Errorf("/%s in the guest is not the file the resolver put there: %s", at, line)
			}
		}
	}
	types := map[byte]archive.Type{'f': archive.TypeRegular, 'd': archive.TypeDir, 'l': archive.TypeSymlink, 'p': archive.TypeFifo}
	var extra []string
	for p, line := range got {
		typ, target, ok := r.Lstat(p)
		if !ok {
			extra = append(extra, "/"+p)
			continue
		}
		if want, known := types[line[0]]; known && want != typ {
			t.Errorf("/%s: the guest has %q, the resolver a %s", p, line, typ)
		}
		if typ == archive.TypeSymlink && line != "l|"+target+"|/"+p {
			t.Errorf("/%s: the guest has %q, the resolver a symlink to %s", p, line, target)
		}
	}
	sort.Strings(extra)
	for _, p := range extra {
		if strings.Contains(p, "alias") || strings.HasPrefix(p, "/etc/") {
			t.Errorf("the guest has %s, which the resolver has not", p)
		}
	}
	t.Logf("the resolver agrees with the kernel on the %d paths of the initrd; the guest also has %v (the kernel's built-in initramfs)", len(got)-len(extra), extra)
}
