package configkey

import (
	"bytes"
	"fmt"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// TOML is a TOML file (containerd's, cri-o's, buildkit's), decoded as
// go-toml/v2 decodes it.
type TOML struct{}

func (TOML) parse(data []byte) (*doc, error) {
	d := &doc{data: data, entries: map[string]*entry{}, tables: map[string]int{}}
	if err := toml.Unmarshal(data, &d.root); err != nil {
		return nil, fmt.Errorf("toml: %w", err)
	}
	var p unstable.Parser
	p.Reset(data)
	table, rootEnd := Path{}, -1
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			key, start, end := keyOf(n)
			if rootEnd < 0 { // the header's '[' is on its first key's line
				rootEnd = bytes.LastIndexByte(data[:start], '\n') + 1
			}
			table = nil // keys of an array of tables are not addressed
			if n.Kind == unstable.Table {
				table = key
				d.tables[table.id()] = lineOf(data, span{end, end}).end
			}
		case unstable.KeyValue:
			if table == nil {
				continue
			}
			e := keyValue(n, data)
			e.ownLines = true
			key, _, _ := keyOf(n)
			d.note(append(table.clone(), key...), e, n)
			if len(table) > 0 {
				d.tables[table.id()] = lineOf(data, e.item).end
			}
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("toml: %w", err)
	}
	if rootEnd < 0 {
		rootEnd = len(data)
	}
	d.tables[""] = rootEnd
	return d, nil
}

func (p Path) clone() Path { return append(Path(nil), p...) }

// note records key value n (and, for an inline table, its keys) at key.
func (d *doc) note(key Path, e *entry, n *unstable.Node) {
	d.entries[key.id()] = e
	v := n.Value()
	if v.Kind != unstable.InlineTable {
		return
	}
	items := &[]span{}
	for it := v.Children(); it.Next(); {
		c := it.Node()
		if c.Kind != unstable.KeyValue {
			continue
		}
		ce := keyValue(c, d.data)
		ce.siblings, ce.index = items, len(*items)
		*items = append(*items, ce.item)
		name, _, _ := keyOf(c)
		d.note(append(key.clone(), name...), ce, c)
	}
}

// keyValue is where key value n is: its item runs from its first key to
// the end of its value; the value starts after the '='.
func keyValue(n *unstable.Node, data []byte) *entry {
	_, start, vs := keyOf(n)
	end := int(n.Raw.Offset + n.Raw.Length)
	for vs < end && (data[vs] == ' ' || data[vs] == '\t' || data[vs] == '=') {
		vs++
	}
	e := &entry{value: span{vs, end}, item: span{start, end}}
	if v := n.Value(); v.Kind == unstable.Array {
		e.elems = []span{}
		for it := v.Children(); it.Next(); {
			c := it.Node()
			switch c.Kind {
			case unstable.Comment:
			case unstable.Array, unstable.InlineTable:
				e.elems = nil
				return e
			default:
				e.elems = append(e.elems, span{int(c.Raw.Offset), int(c.Raw.Offset + c.Raw.Length)})
			}
		}
	}
	return e
}

// keyOf is n's key: its names, where its first part starts and where its
// last ends (a quoted part's Raw includes its quotes).
func keyOf(n *unstable.Node) (p Path, start, end int) {
	for it := n.Key(); it.Next(); {
		r := it.Node().Raw
		if p == nil {
			start = int(r.Offset)
		}
		end = int(r.Offset + r.Length)
		p = append(p, string(it.Node().Data))
	}
	return p, start, end
}

func (TOML) spell(_ *doc, _ Path, vals []string) []string { return vals }

// insert adds key = lit to the deepest table a header opens above key
// (the root table before the first header), naming the rest of key as a
// dotted key.
func (TOML) insert(d *doc, key Path, lit []byte) ([]byte, error) {
	for n := len(key) - 1; n >= 0; n-- {
		at, ok := d.tables[key[:n].id()]
		if !ok {
			continue
		}
		line := append([]byte(key[n:].String()+" = "), lit...)
		line = append(line, '\n')
		if at > 0 && d.data[at-1] != '\n' {
			line = append([]byte("\n"), line...)
		}
		return splice(d.data, nil, at, line), nil
	}
	return nil, fmt.Errorf("no table to add %s to", key)
}
