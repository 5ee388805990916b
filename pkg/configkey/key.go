package configkey

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Path is a key: the names of the tables (objects) down to it, then its
// own name.
type Path []string

// ParsePath reads a key as TOML writes a dotted key
// (plugins."io.containerd.grpc.v1.cri".cni.conf_dir), for JSON as well.
func ParsePath(s string) (Path, error) {
	var p unstable.Parser
	p.Reset([]byte(s + " = 0"))
	if !p.NextExpression() {
		return nil, fmt.Errorf("key %q: %w", s, cmp.Or(p.Error(), errors.New("empty")))
	}
	var out Path
	for it := p.Expression().Key(); it.Next(); {
		out = append(out, string(it.Node().Data))
	}
	if p.NextExpression() || p.Error() != nil {
		return nil, fmt.Errorf("key %q: not one key", s)
	}
	return out, nil
}

// String writes p back as a dotted key, quoting the names that need it.
func (p Path) String() string {
	parts := make([]string, len(p))
	for i, n := range p {
		parts[i] = n
		if n == "" || strings.Trim(n, bareKey) != "" {
			parts[i] = string(literal(n))
		}
	}
	return strings.Join(parts, ".")
}

// bareKey are the characters of a TOML key that needs no quotes.
const bareKey = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func (p Path) id() string { return strings.Join(p, "\x00") }

// literal writes v as a value both TOML and JSON read as v: strings,
// numbers, booleans, and lists of them (JSON's escapes are TOML's).
func literal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	// JSON lists have no space after the comma; TOML files do.
	if len(out) > 0 && out[0] == '[' {
		var items []json.RawMessage
		if json.Unmarshal(out, &items) == nil {
			parts := make([][]byte, len(items))
			for i, it := range items {
				parts[i] = it
			}
			return append(append([]byte("["), bytes.Join(parts, []byte(", "))...), ']')
		}
	}
	return out
}

// Show is v as a report prints it: JSON text; "" for an absent key.
func Show(v any, found bool) string {
	if !found {
		return ""
	}
	return string(literal(v))
}
