package configkey

import (
	"bytes"
	"os"
	"testing"
)

// FuzzCheck: on any file, a rule's check returns an error or a result;
// never a panic. A changed file reads back, and checking it again
// changes nothing more (Check verifies it), and starts as data does
// before the first changed byte.
func FuzzCheck(f *testing.F) {
	if b, err := os.ReadFile("testdata/containerd.io-config.toml"); err == nil {
		f.Add(b, uint8(0))
	}
	for _, s := range []string{
		"version = 2\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\", 'x',]\n[a]\nb = { c = 1, d = [1, 2] }\n",
		"version = 3\n[[x]]\na = 1\n[plugins.\"a\".b]\nc = \"\"\"x\"\"\"\n",
		`{"cniVersion": "1.0.0", "plugins": [{"type": "bridge"}, "x"], "a": {"b": "\"x\\"}}`,
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(7))
	}
	keys := []Path{{"disabled_plugins"}, {"a", "b", "c"}, {"plugins"}, {"a", "b"}, {"x"}, {"version"}}
	changes := []Change{Remove{Values: []string{"cri", "x"}}, Set{Value: "v"}, Unset{}}
	formats := []Format{Containerd{}, JSON{}}
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		r := Rule{Format: formats[int(pick)%len(formats)], Key: keys[int(pick/2)%len(keys)], Change: changes[int(pick/16)%len(changes)]}
		res, err := r.Check(data)
		if err != nil || res.Out == nil {
			return
		}
		again, err := r.Check(res.Out)
		if err != nil || again.Out != nil {
			t.Fatalf("%s: checked again: %v, changes %q", r, err, again.Out)
		}
		if bytes.Equal(res.Out, data) {
			t.Fatalf("%s: Out is the input", r)
		}
	})
}

// FuzzStack: on any pair of files, a stack's order, CNI directories and
// overrides come back or fail; never a panic. The order holds each file
// once, main first; an override names a file read after the site's.
func FuzzStack(f *testing.F) {
	f.Add([]byte("version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\", \"x.toml\"]\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\nconf_dir = \"/a\"\n"),
		[]byte("[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.k]\ncni_conf_dir = \"/k\"\nimports = [\"../config.toml\"]\n"))
	f.Add([]byte("[crio.network]\nnetwork_dir = \"/a\"\n"), []byte("[crio.runtime]\ncgroup_manager = \"systemd\"\n"))
	managed := []Path{{"crio", "network", "network_dir"}, {"crio", "runtime", "cgroup_manager"}, {"plugins", "io.containerd.grpc.v1.cri", "cni", "conf_dir"}}
	f.Fuzz(func(t *testing.T, main, other []byte) {
		image := map[string][]byte{"etc/containerd/config.toml": main, "etc/containerd/conf.d/a.toml": other,
			"etc/crio/crio.conf": main, "etc/crio/crio.conf.d/10-x": other}
		for _, tc := range []struct {
			stack Stack
			main  string
		}{{ContainerdStack{}, "etc/containerd/config.toml"}, {Crio{DropIns: "etc/crio/crio.conf.d"}, "etc/crio/crio.conf"}} {
			order, err := tc.stack.Order(tc.main, image)
			if err != nil {
				continue
			}
			seen := map[string]bool{}
			for _, f := range order {
				if seen[f.Name] {
					t.Fatalf("%s read twice", f.Name)
				}
				seen[f.Name] = true
			}
			if order[0].Name != tc.main {
				t.Fatalf("order starts at %s", order[0].Name)
			}
			if _, err := CNIDirs(tc.stack, order); err != nil {
				continue
			}
			over, err := Overrides(tc.stack, order, tc.main, managed)
			for _, o := range over {
				if err != nil || o.File == tc.main || o.Site != tc.main {
					t.Fatalf("override %+v, %v", o, err)
				}
			}
		}
	})
}
