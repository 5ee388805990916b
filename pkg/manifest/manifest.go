package manifest

import (
	"io"
	"sort"

	"github.com/rootfs-trim/rootfs-trim/internal/canon"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// Version is the manifest format version; bump it on any incompatible change.
// 2: an output segment's offset and length are the output's (they were
// the input's), the input's are the input's segments.
const Version = 2

// Schema names the manifest's JSON Schema, docs/schema/manifest.json. Any
// change to the manifest's fields changes it; Version changes only with an
// incompatible one (an added optional field, as v2's segments, is not; v3's
// output segments at the output's offsets are).
const Schema = "rootfs-trim/manifest/v3"

// Manifest is the record of one apply.
type Manifest struct {
	Schema  string `json:"schema"` // Schema
	Version int    `json:"version"`
	// Tool is "rootfs-trim" plus its version.
	Tool   string `json:"tool"`
	Input  Target `json:"input"`
	Output Target `json:"output"`
	Rules  Rules  `json:"rules"`
	// Changes lists every entry removed, relocated, deferred or added,
	// sorted by path then kind.
	Changes []Change `json:"changes"`
	// Stale lists must-match rules of packages present in the input that
	// matched nothing.
	Stale []StaleRule `json:"stale_rules"`
}

// Target describes an input or output.
type Target struct {
	Path        string `json:"path"`
	Format      string `json:"format"`
	Compression string `json:"compression,omitempty"`
	// Compressor is what wrote the output's compression: the same input
	// and rules give the same bytes for the same compressor and level.
	Compressor string `json:"compressor,omitempty"`
	// Digest is "sha256:<hex>" of the file's bytes, or for a directory of
	// its canonical listing (see trim.TreeDigest).
	Digest  string `json:"digest"`
	Entries int    `json:"entries"`
	// Level says why the output was compressed at its level, when no
	// --level chose it (see Segment.Level).
	Level string `json:"level,omitempty"`
	// Segments: an initrd of several segments, each where it is in this
	// file; the output's also say what was done to each.
	Segments []Segment `json:"segments,omitempty"`
}

// Segment is one segment of an initrd.
type Segment struct {
	// Input is the input segment's number, 1-based; 0 for the one apply
	// added. Offset and Length are where the segment is in the file of
	// the Target it is listed in: the input's offsets under input, the
	// output's under output.
	Input       int    `json:"input"`
	Offset      int64  `json:"offset"`
	Length      int64  `json:"length"`
	Compression string `json:"compression"`
	// Action: copied (its bytes as they were), rewritten, or added; only
	// an output's segments have one.
	Action     string `json:"action,omitempty"`
	Compressor string `json:"compressor,omitempty"`
	// Level says why a segment compressed anew without --level has its
	// level: the input's (read from its header), or the default of the
	// producer its layout and header point to.
	Level string `json:"level,omitempty"`
}

// Rules identifies the rule set.
type Rules struct {
	Dir    string `json:"dir"`
	Digest string `json:"digest"`
}

// Kind is what became of a changed entry: "removed", "relocated",
// "retargeted", "deferred", "added", "template", "created" or "dangling"
// (docs/schema/manifest.json). It is the kind the index records, named
// here so that a program reading manifests can name it too.
type Kind = contract.Kind

// Change is one entry the run touched.
type Change struct {
	Kind Kind   `json:"kind"`
	Path string `json:"path"`
	// PathB64 is Path in base64 when it is not UTF-8 (see names.B64).
	PathB64 string `json:"path_b64,omitempty"`
	// To is the new path of a relocated or deferred entry.
	To      string `json:"to,omitempty"`
	ToB64   string `json:"to_b64,omitempty"`
	Type    string `json:"type"`
	Package string `json:"package"`
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Size    int64  `json:"size"`
	Mode    string `json:"mode"`
	SHA256  string `json:"sha256,omitempty"`
	// Unreviewed: only a fallback rule handled the file (no package rule
	// names it); apply warned about it.
	Unreviewed bool `json:"unreviewed,omitempty"`
	// Kept is, for a deferred file removed instead of deferred, the file
	// of its package restored at the same path in its place (the one
	// already at that path).
	Kept    string `json:"kept,omitempty"`
	KeptB64 string `json:"kept_b64,omitempty"`
}

// StaleRule is a rule that protects nothing any more.
type StaleRule struct {
	Rule    string `json:"rule"`
	Package string `json:"package"`
	Pos     string `json:"pos"`
}

// Encode writes m as indented JSON with a final newline, its changes and
// stale rules in their canonical order.
func (m *Manifest) Encode(w io.Writer) error {
	sort.SliceStable(m.Changes, func(i, j int) bool {
		a, b := m.Changes[i], m.Changes[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Kind < b.Kind
	})
	sort.Slice(m.Stale, func(i, j int) bool { return m.Stale[i].Rule < m.Stale[j].Rule })
	if m.Changes == nil {
		m.Changes = []Change{}
	}
	if m.Stale == nil {
		m.Stale = []StaleRule{}
	}
	m.Schema = Schema
	for i := range m.Changes {
		c := &m.Changes[i]
		c.PathB64, c.ToB64, c.KeptB64 = names.B64(c.Path), names.B64(c.To), names.B64(c.Kept)
	}
	return canon.JSON(w, m)
}
