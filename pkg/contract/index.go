package contract

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/rootfs-trim/rootfs-trim/internal/canon"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// IndexVersion is the index format version.
const IndexVersion = 2

// IndexSchema names the index's JSON Schema, docs/schema/index.json. Any
// change to the index's fields changes it (and IndexVersion with it).
// v2: owners.
const IndexSchema = "rootfs-trim/index/v2"

// indexSchemaV1 is the index before owners: what the previous release
// wrote, which this one's render and audit read as well.
const indexSchemaV1 = "rootfs-trim/index/v1"

// Index lists every file the boot step may put into /etc: deferred copies of
// what packages shipped, and templates.
type Index struct {
	// Schema is IndexSchema; an index written before the field existed
	// (rootfs-trim 0.1.0, version 1) has none, and is read as it is.
	Schema      string      `json:"schema"`
	Version     int         `json:"version"`
	RulesDigest string      `json:"rules_digest"`
	Files       []IndexFile `json:"files"`
	// Policy is the rule set's policy, so that the boot step can tell
	// which files appearing later in /etc offend.
	Policy []IndexPolicy `json:"policy"`
	// Owners are the packages of the files the image kept, when apply
	// knew them (a packages-file-list, a dpkg database, an earlier
	// index): package -> directory -> the names in it, sorted. A
	// release ISO carries no packages-file-list: an audit of the image
	// takes its owners from here. Names that are not UTF-8 are left out
	// (their owner reads back as unknown).
	Owners map[string]map[string][]string `json:"owners,omitempty"`
}

// IndexPolicy is one policy item as the boot step needs it.
type IndexPolicy struct {
	Name   string   `json:"name"`
	Forbid []string `json:"forbid"`
	Allow  []string `json:"allow,omitempty"`
	Types  []string `json:"types,omitempty"`
	// AllowTargets are the symlink targets (patterns, resolved in the
	// image) that are no violation.
	AllowTargets []string `json:"allow_targets,omitempty"`
	// AtBoot is "report" or "remove": what the boot step does with a file
	// that matches but that it did not write.
	AtBoot string `json:"at_boot"`
}

// IndexFile is one deferred file or template.
type IndexFile struct {
	Kind Kind   `json:"kind"` // Deferred or Template
	Name string `json:"name"` // the rule or template name
	// Source is the path in the image (no leading slash) of the copy or
	// template; Dest is where the boot step writes it.
	Source string `json:"source"`
	Dest   string `json:"dest"`
	// SourceB64 and DestB64 carry Source and Dest in base64 when they are
	// not UTF-8 (see names.B64): a deferred file keeps its exact name.
	SourceB64 string    `json:"source_b64,omitempty"`
	DestB64   string    `json:"dest_b64,omitempty"`
	When      Condition `json:"when"`
	// Link is the target of a relocated or deferred symlink: the boot
	// step restores a symlink with this target, never following it, and
	// SHA256 is the sha256 of the target's bytes.
	Link   string `json:"link,omitempty"`
	Mode   string `json:"mode"`
	UID    int    `json:"uid"`
	GID    int    `json:"gid"`
	SHA256 string `json:"sha256"`
}

// Encode writes the index, sorted, as indented JSON.
func (ix *Index) Encode(w io.Writer) error {
	if err := ix.check(); err != nil {
		return err
	}
	sort.Slice(ix.Files, func(i, j int) bool {
		a, b := ix.Files[i], ix.Files[j]
		if a.Dest != b.Dest {
			return a.Dest < b.Dest
		}
		return a.Source < b.Source
	})
	if ix.Files == nil {
		ix.Files = []IndexFile{}
	}
	if ix.Policy == nil {
		ix.Policy = []IndexPolicy{}
	}
	ix.Schema, ix.Version = IndexSchema, IndexVersion
	for i := range ix.Files {
		f := &ix.Files[i]
		f.SourceB64, f.DestB64 = names.B64(f.Source), names.B64(f.Dest)
	}
	return canon.JSON(w, ix)
}

// DecodeIndex reads an index and checks its version. It reads what the
// previous release wrote (no schema field), so that an image built by it
// still boots with this render.
func DecodeIndex(r io.Reader) (*Index, error) {
	var ix Index
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil {
		return nil, fmt.Errorf("decoding index: %w", err)
	}
	if ix.Schema != "" && ix.Schema != IndexSchema && ix.Schema != indexSchemaV1 {
		return nil, fmt.Errorf("index schema %q, want %q (or %q, or none, as before it was recorded)", ix.Schema, IndexSchema, indexSchemaV1)
	}
	if ix.Version != IndexVersion && ix.Version != 1 {
		return nil, fmt.Errorf("index version %d, want %d (or 1)", ix.Version, IndexVersion)
	}
	for i := range ix.Files {
		f := &ix.Files[i]
		var err error
		if f.Source, err = names.Exact(f.Source, f.SourceB64); err != nil {
			return nil, fmt.Errorf("index entry %s: source_b64: %w", f.Name, err)
		}
		if f.Dest, err = names.Exact(f.Dest, f.DestB64); err != nil {
			return nil, fmt.Errorf("index entry %s: dest_b64: %w", f.Name, err)
		}
		f.SourceB64, f.DestB64 = "", ""
	}
	if err := ix.check(); err != nil {
		return nil, err
	}
	return &ix, nil
}

// maxID is the largest owner chown(2) gives: uid_t and gid_t are 32 bits,
// and (uid_t)-1, one more, means "leave as is".
const maxID = math.MaxUint32 - 1

// check refuses owners chown cannot take as they are: a larger number
// would be cut to 32 bits, 4294967296 becoming 0, root.
func (ix *Index) check() error {
	for _, f := range ix.Files {
		for _, id := range []struct {
			what string
			v    int
		}{{"uid", f.UID}, {"gid", f.GID}} {
			if id.v < 0 || id.v > maxID {
				return fmt.Errorf("index: %s: %s %d is out of range (0 to %d)", f.Dest, id.what, id.v, maxID)
			}
		}
	}
	return nil
}
