package rules

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTemplateBoundsAtLoad: what a template would do at boot is checked at
// load, at the template's file:line: the red team's nested range over
// integers passed apply and took render to 9 GB at boot.
func TestTemplateBoundsAtLoad(t *testing.T) {
	tests := []struct {
		name string
		tmpl string
		want string
	}{
		{"nested range over integers", "{{range 100000}}{{range 100000}}x{{end}}{{end}}", "a.yaml:3: template t: may take more than 1048576 steps"},
		{"output over the bound", `{{range 2048}}{{printf "%01024d" 0}}{{end}}`, "a.yaml:3: template t: with runtime containerd and cni bridge: output over 1048576 bytes"},
		{"a template calling itself", `{{define "a"}}{{template "a" .}}{{end}}{{template "a" .}}`, `a.yaml:3: template t: template "a" calls itself`},
		{"an unknown field", "{{ .Nope }}", `a.yaml:3: template t: with runtime containerd and cni bridge: template: t:1:3: executing "t" at <.Nope>: map has no entry for key "Nope"`},
		{"an error for one runtime only", `{{if eq .Runtime "docker"}}{{ .Bogus }}{{end}}`, "a.yaml:3: template t: with runtime docker and cni bridge: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeRules(t, map[string]string{
				"a.yaml": "templates:\n  - name: t\n    source: t.tmpl\n    dest: etc/x\n    reason: x\n",
				"t.tmpl": tc.tmpl,
			})
			_, err := Load(dir)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error\n%s\ndoes not contain\n%s", msg, tc.want)
			}
		})
	}
}
