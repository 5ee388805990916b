package configkey

import (
	"encoding/json"
	"fmt"
)

// JSON is a JSON file (a CNI conflist, daemon.json), decoded as
// encoding/json decodes it: a key given twice has its last value.
type JSON struct{}

func (JSON) parse(data []byte) (*doc, error) {
	d := &doc{data: data, entries: map[string]*entry{}}
	if err := json.Unmarshal(data, &d.root); err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	s := &jsonScanner{d: d}
	s.space()
	s.value(Path{}, &entry{})
	return d, nil
}

// jsonScanner finds where each object member is in a document
// json.Unmarshal accepted, so it needs no error paths of its own.
type jsonScanner struct {
	d *doc
	i int
}

func (s *jsonScanner) space() {
	for s.i < len(s.d.data) {
		switch s.d.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans the value at s.i into e.value; key is its path (nil: not
// addressed, inside a list).
func (s *jsonScanner) value(key Path, e *entry) {
	start := s.i
	switch s.d.data[s.i] {
	case '{':
		s.object(key)
	case '[':
		e.elems = s.list()
	case '"':
		s.str()
	default:
		for s.i < len(s.d.data) && !isJSONDelim(s.d.data[s.i]) {
			s.i++
		}
	}
	e.value = span{start, s.i}
	if key != nil {
		s.d.entries[key.id()] = e
	}
}

func isJSONDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// str skips a string, escapes included.
func (s *jsonScanner) str() {
	for s.i++; s.d.data[s.i] != '"'; s.i++ {
		if s.d.data[s.i] == '\\' {
			s.i++
		}
	}
	s.i++
}

func (s *jsonScanner) object(key Path) {
	items := &[]span{}
	s.i++
	for s.space(); s.d.data[s.i] != '}'; s.space() {
		if s.d.data[s.i] == ',' {
			s.i++
			continue
		}
		ks := s.i
		s.str()
		var name string
		_ = json.Unmarshal(s.d.data[ks:s.i], &name) // accepted by Unmarshal above
		s.space()
		s.i++ // ':'
		s.space()
		e := &entry{siblings: items, index: len(*items)}
		var sub Path
		if key != nil {
			sub = append(key.clone(), name)
		}
		s.value(sub, e)
		e.item = span{ks, s.i}
		*items = append(*items, e.item)
	}
	s.i++
	if key != nil {
		s.d.entries[key.id()+"\x01"] = &entry{value: span{s.i - 1, s.i}, siblings: items}
	}
}

// list skips a list and returns its items' places.
func (s *jsonScanner) list() []span {
	var items []span
	s.i++
	for s.space(); s.d.data[s.i] != ']'; s.space() {
		if s.d.data[s.i] == ',' {
			s.i++
			continue
		}
		start := s.i
		s.value(nil, &entry{})
		items = append(items, span{start, s.i})
	}
	s.i++
	return items
}

func (JSON) spell(_ *doc, _ Path, vals []string) []string { return vals }

// insert adds "name": lit as the last member of the object key names
// but its last part.
func (JSON) insert(d *doc, key Path, lit []byte) ([]byte, error) {
	obj, ok := d.entries[key[:len(key)-1].id()+"\x01"]
	if !ok {
		return nil, fmt.Errorf("no object to add %s to", key)
	}
	member := append(literal(key[len(key)-1]), ": "...)
	member = append(member, lit...)
	if items := *obj.siblings; len(items) > 0 {
		return splice(d.data, nil, items[len(items)-1].end, append([]byte(", "), member...)), nil
	}
	return splice(d.data, nil, obj.value.start, member), nil
}
