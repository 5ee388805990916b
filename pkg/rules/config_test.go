package rules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rootfs-trim/rootfs-trim/pkg/configkey"
)

func TestLoadConfigs(t *testing.T) {
	const crio = "configs:\n  - name: c\n    consumer: crio\n    main: /etc/crio/crio.conf\n    drop_ins: etc/crio/crio.conf.d\n"
	tests := []struct {
		name, yaml string
		want       *Config
		err        string
	}{
		{"crio with a site", crio + "    site: etc/crio/crio.conf.d/02-crio.conf\n    manages: [crio.image.pause_image]\n    cni_dir: etc/cni/net.d\n    reason: x\n",
			&Config{Name: "c", Stack: configkey.Crio{DropIns: "etc/crio/crio.conf.d"}, Main: "etc/crio/crio.conf", Site: "etc/crio/crio.conf.d/02-crio.conf",
				Manages: []configkey.Path{{"crio", "image", "pause_image"}}, CNIDir: "etc/cni/net.d", Reason: "x"}, ""},
		{"containerd", "configs:\n  - name: c\n    consumer: containerd\n    main: etc/containerd/config.toml\n    cni_dir: etc/cni/net.d\n    reason: x\n",
			&Config{Name: "c", Stack: configkey.ContainerdStack{}, Main: "etc/containerd/config.toml", CNIDir: "etc/cni/net.d", Reason: "x"}, ""},
		{"unknown consumer", "configs:\n  - name: c\n    consumer: podman\n    main: etc/x/y\n    reason: x\n", nil, `a.yaml:3: config c: consumer: "podman": want crio or containerd`},
		{"site outside", crio + "    site: etc/x.conf\n    manages: [a]\n    reason: x\n", nil, "a.yaml:6: config c: site: etc/x.conf is not among the files crio reads"},
		{"site without manages", crio + "    site: etc/crio/crio.conf.d/02\n    reason: x\n", nil, "a.yaml:2: config c: site: and manages: go together"},
		{"bad key", crio + "    site: etc/crio/crio.conf.d/02\n    manages: [\"a =\"]\n    reason: x\n", nil, "a.yaml:7: config c: manages: key"},
		{"glob", crio + "    cni_dir: etc/cni/*\n    reason: x\n", nil, `a.yaml:6: config c: cni_dir: bad path "etc/cni/*"`},
		{"containerd drop_ins", "configs:\n  - name: c\n    consumer: containerd\n    main: etc/c/c.toml\n    drop_ins: etc/c/d\n    reason: x\n", nil, "a.yaml:5: config c: drop_ins: containerd reads the files its imports name"},
		{"no reason", crio, nil, `a.yaml:2: config "c": name: and reason: are required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeRules(t, map[string]string{"a.yaml": tt.yaml})
			set, err := Load(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]*Config{tt.want}, set.Configs, cmpopts.IgnoreFields(Config{}, "Pos")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
