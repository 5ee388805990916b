package configkey

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// JSON is a JSON file (a CNI conflist, daemon.json), decoded as
// encoding/json decodes it: a key given twice has its last value.
type JSON struct{}

func (JSON) parse(data []byte) (*doc, error) {
	d := &doc{data: data, entries: map[string]*entry{}}
	if err := json.Unmarshal(data, &d.root); err != nil {
		return nil, fmt.Errorf("json: %w", err)
	}
	s := &jsonScanner{d: d, dec: json.NewDecoder(bytes.NewReader(data))}
	s.value(Path{}, &entry{})
	return d, nil
}

// jsonScanner finds where each object member is in a document
// json.Unmarshal accepted, from the offsets of the tokens a json.Decoder
// reads, so it needs no error paths of its own.
type jsonScanner struct {
	d   *doc
	dec *json.Decoder
}

// next is where the next token starts: the decoder's offset is the end
// of the last one, before the blanks and the separator that follow it.
func (s *jsonScanner) next() int {
	i := int(s.dec.InputOffset())
	for i < len(s.d.data) && strings.IndexByte(" \t\n\r,:", s.d.data[i]) >= 0 {
		i++
	}
	return i
}

// value scans the next value into e.value; key is its path (nil: not
// addressed, inside a list).
func (s *jsonScanner) value(key Path, e *entry) {
	start := s.next()
	switch tok, _ := s.dec.Token(); tok {
	case json.Delim('{'):
		s.object(key)
	case json.Delim('['):
		e.elems = s.list()
	}
	e.value = span{start, int(s.dec.InputOffset())}
	if key != nil {
		s.d.entries[key.id()] = e
	}
}

func (s *jsonScanner) object(key Path) {
	items := &[]span{}
	for s.dec.More() {
		ks := s.next()
		tok, _ := s.dec.Token()
		e := &entry{siblings: items, index: len(*items)}
		var sub Path
		if name, _ := tok.(string); key != nil {
			sub = append(key.clone(), name)
		}
		s.value(sub, e)
		e.item = span{ks, e.value.end}
		*items = append(*items, e.item)
	}
	s.dec.Token() // '}'
	if end := int(s.dec.InputOffset()); key != nil {
		s.d.entries[key.id()+"\x01"] = &entry{value: span{end - 1, end}, siblings: items}
	}
}

// list skips a list and returns its items' places.
func (s *jsonScanner) list() []span {
	var items []span
	for s.dec.More() {
		e := &entry{}
		s.value(nil, e)
		items = append(items, e.value)
	}
	s.dec.Token() // ']'
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
