package rules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/configkey"
)

func TestLoadEdit(t *testing.T) {
	const head = "package: p\nrules:\n  - name: r\n    match: [etc/x.toml]\n    action: edit\n    reason: x\n"
	tests := []struct {
		name, fields string
		want         *configkey.Rule
		err          string
	}{
		{"remove", "    format: containerd\n    key: disabled_plugins\n    remove: [cri]\n",
			&configkey.Rule{Format: configkey.Containerd{}, Key: configkey.Path{"disabled_plugins"}, Change: configkey.Remove{Values: []string{"cri"}}}, ""},
		{"set an integer", "    format: toml\n    key: a.\"b.c\"\n    set: 2\n",
			&configkey.Rule{Format: configkey.TOML{}, Key: configkey.Path{"a", "b.c"}, Change: configkey.Set{Value: int64(2)}}, ""},
		{"set a quoted boolean", "    format: json\n    key: a\n    set: \"true\"\n",
			&configkey.Rule{Format: configkey.JSON{}, Key: configkey.Path{"a"}, Change: configkey.Set{Value: "true"}}, ""},
		{"unset", "    format: json\n    key: a\n    unset: true\n",
			&configkey.Rule{Format: configkey.JSON{}, Key: configkey.Path{"a"}, Change: configkey.Unset{}}, ""},
		{"unknown format", "    format: yaml\n    key: a\n    unset: true\n", nil, `a.yaml:7: rule r: format: "yaml": want containerd, json or toml`},
		{"no key", "    format: toml\n    unset: true\n", nil, `a.yaml:3: rule r: edit needs key:`},
		{"two changes", "    format: toml\n    key: a\n    unset: true\n    set: x\n", nil, `a.yaml:3: rule r: edit needs one of remove:, set: or unset:`},
		{"unset false", "    format: toml\n    key: a\n    unset: false\n", nil, `a.yaml:9: rule r: unset: "false": want true`},
		{"set a list", "    format: toml\n    key: a\n    set: [x]\n", nil, `a.yaml:9: want a single value, not a list`},
		{"key for another action", "    format: toml\n    key: a\n", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := head + tt.fields
			if tt.name == "key for another action" {
				yaml = strings.Replace(yaml, "action: edit", "action: strip", 1)
				tt.err = "format:/key:/remove:/set:/unset: only go with action edit"
			}
			dir := writeRules(t, map[string]string{"a.yaml": yaml})
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
			if diff := cmp.Diff(tt.want, set.Rules()[0].Edit); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
