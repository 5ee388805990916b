package rules

import (
	"strings"
	"text/template"
)

// Condition says when the boot step renders a template or restores a
// deferred file: every list that is set must contain the chosen value.
type Condition struct {
	Runtimes []string `json:"runtime,omitempty"`
	CNIs     []string `json:"cni,omitempty"`
}

// Holds reports whether the condition is met by the chosen runtime and CNI.
func (c Condition) Holds(runtime, cni string) bool {
	return (len(c.Runtimes) == 0 || contains(c.Runtimes, runtime)) &&
		(len(c.CNIs) == 0 || contains(c.CNIs, cni))
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Template is a file the boot step renders into /etc once the runtime and
// CNI are known.
type Template struct {
	Name   string
	Source string // path of the template under the rules directory, for messages
	Data   []byte // its content, read beneath the rules directory at load
	Dest   string // cleaned path under etc/
	When   Condition
	Mode   uint32
	Reason string
	Pos    Pos
}

// TemplateFuncs are the functions templates may call, kept few and pure so
// that a template renders the same bytes wherever it runs.
var TemplateFuncs = template.FuncMap{
	"quote": func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` },
}
