package configkey

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Format reads one kind of config file: TOML, JSON, or a consumer that
// reads one of them its own way (Containerd).
type Format interface {
	parse(data []byte) (*doc, error)
	// spell is how this file spells the list items vals that a rule
	// names for key (containerd's plugin IDs differ by config version).
	spell(d *doc, key Path, vals []string) []string
	// insert returns the file with key, which it lacks, set to lit.
	insert(d *doc, key Path, lit []byte) ([]byte, error)
}

// Formats are the formats rule files name (format:).
var Formats = map[string]Format{"toml": TOML{}, "json": JSON{}, "containerd": Containerd{}}

// Change is what a rule does to its key.
type Change interface {
	// apply returns the file with the change made to key (e is nil when
	// the file lacks it), or data itself when it has nothing to change.
	apply(f Format, d *doc, key Path, e *entry) ([]byte, error)
	String() string
}

// Remove takes items out of a list of strings (containerd's
// disabled_plugins); an absent key has nothing to remove.
type Remove struct{ Values []string }

// Set gives the key a value: a string, an integer, a boolean.
type Set struct{ Value any }

// Unset takes the key out; an absent key has nothing to unset.
type Unset struct{}

func (c Remove) String() string { return "remove " + string(literal(c.Values)) }
func (c Set) String() string    { return "set " + string(literal(c.Value)) }
func (Unset) String() string    { return "unset" }

func (c Remove) apply(f Format, d *doc, key Path, e *entry) ([]byte, error) {
	if e == nil {
		return d.data, nil
	}
	v, _ := d.lookup(key)
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s, not a list", key, literal(v))
	}
	if len(e.elems) != len(list) {
		return nil, fmt.Errorf("%s: a list of lists or tables is not edited", key)
	}
	gone := f.spell(d, key, c.Values)
	drop := make([]bool, len(list))
	for i, item := range list {
		s, ok := item.(string)
		drop[i] = ok && slices.Contains(gone, s)
	}
	if !slices.Contains(drop, true) {
		return d.data, nil
	}
	return splice(d.data, removeItems(e.elems, drop), 0, nil), nil
}

func (c Set) apply(f Format, d *doc, key Path, e *entry) ([]byte, error) {
	lit := literal(c.Value)
	if e == nil {
		return f.insert(d, key, lit)
	}
	v, _ := d.lookup(key)
	if bytes.Equal(literal(v), lit) {
		return d.data, nil
	}
	return splice(d.data, []span{e.value}, e.value.start, lit), nil
}

func (Unset) apply(_ Format, d *doc, _ Path, e *entry) ([]byte, error) {
	switch {
	case e == nil:
		return d.data, nil
	case e.ownLines:
		return splice(d.data, []span{lineOf(d.data, e.item)}, 0, nil), nil
	}
	drop := make([]bool, len(*e.siblings))
	drop[e.index] = true
	return splice(d.data, removeItems(*e.siblings, drop), 0, nil), nil
}

// Rule is one key of one file and what to make of it.
type Rule struct {
	Format Format
	Key    Path
	Change Change
}

// Result is what a rule finds in a file: the key's value as the consumer
// reads it (Found: the file has it), and the file as the rule changes it
// (Out; nil when it has nothing to change).
type Result struct {
	Value any
	Found bool
	Out   []byte
}

// Show is the key's value as reports print it ("" when absent).
func (r Result) Show() string { return Show(r.Value, r.Found) }

// Check reads data and says what the rule makes of it. The changed file
// is read again: it must decode, and give the key what the rule says.
func (r Rule) Check(data []byte) (Result, error) {
	d, err := r.Format.parse(data)
	if err != nil {
		return Result{}, err
	}
	res := Result{}
	res.Value, res.Found = d.lookup(r.Key)
	out, err := r.Change.apply(r.Format, d, r.Key, d.entries[r.Key.id()])
	if err != nil {
		return res, fmt.Errorf("%s: %w", r.Change, err)
	}
	if bytes.Equal(out, data) {
		return res, nil
	}
	again, err := r.Format.parse(out)
	if err != nil {
		return res, fmt.Errorf("%s of %s would not read back: %w", r.Change, r.Key, err)
	}
	if same, err := r.Change.apply(r.Format, again, r.Key, again.entries[r.Key.id()]); err != nil || !bytes.Equal(same, out) {
		return res, fmt.Errorf("%s of %s does not hold once made", r.Change, r.Key)
	}
	res.Out = out
	return res, nil
}

// String says the rule: format, key and change.
func (r Rule) String() string {
	for name, f := range Formats {
		if f == r.Format {
			return strings.Join([]string{name, r.Key.String(), r.Change.String()}, " ")
		}
	}
	return r.Key.String() + " " + r.Change.String()
}
