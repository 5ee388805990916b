package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/docblock"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// TestRecipeInitrdMkinitramfs runs docs/recipes.md's initrd blocks on an
// initrd Debian's mkinitramfs wrote (zstd, an early microcode segment:
// mkinitramfsInitrd), as testdata/script/recipe_initrd.txtar runs them on
// one made with cpio and zstd: audit finds /etc/crictl.yaml, apply's
// output audits clean and lsinitramfs, initramfs-tools' own reader, still
// lists the microcode and what apply added.
func TestRecipeInitrdMkinitramfs(t *testing.T) {
	if testing.Short() {
		t.Skip("mkinitramfs takes a minute: not with -short")
	}
	archivetest.RequireTool(t, "lsinitramfs")
	dir := t.TempDir()
	crictl := filepath.Join(dir, "crictl.yaml")
	mustOK(t, os.WriteFile(crictl, []byte("runtime-endpoint: unix:///run/containerd/containerd.sock\n"), 0o644))
	img, _ := mkinitramfsInitrd(t, dir, crictl, "zstd")

	work := filepath.Join(dir, "work")
	mustOK(t, os.MkdirAll(work, 0o755))
	mustOK(t, os.Rename(img, filepath.Join(work, "initrd.img")))
	rules, err := filepath.Abs(filepath.Join("..", "..", "rules"))
	mustOK(t, err)
	mustOK(t, os.Symlink(rules, filepath.Join(work, "rules")))
	bin := binary(t)
	env := []string{"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"), "LC_ALL=C", "HOME=" + work, "TMPDIR=" + dir}

	run := func(block string) result {
		t.Helper()
		code, err := docblock.Block(filepath.Join("..", ".."), block)
		mustOK(t, err)
		cmd := exec.Command("sh", "-e", "-c", code)
		cmd.Dir, cmd.Env = work, env
		return runBinary(t, cmd)
	}
	r := run("recipe-initrd-audit")
	if r.code != 1 || !regexp.MustCompile(`(?m)^-- segment 2 at offset \d+: \d+ bytes, zstd, \d+ entries$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^\w+ +etc/crictl.yaml .*rule containerd-crictl,cri-dockerd-crictl,crio-crictl \(strip\)`).MatchString(r.stdout) {
		t.Fatalf("the audit block: exit %d, want 1 with two segments and etc/crictl.yaml\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = run("recipe-initrd-apply")
	if r.code != 0 {
		t.Fatalf("the apply block: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{`(?m)^removed +etc/crictl.yaml `, `(?m)^clean: nothing offends in \d+ entries$`,
		`(?m)^kernel/x86/microcode/GenuineIntel.bin$`, `(?m)^usr/share/minikube/rootfs-trim/index.json$`} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("the apply block prints no %s:\n%s", want, r.stdout)
		}
	}
}
