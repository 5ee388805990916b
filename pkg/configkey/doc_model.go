package configkey

import (
	"bytes"
	"slices"
)

// span is the bytes [start, end) of a file.
type span struct{ start, end int }

// entry is where one key is in the file, for an edit of it.
type entry struct {
	// value is the value's bytes; item the whole key and value.
	value, item span
	// ownLines: the item stands on lines of its own (a TOML table's
	// key), so unsetting it takes its lines, comment included; otherwise
	// it is one of the items of an inline table or JSON object.
	ownLines bool
	siblings *[]span
	index    int
	// elems are a list's items, nil when the value is no list or an item
	// is one whose bytes the parser does not give (a nested list or
	// table).
	elems []span
}

// doc is a parsed file: its bytes, its decoded values and its keys'
// places.
type doc struct {
	data    []byte
	root    map[string]any
	entries map[string]*entry
	// tables are the TOML tables a header opens, by Path.id, with the
	// offset where a new key of the table goes ("" is the root table);
	// the JSON objects' entries give that for JSON.
	tables map[string]int
}

// lookup is the value at key as the consumer decoded it.
func (d *doc) lookup(key Path) (any, bool) {
	var v any = d.root
	for _, name := range key {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[name]; !ok {
			return nil, false
		}
	}
	return v, true
}

// splice returns data with the runs cut taken out and ins put at at.
func splice(data []byte, cut []span, at int, ins []byte) []byte {
	slices.SortFunc(cut, func(a, b span) int { return a.start - b.start })
	var out bytes.Buffer
	pos := 0
	for _, c := range cut {
		if c.start < pos {
			c.start = pos
		}
		if at >= pos && at <= c.start && ins != nil {
			out.Write(data[pos:at])
			out.Write(ins)
			pos, ins = at, nil
		}
		out.Write(data[pos:c.start])
		pos = max(pos, c.end)
	}
	if ins != nil && at >= pos {
		out.Write(data[pos:at])
		out.Write(ins)
		pos = at
	}
	out.Write(data[pos:])
	return out.Bytes()
}

// removeItems cuts the items drop marks out of a list (or an inline
// table, a JSON object) whose items are at items, each with the
// separator that follows it, or, after the last one kept, the one before
// it: what stays reads as it did, its own separators and spacing kept.
func removeItems(items []span, drop []bool) []span {
	lastKept := -1
	for i := range items {
		if !drop[i] {
			lastKept = i
		}
	}
	var cut []span
	switch {
	case lastKept < 0 && len(items) > 0:
		return []span{{items[0].start, items[len(items)-1].end}}
	case lastKept < len(items)-1:
		cut = append(cut, span{items[lastKept].end, items[len(items)-1].end})
	}
	for i := 0; i < lastKept; i++ {
		if drop[i] {
			cut = append(cut, span{items[i].start, items[i+1].start})
		}
	}
	return cut
}

// lineOf widens s to the whole lines it stands on, the line break after
// it included (a TOML key with its trailing comment).
func lineOf(data []byte, s span) span {
	start := bytes.LastIndexByte(data[:s.start], '\n') + 1
	end := len(data)
	if i := bytes.IndexByte(data[s.end:], '\n'); i >= 0 {
		end = s.end + i + 1
	}
	return span{start, end}
}
