package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// TestAppliedAway: apply takes away a link its boot_runtime rule strips
// and what a preset file read after its own (or none) enables; a preset
// file that sorts before it, or hides it by name, apply leaves in force.
func TestAppliedAway(t *testing.T) {
	set, err := rules.Load("../../rules")
	if err != nil {
		t.Fatal(err)
	}
	link := func(p string) enablement.Enabler { return enablement.Enabler{Unit: "crio.service", Link: p} }
	preset := func(file string) enablement.Enabler {
		return enablement.Enabler{Unit: "crio.service", Preset: &enablement.PresetRule{Action: enablement.Enable, Pattern: "crio.service", File: file}}
	}
	cases := map[string]enablement.Enabler{
		"link in /etc":              link("etc/systemd/system/multi-user.target.wants/crio.service"),
		"link in /usr/lib":          link("usr/lib/systemd/system/sockets.target.requires/crio.service"),
		"link elsewhere":            link("usr/share/crio.service"),
		"no preset line":            preset(""),
		"a later preset file":       preset("usr/lib/systemd/system-preset/90-crio.preset"),
		"apply's own":               preset(rules.PresetPath),
		"an earlier preset file":    preset("etc/systemd/system-preset/0-site.preset"),
		"one that hides apply's":    preset("etc/systemd/system-preset/00-rootfs-trim.preset"),
		"the default one, sorted 0": preset("usr/lib/systemd/system-preset/00-aaa.preset"),
	}
	got := map[string]bool{}
	for name, e := range cases {
		got[name] = appliedAway(set, e)
	}
	want := map[string]bool{
		"link in /etc": true, "link in /usr/lib": true, "link elsewhere": false,
		"no preset line": true, "a later preset file": true, "apply's own": true,
		"an earlier preset file": false, "one that hides apply's": false, "the default one, sorted 0": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("appliedAway (-want +got):\n%s", diff)
	}
}

// TestRuntimeFindings: check names every runtime unit the image starts at
// boot, with its package and what starts it: an error where the policy
// forbids it and apply leaves it, a note where apply takes it away, a
// note where the policy (or the lack of one) allows it.
func TestRuntimeFindings(t *testing.T) {
	set, err := rules.Load("../../rules")
	if err != nil {
		t.Fatal(err)
	}
	noPolicy := *set
	noPolicy.BootRuntime, noPolicy.BootRuntimeRule = nil, nil
	const (
		crio      = "usr/lib/systemd/system/crio.service"
		site      = "etc/systemd/system-preset/0-site.preset"
		ctd       = "usr/lib/systemd/system/containerd.service"
		ctdLink   = "etc/systemd/system/multi-user.target.wants/containerd.service"
		socket    = "usr/lib/systemd/system/docker.socket"
		toService = "[Install]\nWantedBy=multi-user.target\n"
	)
	policy := "; the policy allows docker: " + set.BootRuntime.Reason + "; "
	type finding struct {
		Severity                     rules.Severity
		Check, Path, Package, Reason string
	}
	cases := []struct {
		name  string
		set   *rules.Set
		files map[string]string
		want  []finding
	}{{
		name:  "forbidden, left enabled: an error",
		set:   set,
		files: map[string]string{crio: toService, site: "enable crio.service\n"},
		want: []finding{{rules.Error, trim.CheckRuntimeEnabled, site, "crio-bin",
			"crio.service (crio) starts at boot: preset " + site + ":1: enable crio.service" + policy +
				"apply leaves it enabled: its preset file is read before apply's " + rules.PresetPath}},
	}, {
		name:  "forbidden, taken away by apply: notes",
		set:   set,
		files: map[string]string{ctd: toService, ctdLink: "->/" + ctd},
		want: []finding{{rules.Note, trim.CheckRuntimeEnabled, ctdLink, "containerd-bin",
			"containerd.service (containerd) starts at boot: link " + ctdLink + policy + "apply takes it away: it strips the link"},
			{rules.Note, trim.CheckRuntimeEnabled, ctd, "containerd-bin",
				"containerd.service (containerd) starts at boot: preset-all (no preset line names it)" + policy +
					"apply takes it away: " + rules.PresetPath + ", read first, disables it"}},
	}, {
		name:  "allowed: a note",
		set:   set,
		files: map[string]string{socket: "[Install]\nWantedBy=sockets.target\n"},
		want: []finding{{rules.Note, trim.CheckRuntimeAllowed, socket, "docker-bin",
			"docker.socket (docker) starts at boot: preset-all (no preset line names it)"}},
	}, {
		name:  "no policy: a note",
		set:   &noPolicy,
		files: map[string]string{crio: toService, site: "enable crio.service\n"},
		want: []finding{{rules.Note, trim.CheckRuntimeAllowed, site, "crio-bin",
			"crio.service (crio) starts at boot: preset " + site + ":1: enable crio.service"}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			root, list := filepath.Join(dir, "root"), filepath.Join(dir, "files.txt")
			for name, data := range c.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if target, ok := strings.CutPrefix(data, "->"); ok {
					err = os.Symlink(target, p)
				} else {
					err = os.WriteFile(p, []byte(data), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			owned := "crio-bin,./" + crio + "\ncontainerd-bin,./" + ctd + "\ndocker-bin,./" + socket + "\n"
			if err := os.WriteFile(list, []byte(owned), 0o644); err != nil {
				t.Fatal(err)
			}
			o := owners.New()
			if err := o.ReadFileList(list); err != nil {
				t.Fatal(err)
			}
			found, err := runtimeFindings(c.set, Input{Path: root, FileList: list}, o, trim.NewBootCollector())
			if err != nil {
				t.Fatal(err)
			}
			var got []finding
			for _, f := range found {
				got = append(got, finding{f.Severity, f.Check, f.Path, f.Package, f.Reason})
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("runtimeFindings (-want +got):\n%s", diff)
			}
		})
	}
}
