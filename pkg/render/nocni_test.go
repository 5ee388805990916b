package render

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// crioIPv4Bridge is cri-o's contrib/cni/11-crio-ipv4-bridge.conflist, the
// bridge its static bundle's install script puts in /etc/cni/net.d.
const crioIPv4Bridge = `{
  "cniVersion": "1.0.0",
  "name": "crio",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "routes": [
            { "dst": "0.0.0.0/0" }
        ],
        "ranges": [
            [{ "subnet": "10.85.0.0/16" }]
        ]
      }
    }
  ]
}
`

// crioDualStackBridge is the 100-crio-bridge.conf older cri-o packages
// shipped, with an IPv6 range and route.
const crioDualStackBridge = `{
    "cniVersion": "0.3.1",
    "name": "crio",
    "type": "bridge",
    "bridge": "cni0",
    "isGateway": true,
    "ipMasq": true,
    "hairpinMode": true,
    "ipam": {
        "type": "host-local",
        "routes": [
            { "dst": "0.0.0.0/0" },
            { "dst": "1100:200::1/24" }
        ],
        "ranges": [
            [{ "subnet": "10.85.0.0/16" }],
            [{ "subnet": "1100:200::/24" }]
        ]
    }
}
`

// subnets lists every "subnet" and route "dst" of a CNI config.
func subnets(t *testing.T, data []byte) (subnets, dsts []string) {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, v := range x {
				if s, ok := v.(string); ok && k == "subnet" {
					subnets = append(subnets, s)
				}
				if s, ok := v.(string); ok && k == "dst" {
					dsts = append(dsts, s)
				}
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(v)
	return subnets, dsts
}

// --cni=false: the runtime's own bridge gets the pod CIDR (today's bug:
// cri-o's came back with its packaged 10.85.0.0/16), IPv6 ranges and
// routes go as minikube's configureAllBridgeCNIs drops them, cri-o's
// loopback stays disabled; a runtime without a bridge gets minikube's.
func TestNoClusterCNI(t *testing.T) {
	minikube, err := txtar.ParseFile(filepath.Join("testdata", "minikube-bridge.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var minikubeBridge string
	for _, f := range minikube.Files {
		if f.Name == "192.168.32.0/20" {
			minikubeBridge = string(f.Data)
		}
	}
	const cidr = "192.168.32.0/20"
	tests := []struct {
		name    string
		runtime string
		extra   map[string][2]string
		want    map[string]bool // files in etc/cni/net.d; true: a bridge with cidr
	}{
		{"crio, bundle bridge", "crio", map[string][2]string{
			"etc/cni/net.d/11-crio-ipv4-bridge.conflist": {"crio-bin", crioIPv4Bridge},
			"etc/cni/net.d/100-crio-bridge.conf":         {"", ""},
		}, map[string]bool{"11-crio-ipv4-bridge.conflist": true}},
		{"crio, dual-stack bridge", "crio", map[string][2]string{
			"etc/cni/net.d/100-crio-bridge.conf": {"crio-bin", crioDualStackBridge},
		}, map[string]bool{"100-crio-bridge.conf": true}},
		{"containerd, dual-stack bridge", "containerd", nil, map[string]bool{"10-containerd-net.conflist": true}},
		{"containerd, no bridge", "containerd", map[string][2]string{
			"etc/cni/net.d/10-containerd-net.conflist": {"", ""},
		}, map[string]bool{"1-k8s.conflist": false}},
		{"crio, no bridge", "crio", map[string][2]string{
			"etc/cni/net.d/100-crio-bridge.conf": {"", ""},
		}, map[string]bool{"1-k8s.conflist": false}},
		{"docker", "docker", nil, map[string]bool{"1-k8s.conflist": false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := appliedImageWith(t, filepath.Join("..", "..", "rules"), tc.extra)
			res, err := Render(Options{Root: root, Choice: choice(tc.runtime, "false", cidr)})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("notes: %q", res.Notes)
			entries, _ := os.ReadDir(filepath.Join(root, "etc/cni/net.d"))
			got := map[string]bool{}
			for _, e := range entries {
				if e.Name() != ".keep" {
					got[e.Name()] = tc.want[e.Name()]
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("/etc/cni/net.d (-want +got):\n%s", d)
			}
			for name, rewritten := range tc.want {
				data, _ := os.ReadFile(filepath.Join(root, "etc/cni/net.d", name))
				if !rewritten {
					if string(data) != minikubeBridge {
						t.Errorf("%s is not minikube's bridge for %s:\n%s", name, cidr, data)
					}
					continue
				}
				sn, dst := subnets(t, data)
				if d := cmp.Diff([]string{cidr}, sn); d != "" {
					t.Errorf("%s subnets (-want +got):\n%s", name, d)
				}
				for _, d := range dst {
					if strings.Contains(d, ":") {
						t.Errorf("%s keeps the IPv6 route %s", name, d)
					}
				}
			}
		})
	}
}

func TestRewriteBridge(t *testing.T) {
	tests := []struct {
		name, in string
		subnets  []string
		gateway  string
		err      string
	}{
		{"one line", `{"type": "bridge", "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.85.0.0/16"}]]}}`, []string{"10.244.0.0/16"}, "", ""},
		{"subnet and gateway (podman)", `{"plugins": [{"type": "bridge", "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.88.0.0/16", "gateway": "10.88.0.1"}]]}}]}`, []string{"10.244.0.0/16"}, "10.244.0.1", ""},
		{"plain subnet, range bounds dropped", `{"type": "bridge", "ipam": {"type": "host-local", "subnet": "10.1.0.0/16", "rangeStart": "10.1.0.10", "rangeEnd": "10.1.0.20"}}`, []string{"10.244.0.0/16"}, "", ""},
		{"IPv6 first", `{"type": "bridge", "ipam": {"type": "host-local", "ranges": [[{"subnet": "fd00::/64"}], [{"subnet": "10.85.0.0/16"}]]}}`, []string{"10.244.0.0/16"}, "", ""},
		{"no ipam", `{"type": "bridge"}`, nil, "", "no host-local subnet"},
		{"only IPv6", `{"type": "bridge", "ipam": {"type": "host-local", "ranges": [[{"subnet": "fd00::/64"}]]}}`, nil, "", "no host-local subnet"},
		{"not JSON", `{"type": "bridge",}`, nil, "", "not JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := rewriteBridge([]byte(tc.in), DefaultPodCIDR)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sn, _ := subnets(t, out)
			if d := cmp.Diff(tc.subnets, sn); d != "" {
				t.Errorf("subnets (-want +got):\n%s", d)
			}
			if tc.gateway != "" && !strings.Contains(string(out), `"gateway": "`+tc.gateway+`"`) {
				t.Errorf("gateway not %s:\n%s", tc.gateway, out)
			}
			if strings.Contains(string(out), "rangeStart") {
				t.Errorf("rangeStart of the old subnet kept:\n%s", out)
			}
		})
	}
}

// FuzzRewriteBridge: whatever the package shipped, the rewrite either
// refuses or gives JSON whose every subnet is the pod CIDR.
func FuzzRewriteBridge(f *testing.F) {
	f.Add(crioIPv4Bridge, "10.244.0.0/16")
	f.Add(crioDualStackBridge, "192.168.32.0/20")
	f.Add(containerdNet, "10.96.0.0/12")
	f.Fuzz(func(t *testing.T, conf, cidr string) {
		if validCIDR(cidr) != nil {
			return
		}
		out, err := rewriteBridge([]byte(conf), cidr)
		if err != nil {
			return
		}
		if err := checkJSON("x.conflist", out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var v any
		json.Unmarshal(out, &v)
		for _, s := range ipamSubnets(v) {
			if s != cidr {
				t.Fatalf("subnet %q left beside %q:\n%s", s, cidr, out)
			}
		}
	})
}

// ipamSubnets lists the subnets of every ipam section: the ones the rewrite
// owns (a "subnet" key elsewhere is not a pod network).
func ipamSubnets(x any) []string {
	var out []string
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if ipam, ok := v.(map[string]any); ok && k == "ipam" {
				if s, ok := ipam["subnet"].(string); ok {
					out = append(out, s)
				}
				if sets, ok := ipam["ranges"].([]any); ok {
					for _, set := range sets {
						if entries, ok := set.([]any); ok {
							for _, e := range entries {
								if m, ok := e.(map[string]any); ok {
									if s, ok := m["subnet"].(string); ok {
										out = append(out, s)
									}
								}
							}
						}
					}
				}
				continue
			}
			out = append(out, ipamSubnets(v)...)
		}
	case []any:
		for _, v := range x {
			out = append(out, ipamSubnets(v)...)
		}
	}
	return out
}
