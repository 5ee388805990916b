package rules

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// Template is a file the boot step renders into /etc once the runtime and
// CNI are known.
type Template struct {
	Name   string
	Source string // path of the template under the rules directory, for messages
	Data   []byte // its content, read beneath the rules directory at load
	Dest   string // cleaned path under etc/
	When   contract.Condition
	Mode   uint32
	Reason string
	Pos    Pos
}

// TemplateFuncs are the functions templates may call, kept few and pure so
// that a template renders the same bytes wherever it runs.
var TemplateFuncs = template.FuncMap{
	"quote": func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` },
}

// TemplateLimits bound one execution of a template. Templates render small
// configuration files at boot; without bounds a nested range over integers
// renders gigabytes (the red team's took render to 9 GB).
type TemplateLimits struct {
	// Output is the most bytes one execution may write.
	Output int
	// Steps bounds, before anything runs, the actions a template may
	// execute, with range loops multiplied out: a range over an integer
	// literal counts its value, any other range DynamicRange iterations.
	Steps int64
	// Timeout stops an execution that is still running.
	Timeout time.Duration
}

// DynamicRange is how many iterations the step bound counts for a range
// over anything but an integer literal: the values it can range over at
// boot (.Values, a string's length) come from short settings.
const DynamicRange = 256

// DefaultTemplateLimits are the bounds apply checks at load and render
// enforces at boot.
var DefaultTemplateLimits = TemplateLimits{Output: 1 << 20, Steps: 1 << 20, Timeout: 2 * time.Second}

// ExecuteTemplate parses and runs a template within DefaultTemplateLimits:
// the one place both apply and render execute templates.
func ExecuteTemplate(name string, text []byte, data any) ([]byte, error) {
	return DefaultTemplateLimits.Execute(name, text, data)
}

// Parse parses text as a rule template and refuses one whose step bound
// exceeds the limit or that calls itself.
func (lim TemplateLimits) Parse(name string, text []byte) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(TemplateFuncs).Parse(string(text))
	if err != nil {
		return nil, err
	}
	c := &coster{t: t, limit: lim.Steps, calling: map[string]bool{}}
	steps := c.tree(name)
	if c.err != nil {
		return nil, c.err
	}
	if steps > lim.Steps {
		return nil, fmt.Errorf("may take more than %d steps (range loops multiplied out); a template renders one configuration file", lim.Steps)
	}
	return t, nil
}

// Execute parses text and runs it on data within the limits.
func (lim TemplateLimits) Execute(name string, text []byte, data any) ([]byte, error) {
	t, err := lim.Parse(name, text)
	if err != nil {
		return nil, err
	}
	return lim.run(t, data)
}

var (
	errOutputBound = errors.New("output over the bound")
	errTimeBound   = errors.New("took too long")
)

// run executes t. text/template cannot be cancelled: the execution runs in
// a goroutine, and its writer fails once the deadline has passed, which
// stops any template that still writes. A loop that writes nothing runs on
// until the process exits (at boot render exits 2 right after), but the
// step bound of Parse refuses such loops when they are literal.
func (lim TemplateLimits) run(t *template.Template, data any) ([]byte, error) {
	w := &boundedWriter{limit: lim.Output}
	done := make(chan error, 1)
	go func() { done <- t.Execute(w, data) }()
	timer := time.NewTimer(lim.Timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		switch {
		case errors.Is(err, errOutputBound):
			return nil, fmt.Errorf("output over %d bytes; a template renders one configuration file", lim.Output)
		case errors.Is(err, errTimeBound):
			return nil, fmt.Errorf("took longer than %v", lim.Timeout)
		case err != nil:
			return nil, err
		}
		return w.buf.Bytes(), nil
	case <-timer.C:
		w.expired.Store(true)
		return nil, fmt.Errorf("took longer than %v", lim.Timeout)
	}
}

// boundedWriter fails past its limit or once expired is set.
type boundedWriter struct {
	buf     bytes.Buffer
	limit   int
	expired atomic.Bool
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.expired.Load() {
		return 0, errTimeBound
	}
	if w.buf.Len()+len(p) > w.limit {
		return 0, errOutputBound
	}
	return w.buf.Write(p)
}

// coster computes a template's step bound, saturating just past the limit
// so that nested loops cannot overflow.
type coster struct {
	t       *template.Template
	limit   int64
	calling map[string]bool
	err     error
}

func (c *coster) tree(name string) int64 {
	tt := c.t.Lookup(name)
	if tt == nil || tt.Tree == nil {
		return 1 // text/template reports the missing template when it runs
	}
	if c.calling[name] {
		if c.err == nil {
			c.err = fmt.Errorf("template %q calls itself", name)
		}
		return c.limit + 1
	}
	c.calling[name] = true
	defer delete(c.calling, name)
	return c.node(tt.Tree.Root)
}

func (c *coster) add(a, b int64) int64 { return min(a+b, c.limit+1) }

func (c *coster) mul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > (c.limit+1)/b {
		return c.limit + 1
	}
	return min(a*b, c.limit+1)
}

func (c *coster) node(n parse.Node) int64 {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return 0
		}
		var sum int64
		for _, x := range n.Nodes {
			sum = c.add(sum, c.node(x))
		}
		return sum
	case *parse.IfNode:
		return c.add(1, c.add(c.node(n.List), c.node(n.ElseList)))
	case *parse.WithNode:
		return c.add(1, c.add(c.node(n.List), c.node(n.ElseList)))
	case *parse.RangeNode:
		body := c.add(1, c.node(n.List))
		return c.add(1, c.add(c.mul(iterations(n.Pipe), body), c.node(n.ElseList)))
	case *parse.TemplateNode:
		return c.add(1, c.tree(n.Name))
	}
	return 1
}

// iterations is what the step bound counts for a range over pipe.
func iterations(pipe *parse.PipeNode) int64 {
	if pipe != nil && len(pipe.Cmds) == 1 && len(pipe.Cmds[0].Args) == 1 {
		if num, ok := pipe.Cmds[0].Args[0].(*parse.NumberNode); ok && num.IsInt {
			return max(num.Int64, 0)
		}
	}
	return DynamicRange
}

// SampleData is what a template sees at boot for runtime and cni, with a
// sample for each .Values.NAME it names: the load check renders every
// template with it for each choice its condition allows.
func SampleData(t *template.Template, runtime, cni string) map[string]any {
	values := map[string]string{}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			valueNames(tt.Tree.Root, values)
		}
	}
	return map[string]any{"Runtime": runtime, "CNI": cni, "Socket": contract.Sockets[runtime],
		"PodCIDR": "10.244.0.0/16", "Values": values}
}

// valueNames collects NAME from every .Values.NAME and $.Values.NAME.
func valueNames(n parse.Node, into map[string]string) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, x := range n.Nodes {
			valueNames(x, into)
		}
	case *parse.ActionNode:
		valueNames(n.Pipe, into)
	case *parse.IfNode:
		valueNames(&n.BranchNode, into)
	case *parse.WithNode:
		valueNames(&n.BranchNode, into)
	case *parse.RangeNode:
		valueNames(&n.BranchNode, into)
	case *parse.BranchNode:
		valueNames(n.Pipe, into)
		valueNames(n.List, into)
		valueNames(n.ElseList, into)
	case *parse.TemplateNode:
		valueNames(n.Pipe, into)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, cmd := range n.Cmds {
			for _, arg := range cmd.Args {
				valueNames(arg, into)
			}
		}
	case *parse.ChainNode:
		valueNames(n.Node, into)
	case *parse.FieldNode:
		if len(n.Ident) >= 2 && n.Ident[0] == "Values" {
			into[n.Ident[1]] = "sample"
		}
	case *parse.VariableNode:
		if len(n.Ident) >= 3 && n.Ident[0] == "$" && n.Ident[1] == "Values" {
			into[n.Ident[2]] = "sample"
		}
	}
}
