package check

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
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
