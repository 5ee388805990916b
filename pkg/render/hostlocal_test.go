package render

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// hostLocal is where Debian's containernetworking-plugins installs the
// IPAM plugin the bridge template names.
const hostLocal = "/usr/lib/cni/host-local"

// The pod CIDRs render accepts are exactly those the real host-local IPAM
// allocates from: render refuses, before writing anything, a value that
// would leave every pod without a network at boot, and what it writes for an
// accepted one, fed to the plugin as libcni feeds it, yields an address.
func TestPodCIDRAgreesWithHostLocal(t *testing.T) {
	if _, err := os.Stat(hostLocal); err != nil {
		if os.Getenv(archivetest.RequireToolsEnv) == "1" {
			t.Fatalf("%s missing (containernetworking-plugins), and %s=1 forbids skipping", hostLocal, archivetest.RequireToolsEnv)
		}
		t.Skipf("%s missing (containernetworking-plugins)", hostLocal)
	}
	for _, cidr := range []string{
		"10.244.0.0/16", "10.96.128.0/17", "fd00:10:244::/56", "10.244.0.0/30",
		"10.244.0.1/16", "10.244.0.0/31", "10.244.0.7/32", "fd00:10:244::1/56",
	} {
		t.Run(strings.ReplaceAll(cidr, "/", "_"), func(t *testing.T) {
			pluginErr := runHostLocal(t, minimalBridge(t, cidr))
			root := appliedImage(t)
			_, renderErr := Render(Options{Root: root, Choice: choice("containerd", "bridge", cidr)})
			if (pluginErr == nil) != (renderErr == nil) {
				t.Fatalf("host-local: %v; render: %v", pluginErr, renderErr)
			}
			conflist := filepath.Join(root, "etc/cni/net.d/1-k8s.conflist")
			if renderErr != nil {
				if _, err := os.Lstat(conflist); err == nil {
					t.Errorf("render refused %s but wrote %s", cidr, conflist)
				}
				return
			}
			data, err := os.ReadFile(conflist)
			if err != nil {
				t.Fatal(err)
			}
			if err := runHostLocal(t, firstPlugin(t, data)); err != nil {
				t.Errorf("host-local refuses the conflist render wrote: %v", err)
			}
		})
	}
}

// minimalBridge is a bridge plugin's configuration with cidr as its only
// range, as the plugin receives it.
func minimalBridge(t *testing.T, cidr string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"cniVersion": "0.4.0", "name": "k8s", "type": "bridge",
		"ipam": map[string]any{"type": "host-local", "ranges": [][]map[string]string{{{"subnet": cidr}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// firstPlugin is what libcni hands the first plugin of a conflist: its own
// object with the list's name and cniVersion (libcni's buildOneConfig).
func firstPlugin(t *testing.T, conflist []byte) []byte {
	t.Helper()
	var list struct {
		CNIVersion string           `json:"cniVersion"`
		Name       string           `json:"name"`
		Plugins    []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal(conflist, &list); err != nil || len(list.Plugins) == 0 {
		t.Fatalf("conflist %s: %v", conflist, err)
	}
	p := list.Plugins[0]
	p["name"], p["cniVersion"] = list.Name, list.CNIVersion
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runHostLocal runs the plugin's ADD with its state in a scratch
// directory: the IPAM needs no network namespace to allocate.
func runHostLocal(t *testing.T, conf []byte) error {
	t.Helper()
	var c map[string]any
	if err := json.Unmarshal(conf, &c); err != nil {
		t.Fatal(err)
	}
	c["ipam"].(map[string]any)["dataDir"] = t.TempDir()
	conf, _ = json.Marshal(c)
	cmd := exec.Command(hostLocal)
	cmd.Stdin = bytes.NewReader(conf)
	cmd.Env = []string{"LC_ALL=C", "CNI_COMMAND=ADD", "CNI_CONTAINERID=rootfs-trim-test", "CNI_NETNS=/nonexistent", "CNI_IFNAME=eth0", "CNI_PATH=" + filepath.Dir(hostLocal)}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return &pluginError{msg: strings.TrimSpace(string(out))}
	}
	return nil
}

type pluginError struct{ msg string }

func (e *pluginError) Error() string { return e.msg }
