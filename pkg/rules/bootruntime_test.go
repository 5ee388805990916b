package rules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBootRuntimeLoad(t *testing.T) {
	const head = "boot_runtime:\n  name: one-cri\n"
	for _, tc := range []struct {
		name, yaml, extra string
		want              *BootRuntime
		err               string
	}{
		{name: "one named", yaml: head + "  enabled: docker\n  reason: r\n  link: l\n",
			want: &BootRuntime{Name: "one-cri", Enabled: "docker", Reason: "r", Link: "l", Pos: Pos{"a.yaml", 2}}},
		{name: "none", yaml: head + "  enabled: none\n  reason: r\n",
			want: &BootRuntime{Name: "one-cri", Reason: "r", Pos: Pos{"a.yaml", 2}}},
		{name: "empty is no policy word", yaml: head + "  reason: r\n", err: `a.yaml:2: boot_runtime one-cri: enabled: "": want none or one of [containerd crio docker]`},
		{name: "unknown runtime", yaml: head + "  enabled: rkt\n  reason: r\n", err: `a.yaml:3: boot_runtime one-cri: enabled: "rkt"`},
		{name: "no reason", yaml: head + "  enabled: crio\n", err: `a.yaml:2: boot_runtime one-cri: a reason is required`},
		{name: "unknown key", yaml: head + "  enable: crio\n  reason: r\n", err: `a.yaml:3: unknown key "enable"`},
		{name: "two", yaml: head + "  enabled: crio\n  reason: r\n", extra: "boot_runtime:\n  name: other\n  enabled: none\n  reason: r\n",
			err: `b.yaml:2: boot_runtime other: a second one (the first is one-cri at `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"a.yaml": tc.yaml}
			if tc.extra != "" {
				files["b.yaml"] = tc.extra
			}
			dir := writeRules(t, files)
			set, err := Load(dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""), tc.err) {
					t.Fatalf("Load: %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			set.BootRuntime.Pos.File = filepath.Base(set.BootRuntime.Pos.File)
			if diff := cmp.Diff(tc.want, set.BootRuntime); diff != "" {
				t.Error(diff)
			}
		})
	}
}
