package rules

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/configkey"
	"go.yaml.in/yaml/v3"
)

// setValue is set:'s value with the type YAML gives it: a boolean, an
// integer, or a string (quote it to keep "true" a string).
type setValue struct {
	located
	value any
}

func (s *setValue) UnmarshalYAML(n *yaml.Node) error {
	if err := s.located.UnmarshalYAML(n); err != nil {
		return err
	}
	s.value = n.Value
	switch n.ShortTag() {
	case "!!bool":
		s.value = n.Value == "true"
	case "!!int":
		v, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		s.value = v
	case "!!str":
	default:
		return fmt.Errorf("line %d: set: want a string, an integer or a boolean, not %s", n.Line, n.ShortTag())
	}
	return nil
}

// joined is a list's items as one field, for checkFields: set when any
// is, at the first's line.
func joined(list []located) located {
	if len(list) == 0 {
		return located{}
	}
	var vs []string
	for _, v := range list {
		vs = append(vs, v.V)
	}
	return located{V: strings.Join(vs, ","), Line: list[0].Line}
}

func loadEdit(l *loader, pos Pos, rr rawRule, r *Rule) {
	e := &configkey.Rule{}
	if e.Format = configkey.Formats[rr.Format.V]; e.Format == nil {
		names := slices.Sorted(maps.Keys(configkey.Formats))
		l.errorf(Pos{pos.File, max(rr.Format.Line, pos.Line)}, "rule %s: format: %q: want %s", r.Name, rr.Format.V, orList(names))
	}
	var err error
	if e.Key, err = configkey.ParsePath(rr.Key.V); err != nil {
		l.errorf(Pos{pos.File, max(rr.Key.Line, pos.Line)}, "rule %s: edit needs key: %v", r.Name, err)
	}
	var changes []configkey.Change
	if len(rr.Remove) > 0 {
		var vals []string
		for _, v := range rr.Remove {
			vals = append(vals, v.V)
		}
		changes = append(changes, configkey.Remove{Values: vals})
	}
	if rr.Set.V != "" {
		changes = append(changes, configkey.Set{Value: rr.Set.value})
	}
	switch rr.Unset.V {
	case "":
	case "true":
		changes = append(changes, configkey.Unset{})
	default:
		l.errorf(Pos{pos.File, rr.Unset.Line}, "rule %s: unset: %q: want true", r.Name, rr.Unset.V)
	}
	if len(changes) != 1 {
		l.errorf(pos, "rule %s: edit needs one of remove:, set: or unset:", r.Name)
		return
	}
	e.Change = changes[0]
	r.Edit = e
}
