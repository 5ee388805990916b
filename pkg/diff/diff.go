package diff

import (
	"maps"
	"sort"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// Schema names diff --report json's JSON Schema, docs/schema/diff.json,
// as the other documents name theirs (docs/reference.md): any change to
// Result's fields changes it.
const Schema = "rootfs-trim/diff/v3"

// What a file change can be.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// What of a changed file differs, in the order they are listed.
const (
	WhatType    = "type"
	WhatContent = "content"
	WhatMode    = "mode"
	WhatOwner   = "owner"
	WhatLink    = "link"
	WhatDevice  = "device"
	// WhatXattrs: the extended attributes (file capabilities among them).
	WhatXattrs = "xattrs"
	// WhatHandling: a manifest record that apply handled differently
	// (another rule, kind, destination or package).
	WhatHandling = "handling"
)

// Record is what diff keeps of one entry.
type Record struct {
	Type string `json:"type"`
	Mode string `json:"mode"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	Size int64  `json:"size"`
	// SHA256 is the hex sha256 of a regular file's data (for a hard link,
	// of the file it names); empty for other types.
	SHA256 string `json:"sha256,omitempty"`
	// Link is a symlink's target or the path a hard link names.
	Link    string `json:"link,omitempty"`
	LinkB64 string `json:"link_b64,omitempty"`
	// Device is a char or block node's "major,minor".
	Device string `json:"device,omitempty"`
	// Xattrs are the extended attributes, values as list shows them
	// (archive.XattrText: security.capability as getcap prints it).
	Xattrs map[string]string `json:"xattrs,omitempty"`
	// Kind, To and Rule are set for a manifest's records: what apply did
	// with the file, where it went, and the rule.
	Kind string `json:"kind,omitempty"`
	To   string `json:"to,omitempty"`
	Rule string `json:"rule,omitempty"`
}

// File is one path that differs.
type File struct {
	Change  string `json:"change"` // Added, Removed or Changed
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	// What lists what differs of a Changed file.
	What []string `json:"what,omitempty"`
	Old  *Record  `json:"old,omitempty"`
	New  *Record  `json:"new,omitempty"`
	// Forbidden: the rules care about the path, on either side (the
	// policy forbids it or a rule matches it).
	Forbidden bool `json:"forbidden,omitempty"`
	// Deferred: deferred content, what the boot step restores (a file a
	// defer rule matches, or a deferred copy in an applied image).
	Deferred bool `json:"deferred,omitempty"`
	// Capability: the file's capabilities (security.capability) differ
	// between the sides, or an added file has some: what it may do as
	// root changed, whatever the rules say of the path.
	Capability bool `json:"capability,omitempty"`
	// Rule names the rule that matches the path, on the new side if it
	// has one; pos is where it is written.
	Rule string    `json:"rule,omitempty"`
	pos  rules.Pos `json:"-"`
}

// Pos is where the rule that matches the file is written ("" File when
// none does).
func (f *File) Pos() rules.Pos { return f.pos }

// Package is everything that differs of one package.
type Package struct {
	Package string `json:"package"`
	Files   []File `json:"files"`
	// OffendersNew are the new input's audit findings that the old one
	// does not have; OffendersGone the reverse (a gone offender may mean
	// a stale rule).
	OffendersNew  []trim.Finding `json:"offenders_new"`
	OffendersGone []trim.Finding `json:"offenders_gone"`
}

// Source describes one side.
type Source struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"`   // archive, tree or manifest
	Format  string `json:"format"` // as list's first line says it
	Entries int    `json:"entries"`
	// Owners says where the owners came from when the input told (its
	// dpkg database).
	Owners string `json:"owners,omitempty"`
}

// Summary counts what differs.
type Summary struct {
	Added            int `json:"added"`
	Removed          int `json:"removed"`
	Changed          int `json:"changed"`
	OffendersNew     int `json:"offenders_new"`
	OffendersGone    int `json:"offenders_gone"`
	DeferredChanged  int `json:"deferred_changed"`
	ForbiddenChanged int `json:"forbidden_changed"`
	// CapabilitiesChanged counts the files whose capabilities changed
	// (File.Capability).
	CapabilitiesChanged int `json:"capabilities_changed"`
	// Fails: something the rules care about changed (diff exits 1).
	Fails bool `json:"fails"`
}

// Result is the whole diff, and diff's JSON document.
type Result struct {
	Schema   string    `json:"schema"`
	Old      Source    `json:"old"`
	New      Source    `json:"new"`
	Packages []Package `json:"packages"`
	Summary  Summary   `json:"summary"`
}

// Empty reports whether nothing differs.
func (r *Result) Empty() bool { return len(r.Packages) == 0 }

// builder groups changes by package as they are found.
type builder struct {
	byPkg map[string]*Package
}

func (b *builder) pkg(name string) *Package {
	if b.byPkg == nil {
		b.byPkg = map[string]*Package{}
	}
	p := b.byPkg[name]
	if p == nil {
		p = &Package{Package: name}
		b.byPkg[name] = p
	}
	return p
}

// result sorts what was found into a Result and counts it.
func (b *builder) result(old, new Source) *Result {
	res := &Result{Schema: Schema, Old: old, New: new, Packages: []Package{}}
	for _, p := range b.byPkg {
		sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Path < p.Files[j].Path })
		if p.Files == nil {
			p.Files = []File{}
		}
		p.OffendersNew, p.OffendersGone = withB64(p.OffendersNew), withB64(p.OffendersGone)
		res.Packages = append(res.Packages, *p)
	}
	sort.Slice(res.Packages, func(i, j int) bool { return res.Packages[i].Package < res.Packages[j].Package })
	s := &res.Summary
	for i := range res.Packages {
		p := &res.Packages[i]
		for j := range p.Files {
			f := &p.Files[j]
			f.PathB64 = names.B64(f.Path)
			for _, r := range []*Record{f.Old, f.New} {
				if r != nil {
					r.LinkB64 = names.B64(r.Link)
				}
			}
			switch f.Change {
			case Added:
				s.Added++
			case Removed:
				s.Removed++
			default:
				s.Changed++
			}
			switch {
			case f.Deferred:
				s.DeferredChanged++
			case f.Forbidden:
				s.ForbiddenChanged++
			}
			if f.Capability {
				s.CapabilitiesChanged++
			}
		}
		s.OffendersNew += len(p.OffendersNew)
		s.OffendersGone += len(p.OffendersGone)
	}
	s.Fails = s.OffendersNew+s.OffendersGone+s.DeferredChanged+s.ForbiddenChanged+s.CapabilitiesChanged > 0
	return res
}

// withB64 is fs, never nil (JSON's []), each path in base64 too where it
// is not UTF-8.
func withB64(fs []trim.Finding) []trim.Finding {
	for i := range fs {
		fs[i].PathB64 = names.B64(fs[i].Path)
	}
	if fs == nil {
		return []trim.Finding{}
	}
	return fs
}

// differs are the checks compareRecords makes, in the order What lists them.
var differs = []struct {
	what   string
	differ func(a, b *Record) bool
}{
	{WhatType, func(a, b *Record) bool { return a.Type != b.Type }},
	{WhatContent, func(a, b *Record) bool { return a.SHA256 != b.SHA256 || a.Size != b.Size }},
	{WhatMode, func(a, b *Record) bool { return a.Mode != b.Mode }},
	{WhatOwner, func(a, b *Record) bool { return a.UID != b.UID || a.GID != b.GID }},
	{WhatLink, func(a, b *Record) bool { return a.Link != b.Link }},
	{WhatDevice, func(a, b *Record) bool { return a.Device != b.Device }},
	{WhatXattrs, func(a, b *Record) bool { return !maps.Equal(a.Xattrs, b.Xattrs) }},
	{WhatHandling, func(a, b *Record) bool { return a.Kind != b.Kind || a.To != b.To || a.Rule != b.Rule }},
}

// compareRecords says what differs between two records of one path.
func compareRecords(a, b *Record) []string {
	var what []string
	for _, d := range differs {
		if d.differ(a, b) {
			what = append(what, d.what)
		}
	}
	return what
}

// capabilityChange reports whether f changes what its file may do as
// root: its capabilities differ, or it is added with some.
func capabilityChange(f File) bool {
	const k = archive.CapabilityXattr
	switch f.Change {
	case Added:
		return f.New.Xattrs[k] != ""
	case Changed:
		return f.Old.Xattrs[k] != f.New.Xattrs[k]
	}
	return false
}

// findingKey is what makes two inputs' findings the same finding: not the
// input, and not the package (an owner's rename is a file's business).
func findingKey(f trim.Finding) string {
	return f.Check + "\x00" + f.Path + "\x00" + f.Rule + "\x00" + f.Policy + "\x00" + f.Target
}

// compareFindings puts the findings only one side has into their
// package's offenders new and gone.
func (b *builder) compareFindings(old, new []trim.Finding) {
	seen := map[string]int{}
	for _, f := range old {
		seen[findingKey(f)]++
	}
	for _, f := range new {
		k := findingKey(f)
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		p := b.pkg(f.Package)
		p.OffendersNew = append(p.OffendersNew, f)
	}
	for _, f := range old {
		k := findingKey(f)
		if seen[k] > 0 {
			seen[k]--
			p := b.pkg(f.Package)
			p.OffendersGone = append(p.OffendersGone, f)
		}
	}
}
