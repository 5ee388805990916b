package configkey

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	cri := Remove{Values: []string{"cri"}}
	tests := []struct {
		name, format, key string
		change            Change
		in, out, value    string // out "" : nothing to change
	}{
		{"v1 only item", "containerd", "disabled_plugins", cri,
			"# c\ndisabled_plugins = [\"cri\"] # why\n\n#root = 1\n", "# c\ndisabled_plugins = [] # why\n\n#root = 1\n", `["cri"]`},
		{"v1 first of two", "containerd", "disabled_plugins", cri,
			"disabled_plugins = [ 'cri',  \"aufs\" ]\n", "disabled_plugins = [ \"aufs\" ]\n", `["cri", "aufs"]`},
		{"v1 last of two, trailing comma", "containerd", "disabled_plugins", cri,
			"disabled_plugins = [\n  \"aufs\",\n  \"cri\",\n]\n", "disabled_plugins = [\n  \"aufs\",\n]\n", `["aufs", "cri"]`},
		{"v2 full ID", "containerd", "disabled_plugins", cri,
			"version = 2\ndisabled_plugins = [\"cri\", \"io.containerd.grpc.v1.cri\"]\n", "version = 2\ndisabled_plugins = [\"cri\"]\n", `["cri", "io.containerd.grpc.v1.cri"]`},
		{"v3 split CRI", "containerd", "disabled_plugins", cri,
			"version = 3\ndisabled_plugins = [\"io.containerd.cri.v1.images\", \"x\", \"io.containerd.cri.v1.runtime\"]\n", "version = 3\ndisabled_plugins = [\"x\"]\n",
			`["io.containerd.cri.v1.images", "x", "io.containerd.cri.v1.runtime"]`},
		{"v4 split CRI, as containerd 2.3 writes it", "containerd", "disabled_plugins", cri,
			"version = 4\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\", \"io.containerd.cri.v1.runtime\"]\n", "version = 4\ndisabled_plugins = []\n",
			`["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime"]`},
		{"v1 full IDs, which containerd 2.x also reads", "containerd", "disabled_plugins", cri,
			"disabled_plugins = [\"io.containerd.grpc.v1.cri\", \"aufs\", \"io.containerd.cri.v1.images\"]\n", "disabled_plugins = [\"aufs\"]\n",
			`["io.containerd.grpc.v1.cri", "aufs", "io.containerd.cri.v1.images"]`},
		{"v2 runtime plugin, which containerd 2.x reads", "containerd", "disabled_plugins", cri,
			"version = 2\ndisabled_plugins = [\"io.containerd.cri.v1.runtime\"]\n", "version = 2\ndisabled_plugins = []\n", `["io.containerd.cri.v1.runtime"]`},
		{"v2 CRI enabled", "containerd", "disabled_plugins", cri, "version = 2\ndisabled_plugins = []\n", "", `[]`},
		{"absent", "containerd", "disabled_plugins", cri, "root = \"/x\"\n", "", ``},
		{"plain toml keeps cri's spelling", "toml", "disabled_plugins", cri, "version = 2\ndisabled_plugins = [\"cri\"]\n", "version = 2\ndisabled_plugins = []\n", `["cri"]`},
		{"set in a table", "toml", `plugins."io.containerd.grpc.v1.cri".cni.conf_dir`, Set{Value: "/etc/cni/net.d"},
			"[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = \"/opt\"\n  conf_dir = '/etc/cni/net.mk'   # minikube\n",
			"[plugins.\"io.containerd.grpc.v1.cri\".cni]\n  bin_dir = \"/opt\"\n  conf_dir = \"/etc/cni/net.d\"   # minikube\n", `"/etc/cni/net.mk"`},
		{"set already so", "toml", "a.b", Set{Value: int64(2)}, "[a]\nb = 2\n", "", `2`},
		{"set absent in a table", "toml", "crio.network.network_dir", Set{Value: "/etc/cni/net.d"},
			"[crio]\nx = 1\n\n[crio.network]\nplugin_dirs = []\n\n[crio.image]\n", "[crio]\nx = 1\n\n[crio.network]\nplugin_dirs = []\nnetwork_dir = \"/etc/cni/net.d\"\n\n[crio.image]\n", ``},
		{"set absent at the root", "toml", "version", Set{Value: int64(2)}, "# c\n[a]\nb = 1\n", "# c\nversion = 2\n[a]\nb = 1\n", ``},
		{"set in an inline table", "toml", "a.b.c", Set{Value: true}, "a = { b = { c = false }, d = 1 }\n", "a = { b = { c = true }, d = 1 }\n", `false`},
		{"unset a line", "toml", "a.b", Unset{}, "[a]\nb = 1 # x\nc = 2\n", "[a]\nc = 2\n", `1`},
		{"unset in an inline table", "toml", "a.b", Unset{}, "a = { b = 1, c = 2 }\n", "a = { c = 2 }\n", `1`},
		{"json remove", "json", "plugins", Remove{Values: []string{"x"}}, `{"plugins": ["x", "y"]}`, `{"plugins": ["y"]}`, `["x", "y"]`},
		{"json set nested", "json", "ipam.subnet", Set{Value: "10.244.0.0/16"},
			"{\n  \"ipam\": {\"type\": \"host-local\", \"subnet\": \"10.88.0.0/16\"}\n}\n", "{\n  \"ipam\": {\"type\": \"host-local\", \"subnet\": \"10.244.0.0/16\"}\n}\n", `"10.88.0.0/16"`},
		{"json set absent", "json", "cniVersion", Set{Value: "1.0.0"}, "{\"name\": \"k8s\"}", "{\"name\": \"k8s\", \"cniVersion\": \"1.0.0\"}", ``},
		{"json unset the last member", "json", "b", Unset{}, `{"a": 1,  "b": 2}`, `{"a": 1}`, `2`},
		{"json unset the first member", "json", "a", Unset{}, `{"a": 1,  "b": 2}`, `{"b": 2}`, `1`},
		// The places json.Decoder's offsets give (jsonScanner): past an
		// escaped quote, a nested list and object, spaces around ':' and ','.
		{"json set after an escaped quote", "json", "b", Set{Value: int64(2)}, `{"a": "x\"}", "b": 1}`, `{"a": "x\"}", "b": 2}`, `1`},
		{"json set after nested values", "json", "b", Set{Value: false},
			"{ \"o\" : {\"p\": [1, {\"q\": []}]} ,\n \"b\" :true }", "{ \"o\" : {\"p\": [1, {\"q\": []}]} ,\n \"b\" :false }", `true`},
		{"json set in an empty object", "json", "ipam.subnet", Set{Value: "10.244.0.0/16"}, `{"ipam": { }}`, `{"ipam": { "subnet": "10.244.0.0/16"}}`, ``},
		{"json remove from a spaced list", "json", "plugins", Remove{Values: []string{"x"}}, `{"plugins":[ "x" ,"y" ]}`, `{"plugins":[ "y" ]}`, `["x", "y"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := ParsePath(tt.key)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Rule{Format: Formats[tt.format], Key: key, Change: tt.change}.Check([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.out, string(res.Out)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.value, res.Show()); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckRefuses(t *testing.T) {
	remove := Remove{Values: []string{"x"}}
	tests := []struct {
		name, format, key, in string
		change                Change
		want                  string
	}{
		{"not a list", "toml", "a", "a = 1\n", remove, "not a list"},
		{"list of tables", "toml", "a", "a = [{b = 1}]\n", remove, "list of lists or tables"},
		{"bad toml", "toml", "a", "a = [\n", remove, "toml:"},
		{"bad json", "json", "a", "{", remove, "json:"},
		{"a list at the top", "json", "a", "[1]", Set{Value: 1}, "cannot unmarshal array"},
		// encoding/json reads the last of two: taking it out leaves the first.
		{"duplicate json key", "json", "x", `{"x": 1, "x": 2}`, Unset{}, "does not hold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Rule{Format: Formats[tt.format], Key: Path{tt.key}, Change: tt.change}.Check([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestContainerdIOConfigOnlyKeyChanges: on the file containerd.io ships
// (../shared/fixtures), removing cri changes the bytes of the list and
// nothing else: the license header, the commented defaults, the blank
// lines are byte for byte as they were.
func TestContainerdIOConfigOnlyKeyChanges(t *testing.T) {
	in, err := os.ReadFile("testdata/containerd.io-config.toml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Rule{Format: Containerd{}, Key: Path{"disabled_plugins"}, Change: Remove{Values: []string{"cri"}}}.Check(in)
	if err != nil {
		t.Fatal(err)
	}
	const was, now = `disabled_plugins = ["cri"]`, `disabled_plugins = []`
	i := strings.Index(string(in), was)
	if i < 0 || strings.Count(string(in), was) != 1 {
		t.Fatalf("fixture has no single %q", was)
	}
	want := string(in[:i]) + now + string(in[i+len(was):])
	if diff := cmp.Diff(want, string(res.Out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParsePath(t *testing.T) {
	for in, want := range map[string]Path{
		"disabled_plugins": {"disabled_plugins"},
		`plugins."io.containerd.grpc.v1.cri".cni.conf_dir`: {"plugins", "io.containerd.grpc.v1.cri", "cni", "conf_dir"},
		`a . 'b c'`: {"a", "b c"},
	} {
		got, err := ParsePath(in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", in, diff)
		}
	}
	if got := (Path{"plugins", "io.containerd.grpc.v1.cri", "b c"}).String(); got != `plugins."io.containerd.grpc.v1.cri"."b c"` {
		t.Errorf("String: %s", got)
	}
	for _, bad := range []string{"", "a =", "a.", "a b"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
