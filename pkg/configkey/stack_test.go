package configkey

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func names(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

func TestStackOrder(t *testing.T) {
	crio := Crio{DropIns: "etc/crio/crio.conf.d"}
	tests := []struct {
		name  string
		stack Stack
		files map[string]string
		want  []string
	}{
		{"crio: main, then drop-ins by name", crio, map[string]string{
			"etc/crio/crio.conf": "", "etc/crio/crio.conf.d/10-crio.conf": "", "etc/crio/crio.conf.d/02-crio.conf": "", "etc/crio/other.conf": "",
		}, []string{"etc/crio/crio.conf", "etc/crio/crio.conf.d/02-crio.conf", "etc/crio/crio.conf.d/10-crio.conf"}},
		{"crio: a directory's files where Walk meets it", crio, map[string]string{
			"etc/crio/crio.conf.d/a.conf": "", "etc/crio/crio.conf.d/a/b": "", "etc/crio/crio.conf.d/a-": "",
		}, []string{"etc/crio/crio.conf.d/a/b", "etc/crio/crio.conf.d/a-", "etc/crio/crio.conf.d/a.conf"}},
		{"crio: no main file", crio, map[string]string{"etc/crio/crio.conf.d/1": ""}, []string{"etc/crio/crio.conf.d/1"}},
		{"containerd: imports breadth first, globs sorted, relative to the importer", ContainerdStack{}, map[string]string{
			"etc/containerd/config.toml":     "imports = [\"/etc/containerd/conf.d/*.toml\", \"site.toml\"]\n",
			"etc/containerd/conf.d/b.toml":   "imports = [\"../config.toml\", \"c.toml\"]\n",
			"etc/containerd/conf.d/a.toml":   "",
			"etc/containerd/conf.d/c.toml":   "",
			"etc/containerd/site.toml":       "",
			"etc/containerd/conf.d/x.tomlno": "",
		}, []string{"etc/containerd/config.toml", "etc/containerd/conf.d/a.toml", "etc/containerd/conf.d/b.toml", "etc/containerd/conf.d/c.toml", "etc/containerd/site.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string][]byte{}
			for n, s := range tt.files {
				files[n] = []byte(s)
			}
			main := "etc/crio/crio.conf"
			if _, ok := tt.stack.(ContainerdStack); ok {
				main = "etc/containerd/config.toml"
			}
			got, err := tt.stack.Order(main, files)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := (ContainerdStack{}).Order("c", map[string][]byte{"c": []byte("imports = [\"/gone.toml\"]")}); err == nil {
		t.Error("a missing import: no error (containerd fails to start)")
	}
}

func files(kv ...string) []File {
	var out []File
	for i := 0; i < len(kv); i += 2 {
		out = append(out, File{kv[i], []byte(kv[i+1])})
	}
	return out
}

func TestCNIDirs(t *testing.T) {
	crio := Crio{DropIns: "d"}
	tests := []struct {
		name  string
		stack Stack
		files []File
		want  []Setting
	}{
		{"v1 default", ContainerdStack{}, files("c", "root = \"/x\"\n"),
			[]Setting{{Key: Path{"plugins", "cri", "cni", "conf_dir"}, Value: "/etc/cni/net.d"}}},
		{"v1 short ID", ContainerdStack{}, files("c", "[plugins.cri.cni]\nconf_dir = \"/etc/cni/net.mk\"\n"),
			[]Setting{{Key: Path{"plugins", "cri", "cni", "conf_dir"}, File: "c", Value: "/etc/cni/net.mk", Found: true}}},
		{"v1 ignores the full ID", ContainerdStack{}, files("c", "[plugins.\"io.containerd.grpc.v1.cri\".cni]\nconf_dir = \"/x\"\n"),
			[]Setting{{Key: Path{"plugins", "cri", "cni", "conf_dir"}, Value: "/etc/cni/net.d"}}},
		{"v2 with a runtime's own", ContainerdStack{}, files("c", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\nconf_dir = \"/a\"\n"+
			"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\nruntime_type = \"x\"\n"+
			"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.kata]\ncni_conf_dir = \"/etc/kata/net.d\"\n"), []Setting{
			{Key: Path{"plugins", "io.containerd.grpc.v1.cri", "cni", "conf_dir"}, File: "c", Value: "/a", Found: true},
			{Key: Path{"plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes", "kata", "cni_conf_dir"}, File: "c", Value: "/etc/kata/net.d", Found: true},
		}},
		{"v2 import replaces the plugin's table", ContainerdStack{}, files(
			"c", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\nconf_dir = \"/a\"\n",
			"i", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\nsnapshotter = \"native\"\n"),
			[]Setting{{Key: Path{"plugins", "io.containerd.grpc.v1.cri", "cni", "conf_dir"}, File: "i", Value: "/etc/cni/net.d"}}},
		{"v3 runtime plugin", ContainerdStack{}, files("c", "version = 3\n[plugins.\"io.containerd.cri.v1.runtime\".cni]\nconf_dir = \"/v3\"\n"+
			"[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc]\ncni_conf_dir = \"/r\"\n"+
			"[plugins.\"io.containerd.grpc.v1.cri\".cni]\nconf_dir = \"/ignored\"\n"), []Setting{
			{Key: Path{"plugins", "io.containerd.cri.v1.runtime", "cni", "conf_dir"}, File: "c", Value: "/v3", Found: true},
			{Key: Path{"plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes", "runc", "cni_conf_dir"}, File: "c", Value: "/r", Found: true},
		}},
		{"crio default", crio, files("crio.conf", "[crio.network]\nplugin_dirs = []\n"),
			[]Setting{{Key: Path{"crio", "network", "network_dir"}, Value: "/etc/cni/net.d/"}}},
		{"crio later drop-in wins, key by key", crio, files(
			"crio.conf", "[crio.network]\nnetwork_dir = \"/a\"\n",
			"d/02-site", "[crio.network]\nnetwork_dir = \"/etc/cni/net.d\"\n",
			"d/10-pkg", "[crio.network]\nplugin_dirs = [\"/x\"]\n",
			"d/20-pkg", "[crio.network]\nnetwork_dir = \"/etc/cni/net.pkg\"\n",
			"d/30-pkg", "[crio.image]\npause_image = \"p\"\n"),
			[]Setting{{Key: Path{"crio", "network", "network_dir"}, File: "d/20-pkg", Value: "/etc/cni/net.pkg", Found: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CNIDirs(tt.stack, tt.files)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestOverridesCrioDeb: the cri-o deb's own 10-crio.conf, read after a
// site file that manages what minikube manages, decides none of those
// keys today; a bump that sets one is named with both files.
func TestOverridesCrioDeb(t *testing.T) {
	deb, err := os.ReadFile("../../testdata/packages/upstream/cri-o-deb-v1.35.0/root/etc/crio/crio.conf.d/10-crio.conf")
	if err != nil {
		t.Fatal(err)
	}
	const site = "[crio.image]\npause_image = \"registry.k8s.io/pause:3.10\"\n[crio.runtime]\ncgroup_manager = \"cgroupfs\"\nconmon_cgroup = \"pod\"\n" +
		"default_sysctls = [\"net.ipv4.ip_unprivileged_port_start=0\"]\n"
	var managed []Path
	for _, k := range []string{"crio.image.pause_image", "crio.runtime.cgroup_manager", "crio.runtime.conmon_cgroup", "crio.runtime.default_sysctls", "crio.network.network_dir"} {
		p, err := ParsePath(k)
		if err != nil {
			t.Fatal(err)
		}
		managed = append(managed, p)
	}
	crio := Crio{DropIns: "etc/crio/crio.conf.d"}
	image := map[string][]byte{"etc/crio/crio.conf.d/02-crio.conf": []byte(site), "etc/crio/crio.conf.d/10-crio.conf": deb}
	order, err := crio.Order("etc/crio/crio.conf", image)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Overrides(crio, order, "etc/crio/crio.conf.d/02-crio.conf", managed)
	if err != nil || len(got) != 0 {
		t.Fatalf("the deb as it is: %v, %v", got, err)
	}
	image["etc/crio/crio.conf.d/10-crio.conf"] = bytes.Replace(deb, []byte("default_runtime = \"crun\"\n"), []byte("default_runtime = \"crun\"\ncgroup_manager = \"systemd\"\n"), 1)
	if bytes.Equal(image["etc/crio/crio.conf.d/10-crio.conf"], deb) {
		t.Fatal("the deb's file changed: no default_runtime line to set cgroup_manager after")
	}
	if order, err = crio.Order("etc/crio/crio.conf", image); err != nil {
		t.Fatal(err)
	}
	got, err = Overrides(crio, order, "etc/crio/crio.conf.d/02-crio.conf", managed)
	if err != nil {
		t.Fatal(err)
	}
	want := []Override{{Key: Path{"crio", "runtime", "cgroup_manager"}, Site: "etc/crio/crio.conf.d/02-crio.conf", File: "etc/crio/crio.conf.d/10-crio.conf", Value: "systemd", Found: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestOverridesContainerdTable: an import that has the CRI's table but
// not the key the site sets takes it back to the default.
func TestOverridesContainerdTable(t *testing.T) {
	fs := files("c", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\nconf_dir = \"/a\"\n",
		"i", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\nsnapshotter = \"native\"\n",
		"j", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\nsnapshotter = \"overlayfs\"\n")
	key := Path{"plugins", "io.containerd.grpc.v1.cri", "cni", "conf_dir"}
	got, err := Overrides(ContainerdStack{}, fs, "c", []Path{key})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Override{{Key: key, Site: "c", File: "j"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestOverridesSiteCommented: minikube's 02-crio.conf ships its keys
// commented out and sets them at start: a later file that sets one is
// named all the same; an earlier one (crio.conf) is not.
func TestOverridesSiteCommented(t *testing.T) {
	fs := files("crio.conf", "[crio.runtime]\ncgroup_manager = \"systemd\"\n",
		"d/02-crio.conf", "[crio.image]\n# pause_image = \"\"\n\n[crio.network]\n# cni_default_network = \"\"\n\n[crio.runtime]\n# cgroup_manager = \"\"\n",
		"d/10-crio.conf", "[crio.network]\ncni_default_network = \"crio\"\n")
	keys := []Path{{"crio", "runtime", "cgroup_manager"}, {"crio", "network", "cni_default_network"}}
	got, err := Overrides(Crio{DropIns: "d"}, fs, "d/02-crio.conf", keys)
	if err != nil {
		t.Fatal(err)
	}
	want := []Override{{Key: keys[1], Site: "d/02-crio.conf", File: "d/10-crio.conf", Value: "crio", Found: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
