package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// maxManifest bounds what a manifest may cost to decode: a record is a few
// hundred bytes, so this is millions of changes.
const maxManifest = 1 << 30

// IsManifest reports whether the file at path is JSON (a manifest) rather
// than an archive or a tree: no archive format starts with '{'.
func IsManifest(path string) (bool, error) {
	if path == container.Stdin {
		return false, nil // read once, as an image
	}
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() || container.IsPipe(fi) {
		// A pipe is read once, as an image: no byte of it is spent here.
		return false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for {
		c, err := br.ReadByte()
		if err != nil {
			return false, nil // empty, or only blanks: the archive reader says what it is
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{', nil
	}
}

// readManifest decodes apply's manifest at path. Fields it does not know
// are allowed: a newer manifest may carry more.
func readManifest(path string) (*manifest.Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxManifest {
		return nil, fmt.Errorf("%s: manifest of %d bytes: larger than %d", path, fi.Size(), maxManifest)
	}
	var m manifest.Manifest
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: decoding the manifest: %w", path, err)
	}
	// Version 1 differs from 2 only in its segments' offsets, which diff
	// does not compare: an earlier release's manifest is read too.
	if m.Version < 1 || m.Version > manifest.Version {
		return nil, fmt.Errorf("%s: manifest version %d, want 1 to %d", path, m.Version, manifest.Version)
	}
	for i := range m.Changes {
		c := &m.Changes[i]
		if c.Path, err = names.Exact(c.Path, c.PathB64); err != nil {
			return nil, fmt.Errorf("%s: change %d: path_b64: %w", path, i, err)
		}
		if c.To, err = names.Exact(c.To, c.ToB64); err != nil {
			return nil, fmt.Errorf("%s: change %d: to_b64: %w", path, i, err)
		}
	}
	return &m, nil
}

// manifestSide is one manifest as diff compares it: its changes by kind
// and path, its stale rules as findings.
type manifestSide struct {
	src      Source
	changes  map[string]*manifest.Change
	findings []trim.Finding
}

func manifestKey(c *manifest.Change) string { return string(c.Kind) + "\x00" + c.Path }

func readManifestSide(path string) (*manifestSide, error) {
	m, err := readManifest(path)
	if err != nil {
		return nil, err
	}
	s := &manifestSide{src: Source{Path: path, Kind: "manifest", Format: m.Input.Format, Entries: m.Input.Entries},
		changes: map[string]*manifest.Change{}}
	if m.Input.Compression != "" {
		s.src.Format += ", " + m.Input.Compression
	}
	for i := range m.Changes {
		c := &m.Changes[i]
		s.changes[manifestKey(c)] = c
		if c.Unreviewed {
			s.findings = append(s.findings, trim.Finding{Input: path, Path: c.Path, Type: c.Type, Package: c.Package,
				Rule: c.Rule, Action: string(c.Kind), Severity: rules.Error, Check: trim.CheckUnreviewed, Reason: c.Reason})
		}
	}
	for _, st := range m.Stale {
		s.findings = append(s.findings, trim.Finding{Input: path, Package: st.Package, Rule: st.Rule, Severity: rules.Warning,
			Check: trim.CheckStale, Pos: parsePos(st.Pos), Reason: "matched nothing, though package " + st.Package + " is present"})
	}
	return s, nil
}

// parsePos reads the manifest's "file:line".
func parsePos(s string) rules.Pos {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		if n, err := strconv.Atoi(s[i+1:]); err == nil {
			return rules.Pos{File: s[:i], Line: n}
		}
	}
	return rules.Pos{File: s}
}

func changeRecord(c *manifest.Change) *Record {
	return &Record{Type: c.Type, Mode: c.Mode, Size: c.Size, SHA256: c.SHA256, Kind: string(c.Kind), To: c.To, Rule: c.Rule}
}

// Manifests diffs two of apply's manifests: what apply did differently.
// Every record is something a rule or rootfs-trim itself did, so every
// difference but a created directory's is one the rules care about.
func Manifests(oldPath, newPath string) (*Result, error) {
	a, err := readManifestSide(oldPath)
	if err != nil {
		return nil, err
	}
	b, err := readManifestSide(newPath)
	if err != nil {
		return nil, err
	}
	var bl builder
	add := func(c *manifest.Change, f File) {
		f.Path = c.Path
		f.Forbidden = c.Kind != contract.Created
		f.Deferred = c.Kind == contract.Deferred
		f.Rule = c.Rule
		p := bl.pkg(c.Package)
		p.Files = append(p.Files, f)
	}
	for k, cb := range b.changes {
		ca := a.changes[k]
		if ca == nil {
			add(cb, File{Change: Added, New: changeRecord(cb)})
			continue
		}
		ra, rb := changeRecord(ca), changeRecord(cb)
		what := compareRecords(ra, rb)
		if ca.Package != cb.Package && !slices.Contains(what, WhatHandling) {
			what = append(what, WhatHandling)
		}
		if len(what) > 0 {
			add(cb, File{Change: Changed, What: what, Old: ra, New: rb})
		}
	}
	for k, ca := range a.changes {
		if b.changes[k] == nil {
			add(ca, File{Change: Removed, Old: changeRecord(ca)})
		}
	}
	bl.compareFindings(a.findings, b.findings)
	return bl.result(a.src, b.src), nil
}
