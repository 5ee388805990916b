package check

import (
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"

	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/rootfs-trim/rootfs-trim/internal/canon"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// LockVersion is the lock file format version.
const LockVersion = 1

// LockSchema names the lock's JSON Schema, docs/schema/lock.json. Any
// change to the lock's fields changes it (and LockVersion with it).
const LockSchema = "rootfs-trim/lock/v1"

// maxLockedContent bounds the content kept in the lock: deferred files are
// small configuration files, and keeping them lets check show a diff when
// upstream changes one.
const maxLockedContent = 64 << 10

// Lock records, per package, what the rules matched when it was last
// accepted. It is sorted and indented so that a bump's pull request shows a
// readable diff of it.
type Lock struct {
	// Schema is LockSchema; a lock written before the field existed
	// (rootfs-trim 0.1.0, version 1) has none, and is read as it is:
	// --update-lock adds it.
	Schema   string                  `json:"schema"`
	Version  int                     `json:"version"`
	Packages map[string]*LockPackage `json:"packages"`
}

// LockPackage is one package's accepted state.
type LockPackage struct {
	Version string     `json:"version,omitempty"`
	Files   []LockFile `json:"files"`
}

// LockFile is one file a rule or the policy matched.
type LockFile struct {
	Path string `json:"path"`
	// PathB64 is Path in base64 when it is not UTF-8 (see names.B64).
	PathB64 string `json:"path_b64,omitempty"`
	SHA256  string `json:"sha256"`
	Mode    string `json:"mode"`
	Type    string `json:"type"`
	Rule    string `json:"rule,omitempty"`   // the rule that handles it
	Action  string `json:"action,omitempty"` // strip, defer, relocate
	Policy  string `json:"policy,omitempty"` // the policy item it violates, if any
	// Content of deferred files, for diffs when upstream changes them.
	Content string `json:"content,omitempty"`
	// fallback is the fallback rule that would strip the file: check
	// names it, but a file only the fallback handles is locked and
	// reported as a new offender, unreviewed.
	fallback string
	// seenAs says where the booted system sees the file when that is not
	// its path (Verdict.Alias), for the finding.
	seenAs string
	// layer is, in an image, the layer that added the file, for the
	// finding; never in the lock (a rebuild moves files between layers).
	layer *ociimage.Layer
}

// NewLock returns an empty lock: what a first --update-lock starts from.
func NewLock() *Lock { return &Lock{Version: LockVersion, Packages: map[string]*LockPackage{}} }

// ReadLock reads a lock file. A missing file is an error (wrapping
// fs.ErrNotExist): taken as an empty lock, a mistyped path would make every
// package unlocked, and --update-lock would create the mistyped file.
func ReadLock(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var l Lock
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if l.Schema != "" && l.Schema != LockSchema {
		return nil, fmt.Errorf("%s: lock schema %q, want %q (or none, as before it was recorded)", path, l.Schema, LockSchema)
	}
	if l.Version != LockVersion {
		return nil, fmt.Errorf("%s: lock version %d, want %d", path, l.Version, LockVersion)
	}
	if l.Packages == nil {
		l.Packages = map[string]*LockPackage{}
	}
	for name, p := range l.Packages {
		for i := range p.Files {
			f := &p.Files[i]
			if f.Path, err = names.Exact(f.Path, f.PathB64); err != nil {
				return nil, fmt.Errorf("%s: package %s: path_b64: %w", path, name, err)
			}
			f.PathB64 = ""
		}
	}
	return &l, nil
}

// Encode writes the lock canonically: same state, same bytes.
func (l *Lock) Encode(w io.Writer) error {
	for _, p := range l.Packages {
		sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Path < p.Files[j].Path })
		if p.Files == nil {
			p.Files = []LockFile{}
		}
		for i := range p.Files {
			p.Files[i].PathB64 = names.B64(p.Files[i].Path)
		}
	}
	l.Schema = LockSchema
	return canon.JSON(w, l) // map keys come out sorted
}

func (p *LockPackage) file(path string) *LockFile {
	for i := range p.Files {
		if p.Files[i].Path == path {
			return &p.Files[i]
		}
	}
	return nil
}
