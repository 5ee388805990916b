package rules

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
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

func TestTemplateLimits(t *testing.T) {
	lim := TemplateLimits{Output: 64, Steps: 2000, Timeout: time.Minute}
	data := map[string]any{"Runtime": "crio", "Values": map[string]string{"A": "abc"}}
	tests := []struct {
		name, text, want, err string
	}{
		{name: "within bounds", text: `{{range 3}}{{.}}{{end}} {{.Runtime}} {{range $k, $v := .Values}}{{$k}}={{$v}}{{end}}`, want: "012 crio A=abc"},
		{name: "output just at the bound", text: `{{range 64}}x{{end}}`, want: strings.Repeat("x", 64)},
		{name: "output past the bound", text: `{{range 65}}x{{end}}`, err: "output over 64 bytes"},
		{name: "one large write", text: `{{printf "%0100d" 0}}`, err: "output over 64 bytes"},
		{name: "steps multiplied out", text: `{{range 50}}{{range 50}}{{end}}{{end}}`, err: "may take more than 2000 steps"},
		{name: "steps through a defined template", text: `{{define "a"}}{{range 50}}{{end}}{{end}}{{range 50}}{{template "a"}}{{end}}`, err: "may take more than 2000 steps"},
		{name: "dynamic ranges count 256 each", text: `{{range .Values}}{{range .Values}}{{end}}{{end}}`, err: "may take more than 2000 steps"},
		{name: "negative count", text: `{{range -5}}x{{end}}ok`, want: "ok"},
		{name: "mutual recursion", text: `{{define "a"}}{{template "b"}}{{end}}{{define "b"}}{{template "a"}}{{end}}{{template "a"}}`, err: `calls itself`},
		{name: "huge literal does not overflow", text: `{{range 9223372036854775807}}{{range 9223372036854775807}}{{end}}{{end}}`, err: "may take more than 2000 steps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := lim.Execute("t", []byte(tc.text), data)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(out)); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
		})
	}
}

// A template that is still running at the deadline is given up on; one
// that still writes stops at its next write.
func TestTemplateTimeout(t *testing.T) {
	for _, text := range []string{`{{range 1000000}}{{end}}`, `{{range 1000000}}x{{end}}`} {
		lim := TemplateLimits{Output: 1 << 30, Steps: 1 << 22, Timeout: time.Millisecond}
		_, err := lim.Execute("t", []byte(text), nil)
		if err == nil || !strings.Contains(err.Error(), "took longer than 1ms") {
			t.Errorf("%s: err = %v, want a timeout", text, err)
		}
	}
}

// The shipped templates render for every choice within the bounds, so the
// load check costs nothing a real rule set needs.
func TestShippedTemplatesWithinBounds(t *testing.T) {
	set, err := Load(filepath.Join("..", "..", "rules"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Templates) == 0 {
		t.Fatal("no templates")
	}
	for _, tm := range set.Templates {
		out, err := ExecuteTemplate(tm.Name, tm.Data, map[string]any{"Runtime": "crio", "CNI": "bridge",
			"Socket": contract.Sockets["crio"], "PodCIDR": "10.244.0.0/16", "Values": map[string]string{}})
		if err != nil || len(out) == 0 {
			t.Errorf("%s: %q, %v", tm.Name, out, err)
		}
	}
}

// FuzzTemplateLimits: whatever text is given, the step bound and the
// sample data are computed without panicking, and an execution stays
// within the output bound.
func FuzzTemplateLimits(f *testing.F) {
	f.Add("runtime-endpoint: unix://{{ .Socket }}\n")
	f.Add(`{{range 3}}{{range $.Values}}{{.}}{{end}}{{end}}{{ .Values.MTU }}`)
	f.Add(`{{define "a"}}{{template "b" .}}{{end}}{{define "b"}}x{{end}}{{block "c" .}}{{template "a" .}}{{end}}`)
	f.Add(`{{with .Values}}{{if .X}}{{.Y}}{{else}}{{range 9}}{{break}}{{end}}{{end}}{{end}}`)
	lim := TemplateLimits{Output: 4096, Steps: 1 << 14, Timeout: 100 * time.Millisecond}
	f.Fuzz(func(t *testing.T, text string) {
		tmpl, err := lim.Parse("t", []byte(text))
		if err != nil {
			return
		}
		out, err := lim.run(tmpl, SampleData(tmpl, "crio", "bridge"))
		if err == nil && len(out) > lim.Output {
			t.Fatalf("%d bytes out, bound %d", len(out), lim.Output)
		}
	})
}
