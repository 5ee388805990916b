package boot

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unitDir is where the overlay installs the boot unit and the runtimes'
// drop-ins, relative to the overlay and to the image's root.
const unitDir = "usr/lib/systemd/system"

// TestUnitVerify runs `systemd-analyze verify` on the overlay's units,
// installed with the overlay into a scratch root (--root), as systemd in
// the image would load them: the boot unit, and each runtime unit the
// overlay has a drop-in for, so that the drop-ins are parsed too.
func TestUnitVerify(t *testing.T) {
	analyze := lookTool(t, "systemd-analyze", "apt-get install systemd")
	repo := repoRoot(t)
	overlay := filepath.Join(repo, "buildroot-overlay")
	root := t.TempDir()
	copyTree(t, overlay, root)
	units := overlayUnits(t, root)
	stubRuntimeUnits(t, root)
	if len(units) == 0 {
		t.Fatalf("no units in %s", filepath.Join(overlay, unitDir))
	}

	t.Run("verify", func(t *testing.T) {
		out, err := verify(analyze, root, units)
		t.Logf("systemd-analyze verify %s: %v\n%s", strings.Join(units, " "), err, out)
		checkVerify(t, err, out, root, units)
	})

	// The same run on a broken copy must complain: otherwise a silent
	// verify above proves nothing (an option ignored, another root read).
	t.Run("detects-errors", func(t *testing.T) {
		broken := t.TempDir()
		copyTree(t, root, broken)
		unit := filepath.Join(broken, unitDir, "rootfs-trim-render.service")
		data := readFile(t, unit)
		data = strings.Replace(data, "ExecStart=/usr/bin/rootfs-trim", "ExecStart=/usr/bin/rootfs-trim-missing", 1)
		data = strings.Replace(data, "[Service]\n", "[Service]\nNoSuchKey=1\n", 1)
		if err := os.WriteFile(unit, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := verify(analyze, broken, units)
		if err == nil {
			t.Errorf("verify passed a unit whose ExecStart does not exist:\n%s", out)
		}
		for _, want := range []string{"Unknown key 'NoSuchKey'", "/usr/bin/rootfs-trim-missing"} {
			if !strings.Contains(out, want) {
				t.Errorf("verify did not report %q:\n%s", want, out)
			}
		}
	})

	// The overlay ships no enablement link: the package's preset and
	// Buildroot's systemctl preset-all make it from WantedBy=, or the
	// unit never runs at boot.
	t.Run("enabled", func(t *testing.T) {
		systemctl := lookTool(t, "systemctl", "apt-get install systemd")
		if links, _ := filepath.Glob(filepath.Join(root, "etc", "systemd", "system", "*.wants", "*")); len(links) != 0 {
			t.Errorf("the overlay ships enablement links %v: the preset makes them", links)
		}
		preset := filepath.Join(repo, "buildroot", "package", "rootfs-trim", "50-rootfs-trim.preset")
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, presetPath)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, presetPath), readFileBytes(t, preset), 0o644); err != nil {
			t.Fatal(err)
		}
		presetAll(t, root)
		out, err := exec.Command(systemctl, "--root="+root, "is-enabled", "rootfs-trim-render.service").CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != "enabled" {
			t.Errorf("systemctl is-enabled rootfs-trim-render.service: %q (%v), want enabled", got, err)
		}
	})

	// verify accepts Before= and After= on a unit that does not exist (they
	// are soft), so a misspelt name would pass it: check that the boot unit
	// orders itself after minikube-automount (which mounts the disk the
	// record is on) and before every runtime unit of the ISO, and that it
	// renders the record.
	t.Run("ordering", func(t *testing.T) {
		unit := filepath.Join(root, unitDir, "rootfs-trim-render.service")
		after := unitSetting(t, unit, "Unit", "After")
		if !slices.Contains(after, "minikube-automount.service") {
			t.Errorf("After= %q does not name minikube-automount.service", after)
		}
		before := unitSetting(t, unit, "Unit", "Before")
		for _, u := range []string{"containerd.service", "crio.service", "docker.service", "cri-docker.service", "podman.service", "kubelet.service"} {
			if !slices.Contains(before, u) {
				t.Errorf("Before= %q does not name %s", before, u)
			}
		}
		// A socket unit is in sockets.target, which minikube-automount
		// comes after (through basic.target): Before= one is a cycle.
		for _, u := range before {
			if strings.HasSuffix(u, ".socket") {
				t.Errorf("Before= names the socket unit %s: an ordering cycle through sockets.target", u)
			}
		}
		if exec := unitSetting(t, unit, "Service", "ExecStart"); !slices.Contains(exec, "--from-record") {
			t.Errorf("ExecStart= %q does not render the record", exec)
		}
	})
}

// presetPath is where the rootfs-trim package installs its preset.
const presetPath = "usr/lib/systemd/system-preset/50-rootfs-trim.preset"

// presetAll enables the units of root as Buildroot does on every image
// (SYSTEMD_PRESET_ALL in its package/systemd/systemd.mk).
func presetAll(t *testing.T, root string) {
	t.Helper()
	systemctl := lookTool(t, "systemctl", "apt-get install systemd")
	if out, err := exec.Command(systemctl, "--root="+root, "preset-all").CombinedOutput(); err != nil {
		t.Fatalf("systemctl --root=%s preset-all: %v\n%s", root, err, out)
	}
}

// lookTool finds name or skips (fails under ROOTFS_TRIM_REQUIRE_TOOLS=1).
func lookTool(t *testing.T, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		missing(t, "%s not found (%s)", name, install)
	}
	return path
}

// overlayUnits lists the units to verify: the overlay's own, and the units
// its drop-ins extend.
func overlayUnits(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, unitDir))
	if err != nil {
		t.Fatal(err)
	}
	var units []string
	for _, e := range entries {
		units = append(units, strings.TrimSuffix(e.Name(), ".d"))
	}
	slices.Sort(units)
	return slices.Compact(units)
}

// stubRuntimeUnits installs what the image has and the overlay does not:
// rootfs-trim, and a minimal unit for each runtime the overlay has a
// drop-in for. verify checks that ExecStart= is executable, so empty
// executables stand in. DefaultDependencies=no keeps verify from wanting
// sysinit.target and the rest of a real system in the scratch root.
func stubRuntimeUnits(t *testing.T, root string) {
	t.Helper()
	exe := func(path string) {
		t.Helper()
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	unit := func(name, body string) {
		t.Helper()
		p := filepath.Join(root, unitDir, name)
		if _, err := os.Stat(p); err == nil {
			return // the overlay has it: verify the real one
		}
		text := "[Unit]\nDescription=boot test stand-in for " + name + "\nDefaultDependencies=no\n" + body
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe("usr/bin/rootfs-trim")
	dirs, _ := filepath.Glob(filepath.Join(root, unitDir, "*.d"))
	for _, d := range dirs {
		name := strings.TrimSuffix(filepath.Base(d), ".d")
		stem, kind, _ := strings.Cut(name, ".")
		switch kind {
		case "service":
			exe("usr/bin/" + stem)
			unit(name, fmt.Sprintf("[Service]\nExecStart=/usr/bin/%s\n", stem))
		case "socket":
			// A socket needs the service it activates.
			exe("usr/bin/" + stem)
			unit(stem+".service", fmt.Sprintf("[Service]\nExecStart=/usr/bin/%s\n", stem))
			unit(name, fmt.Sprintf("[Socket]\nListenStream=/run/%s/%s.sock\n", stem, stem))
		default:
			t.Fatalf("%s: a drop-in for a %s unit: teach the test to stand one in", d, kind)
		}
	}
}

// verify runs systemd-analyze verify on units in root. --man=no: the image
// has no man pages, so a man: link could never be checked there.
func verify(analyze, root string, units []string) (string, error) {
	args := append([]string{"verify", "--root=" + root, "--man=no", "--generators=no"}, units...)
	cmd := exec.Command(analyze, args...)
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_COLOR=0", "SYSTEMD_PAGER=", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// checkVerify fails on a non-zero exit, and on every line about our units:
// verify reports a bad key or value on a line of its own and still exits 0.
func checkVerify(t *testing.T, err error, out, root string, units []string) {
	t.Helper()
	if err != nil {
		t.Errorf("systemd-analyze verify: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		ours := strings.Contains(line, root) || strings.Contains(line, "rootfs-trim")
		for _, u := range units {
			ours = ours || strings.Contains(line, u)
		}
		if ours {
			t.Errorf("systemd-analyze verify: %s", line)
		} else {
			t.Logf("systemd-analyze verify (not about the overlay's units): %s", line)
		}
	}
}

// unitSetting returns the space-separated values of KEY= in [SECTION] of a
// unit file, across all its assignments.
func unitSetting(t *testing.T, path, section, key string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var values []string
	cur := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			cur = strings.Trim(line, "[]")
		case cur == section:
			k, v, ok := strings.Cut(line, "=")
			if ok && strings.TrimSpace(k) == key {
				values = append(values, strings.Fields(v)...)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return values
}
