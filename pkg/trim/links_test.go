package trim

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// TestDangling: the links an apply leaves dangling, with the shipped rules
// and containerd-bin's misplaced unit moving away. Targets resolve in the
// image (absolute from its root, relative from the link's directory, never
// above the root); the target may come after the link.
func TestDangling(t *testing.T) {
	const unit = "/etc/systemd/system/containerd.service"
	tests := []struct {
		name   string
		links  map[string]string // path -> target, before the unit
		after  map[string]string // after the unit
		wanted []string          // dangling link paths
	}{
		{name: "absolute", links: map[string]string{"etc/systemd/user/default.target.wants/containerd.service": unit},
			wanted: []string{"etc/systemd/user/default.target.wants/containerd.service"}},
		{name: "relative", links: map[string]string{"etc/systemd/user/default.target.wants/containerd.service": "../../system/containerd.service"},
			wanted: []string{"etc/systemd/user/default.target.wants/containerd.service"}},
		// one-cri-endpoint (boot_runtime) strips it: containerd is not the image's runtime.
		{name: "requires link of a forbidden runtime", links: map[string]string{"etc/systemd/system/kubelet.service.requires/containerd.service": unit}},
		// containerd-unit-enablement retargets it: touched by a rule, not left dangling.
		{name: "enablement link retargeted", links: map[string]string{"etc/systemd/system/multi-user.target.wants/containerd.service": unit}},
		{name: "above the root stays at the root", links: map[string]string{"a/l": "../../../../etc/systemd/system/containerd.service"},
			wanted: []string{"a/l"}},
		{name: "link after its target", after: map[string]string{"z/l": unit}, wanted: []string{"z/l"}},
		{name: "beneath what a rule took away", links: map[string]string{"z/l": unit + "/x"}, wanted: []string{"z/l"}},
		{name: "to the unit's new place", links: map[string]string{"z/l": "/usr/lib/systemd/system/containerd.service"}},
		{name: "to something else", links: map[string]string{"z/l": "/etc/systemd/system/other.service"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDecider(shippedRules(t), nil, nil)
			decide := func(e *archive.Entry) {
				t.Helper()
				if _, err := d.Decide(e); err != nil {
					t.Fatal(err)
				}
			}
			for p, target := range tc.links {
				decide(&archive.Entry{Name: p, Type: archive.TypeSymlink, Linkname: target, Mode: 0o777})
			}
			decide(&archive.Entry{Name: unit[1:], Type: archive.TypeRegular, Mode: 0o644})
			for p, target := range tc.after {
				decide(&archive.Entry{Name: p, Type: archive.TypeSymlink, Linkname: target, Mode: 0o777})
			}
			var got []string
			for _, l := range d.Dangling() {
				got = append(got, l.Path)
				if l.Rule == nil || l.Rule.Name != "containerd-unit-in-etc" {
					t.Errorf("%s: rule %v", l.Path, l.Rule)
				}
			}
			if diff := cmp.Diff(tc.wanted, got); diff != "" {
				t.Errorf("dangling (-want +got):\n%s", diff)
			}
		})
	}
}

// TestThroughDirectoryLinks: the policy is matched where the booted system
// sees an entry. A symlink at a directory the policy's paths lie in is a
// finding; entries beneath its in-tree target after it are matched at the
// path it gives them.
func TestThroughDirectoryLinks(t *testing.T) {
	type entry struct {
		name, link string // link: a symlink's target
	}
	tests := []struct {
		name    string
		entries []entry
		want    map[string]string // path -> alias ("" for the link itself)
	}{
		{name: "relative", entries: []entry{{"etc/cni", "../opt/evil"}, {"opt/evil/net.d/a.conflist", ""}, {"opt/evil/other", ""}},
			want: map[string]string{"etc/cni": "", "opt/evil/net.d/a.conflist": "etc/cni/net.d/a.conflist"}},
		{name: "absolute, at net.d", entries: []entry{{"etc/cni/net.d", "/srv/n"}, {"srv/n/a.conf", ""}, {"srv/n/.keep", ""}},
			want: map[string]string{"etc/cni/net.d": "", "srv/n/a.conf": "etc/cni/net.d/a.conf"}},
		{name: "never above the root", entries: []entry{{"etc/cni", "../../../../x"}, {"x/net.d/a.conf", ""}},
			want: map[string]string{"etc/cni": "", "x/net.d/a.conf": "etc/cni/net.d/a.conf"}},
		{name: "a link elsewhere is no finding", entries: []entry{{"usr/lib64", "lib"}, {"etc/alternatives/x", "/usr/bin/x"}},
			want: map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewClassifier(shippedRules(t), nil)
			c.Strict = true
			got := map[string]string{}
			for _, e := range tc.entries {
				ae := &archive.Entry{Name: e.name, Type: archive.TypeRegular}
				if e.link != "" {
					ae.Type, ae.Linkname = archive.TypeSymlink, e.link
				}
				v, err := c.Classify(ae)
				if err != nil {
					t.Fatal(err)
				}
				if v.Unhandled() {
					got[v.Path] = v.Alias
					if v.Through == "" {
						t.Errorf("%s: no link named", v.Path)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDanglingFromIndex: in an applied image the index says what the
// earlier apply took away; links to those paths are dangling because of
// it, and reported as such. A path a rule matches now stays that rule's.
func TestDanglingFromIndex(t *testing.T) {
	ix := &contract.Index{Version: contract.IndexVersion, Files: []contract.IndexFile{
		{Kind: contract.Removed, Name: "containerd-crictl", Source: "etc/crictl.yaml"},
		{Kind: contract.Relocated, Name: "containerd-unit-in-etc", Source: "etc/systemd/system/containerd.service", Dest: "usr/lib/systemd/system/containerd.service"},
		{Kind: contract.Deferred, Name: "containerd-net", Source: contract.DeferredPath("containerd+none", "etc/cni/net.d/10-containerd-net.conflist"), Dest: "etc/cni/net.d/10-containerd-net.conflist"},
		{Kind: contract.Removed, Name: "gone-from-the-rules", Source: "etc/old.conf"},
	}}
	links := map[string]string{
		"a/crictl":  "/etc/crictl.yaml",
		"a/unit":    "../etc/systemd/system/containerd.service",
		"a/net":     "/etc/cni/net.d/10-containerd-net.conflist",
		"a/old":     "/etc/old.conf",
		"a/moved":   "/usr/lib/systemd/system/containerd.service",
		"a/elsewhr": "/etc/other.conf",
	}
	d := NewDecider(shippedRules(t), nil, nil)
	for _, p := range []string{"a/crictl", "a/elsewhr", "a/moved", "a/net", "a/old", "a/unit"} {
		if _, err := d.Decide(&archive.Entry{Name: p, Type: archive.TypeSymlink, Linkname: links[p], Mode: 0o777}); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := ix.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := d.noteIndex(&b); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range d.Dangling() {
		if !l.Earlier {
			t.Errorf("%s: not marked as an earlier apply's", l.Path)
		}
		got[l.Path] = l.Rule.Name + " " + l.Gone
	}
	want := map[string]string{
		"a/crictl": "containerd-crictl etc/crictl.yaml",
		"a/unit":   "containerd-unit-in-etc etc/systemd/system/containerd.service",
		"a/net":    "containerd-net etc/cni/net.d/10-containerd-net.conflist",
		"a/old":    "gone-from-the-rules etc/old.conf",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dangling (-want +got):\n%s", diff)
	}
}
