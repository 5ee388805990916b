package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/fsat"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// RecordPath is where render remembers what it wrote. It lives in /etc, so
// it lives and dies with the files it describes.
const RecordPath = "etc/rootfs-trim/rendered.json"

// Record is what the last render wrote.
type Record struct {
	Version int          `json:"version"`
	Runtime string       `json:"runtime"`
	CNI     string       `json:"cni"`
	Files   []RecordFile `json:"files"`
}

// RecordFile is one file render wrote.
type RecordFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	From   string `json:"from"` // the deferred copy or template it came from
}

// Result is what a render did.
type Result struct {
	Written   []string
	Unchanged []string
	Removed   []string
	// Modified lists files of the previous render that someone changed
	// since; they are replaced or removed all the same, and said so.
	Modified []string
	// Foreign lists files in /etc that the policy forbids and that render
	// did not write: packages or programs created them after the image was
	// built (podman's default network at first use, say).
	Foreign []Foreign
	// Left lists files the record names that render did not take back.
	Left []Left
	// Notes say what render did for the choice beyond copying and
	// rendering (a bridge rewritten for the pod CIDR, say).
	Notes []string
	// Stopped and Started are the runtimes' units render stopped and
	// started (Options.Units).
	Stopped, Started []string
}

// Left is a recorded file render left in place, and why.
type Left struct {
	Path string
	Why  string
}

// Foreign is a file render did not write that the policy forbids.
type Foreign struct {
	Path    string
	Policy  string
	Removed bool
	// Link is set for a symlink at a directory the policy's paths lie in
	// (etc/cni -> ../opt/evilcni): its target, which render never follows
	// nor removes; what is beneath it bypasses the policy.
	Link string
}

// Options configures Render.
type Options struct {
	Root   string // "/" at boot
	Choice Choice
	DryRun bool
	// Save records the choice on the persistent disk (ChoicePath) for the
	// boot unit to render again after a VM restart.
	Save bool
	// Units, if set, is the running system's service manager: render
	// makes exactly the chosen runtime's units run, after writing /etc.
	Units Units
}

// planned is one file to write.
type planned struct {
	dest string
	data []byte
	mode uint32
	uid  int
	gid  int
	from string
	kind contract.Kind
	// link: a deferred symlink, restored as a symlink whose target is
	// data, never followed.
	link bool
}

// Render writes /etc for the choice. Everything is read, checked and
// rendered before the first write: an unknown runtime, a missing value, a
// template error or a missing deferred file writes nothing.
func Render(opt Options) (*Result, error) {
	if err := opt.Choice.Validate(); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(opt.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	ix, err := readIndex(root)
	if err != nil {
		return nil, err
	}
	plan, notes, err := makePlan(root, ix, opt.Choice)
	if err != nil {
		return nil, err
	}
	old := readRecord(root)

	t, err := openTree(opt.Root)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if err := refuseLinkedDirs(t, plan); err != nil {
		return nil, err
	}
	dests := renderDests(ix)

	res := &Result{Left: old.left, Notes: notes}
	if !opt.DryRun {
		// A render killed mid-write leaves its temporary files behind.
		for _, d := range append(slices.Sorted(maps.Keys(dests)), RecordPath) {
			if _, err := t.RemoveRegular(tempName(d)); err != nil {
				return res, fmt.Errorf("removing the temporary file for /%s: %w", d, err)
			}
		}
	}
	rec := &Record{Version: 1, Runtime: opt.Choice.Runtime, CNI: opt.Choice.Class()}
	keep, err := writePlan(t, plan, old, rec, res, opt.DryRun)
	if err != nil {
		return res, err
	}
	if err := takeBack(t, old, keep, dests, res, opt.DryRun); err != nil {
		return res, err
	}
	if !opt.DryRun {
		if err := writeJSON(t, RecordPath, rec, "writing"); err != nil {
			return res, err
		}
		if opt.Save {
			if err := writeJSON(t, ChoicePath, savedChoice{1, opt.Choice}, "recording the choice in"); err != nil {
				return res, err
			}
		}
	}
	if res.Foreign, err = foreign(root, t, ix, keep, opt.DryRun); err != nil {
		return res, err
	}
	if opt.Units != nil {
		return res, switchUnits(opt.Units, opt.Choice.Runtime, res, opt.DryRun)
	}
	return res, nil
}

// refuseLinkedDirs refuses, before anything is written, a destination
// whose directory is reached through a symlink.
func refuseLinkedDirs(t *tree, plan []*planned) error {
	for _, p := range plan {
		if dir, err := t.OpenDir(path.Dir(p.dest), false, nil); err == nil {
			unix.Close(dir)
		} else if errors.Is(err, fsat.ErrSymlinkOnPath) {
			return fmt.Errorf("nothing written: /%s: %w", p.dest, err)
		}
	}
	return nil
}

// writePlan writes each planned file whose content differs from what is
// there, recording it in rec and res, and returns the destinations planned.
func writePlan(t *tree, plan []*planned, old *record, rec *Record, res *Result, dryRun bool) (map[string]bool, error) {
	keep := map[string]bool{}
	for _, p := range plan {
		keep[p.dest] = true
		sum := digest.Bytes(p.data)
		rec.Files = append(rec.Files, RecordFile{Path: p.dest, SHA256: sum, From: p.from})
		have, err := t.ReadEntry(p.dest)
		if err == nil && bytes.Equal(have, p.data) {
			res.Unchanged = append(res.Unchanged, p.dest)
			continue
		}
		if err == nil {
			if prev := old.find(p.dest); prev == nil || digest.Bytes(have) != prev.SHA256 {
				res.Modified = append(res.Modified, p.dest)
			}
		}
		res.Written = append(res.Written, p.dest)
		if dryRun {
			continue
		}
		if err := t.write(p); err != nil {
			return keep, fmt.Errorf("writing /%s: %w", p.dest, err)
		}
	}
	return keep, nil
}

// takeBack removes what the earlier render wrote and this one does not
// keep, if it is still what was written and a render destination (dests);
// anything else is left, and said why in res.
func takeBack(t *tree, old *record, keep, dests map[string]bool, res *Result, dryRun bool) error {
	for _, f := range old.Files {
		if keep[f.Path] {
			continue
		}
		if !dests[f.Path] {
			res.Left = append(res.Left, Left{f.Path, "no deferred file or template in the index has it as destination"})
			continue
		}
		have, err := t.ReadEntry(f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // already gone
		case err != nil:
			res.Left = append(res.Left, Left{f.Path, err.Error()})
			continue
		case digest.Bytes(have) != f.SHA256:
			res.Left = append(res.Left, Left{f.Path, "changed since render wrote it"})
			continue
		}
		res.Removed = append(res.Removed, f.Path)
		if !dryRun {
			if err := t.Unlink(f.Path); err != nil && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("removing /%s: %w", f.Path, err)
			}
		}
	}
	return nil
}

// renderDests is every destination the index can render, whatever the
// choice: the only files render may ever take back.
func renderDests(ix *contract.Index) map[string]bool {
	dests := map[string]bool{}
	for _, f := range ix.Files {
		if f.Kind != contract.Deferred && f.Kind != contract.Template {
			continue
		}
		if d, err := pathx.Clean(f.Dest); err == nil && strings.HasPrefix(d, "etc/") {
			dests[d] = true
		}
	}
	return dests
}

func readIndex(root *os.Root) (*contract.Index, error) {
	f, err := root.Open(contract.IndexPath)
	if err != nil {
		return nil, fmt.Errorf("no index at /%s: this image was not made by rootfs-trim apply (%w)", contract.IndexPath, err)
	}
	defer f.Close()
	ix, err := contract.DecodeIndex(f)
	if err != nil {
		return nil, fmt.Errorf("/%s: %w", contract.IndexPath, err)
	}
	return ix, nil
}

// BridgeConflist is where minikube's bridge CNI writes its config
// (cni/bridge.go Bridge.netconf), and render's bridge-cni template too.
const BridgeConflist = "etc/cni/net.d/1-k8s.conflist"

// makePlan reads every deferred file and renders every template that the
// choice selects, verifying each source against the index.
func makePlan(root *os.Root, ix *contract.Index, c Choice) ([]*planned, []string, error) {
	class := c.Class()
	data := map[string]any{
		"Runtime": c.Runtime, "CNI": class, "Socket": c.Socket(),
		"PodCIDR": c.CIDR(), "Values": c.Values,
	}
	if c.Values == nil {
		data["Values"] = map[string]string{}
	}
	var plan []*planned
	var notes []string
	byDest := map[string]string{}
	var problems []string
	var bridgeTemplate *contract.IndexFile
	for i, f := range ix.Files {
		if f.Kind == contract.Template && f.Dest == BridgeConflist {
			bridgeTemplate = &ix.Files[i]
		}
		if f.Kind != contract.Deferred && f.Kind != contract.Template {
			continue
		}
		if !f.When.Holds(c.Runtime, class) {
			continue
		}
		if prev, ok := byDest[f.Dest]; ok {
			problems = append(problems, fmt.Sprintf("both %s and %s write /%s for this choice", prev, f.Name, f.Dest))
			continue
		}
		byDest[f.Dest] = f.Name
		p, err := planFile(root, f, data)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		plan = append(plan, p)
	}
	if class == ClassNone && len(problems) == 0 {
		var err error
		plan, notes, err = noClusterCNI(root, plan, bridgeTemplate, c, data)
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, nil, fmt.Errorf("nothing written:\n  %s", strings.Join(problems, "\n  "))
	}
	sort.Slice(plan, func(i, j int) bool { return plan[i].dest < plan[j].dest })
	return plan, notes, nil
}

// planFile reads one deferred file or renders one template.
func planFile(root *os.Root, f contract.IndexFile, data map[string]any) (*planned, error) {
	dest, err := pathx.Clean(f.Dest)
	if err != nil || !strings.HasPrefix(dest, "etc/") {
		return nil, fmt.Errorf("index entry %s: destination %q is not under /etc", f.Name, f.Dest)
	}
	src, err := pathx.Clean(f.Source)
	if err != nil || !strings.HasPrefix(src, contract.Dir+"/") {
		return nil, fmt.Errorf("index entry %s: source %q is not under /usr/share/minikube", f.Name, f.Source)
	}
	if f.Link != "" {
		return planLink(root, f, src, dest)
	}
	raw, err := root.ReadFile(src)
	if err != nil {
		return nil, fmt.Errorf("%s %s: source /%s is missing: %v", f.Kind, f.Name, src, errors.Unwrap(err))
	}
	if digest.Bytes(raw) != f.SHA256 {
		return nil, fmt.Errorf("%s %s: /%s does not match the index (sha256 %s, want %s)", f.Kind, f.Name, src, digest.Bytes(raw), f.SHA256)
	}
	mode, err := strconv.ParseUint(f.Mode, 8, 32)
	if err != nil || mode > 0o7777 {
		return nil, fmt.Errorf("%s %s: bad mode %q in the index", f.Kind, f.Name, f.Mode)
	}
	p := &planned{dest: dest, data: raw, mode: uint32(mode), uid: f.UID, gid: f.GID, from: "/" + src, kind: f.Kind}
	if f.Kind == contract.Template {
		out, err := rules.ExecuteTemplate(f.Name, raw, data)
		if err != nil {
			return nil, fmt.Errorf("template %s: %v", f.Name, missingValue(err))
		}
		if err := checkJSON(dest, out); err != nil {
			return nil, fmt.Errorf("template %s: %v", f.Name, err)
		}
		p.data = out
	}
	return p, nil
}

// planLink plans a deferred symlink: the copy in the image must be a
// symlink with the target the index records; it is restored as one.
func planLink(root *os.Root, f contract.IndexFile, src, dest string) (*planned, error) {
	if f.Kind != contract.Deferred {
		return nil, fmt.Errorf("%s %s: only a deferred file may be a symlink", f.Kind, f.Name)
	}
	target, err := root.Readlink(src)
	if err != nil {
		return nil, fmt.Errorf("%s %s: source /%s is not the symlink the index records: %v", f.Kind, f.Name, src, errors.Unwrap(err))
	}
	if target != f.Link || digest.Bytes([]byte(target)) != f.SHA256 {
		return nil, fmt.Errorf("%s %s: /%s points at %s, the index says %s", f.Kind, f.Name, src, names.Quote(target), names.Quote(f.Link))
	}
	return &planned{dest: dest, data: []byte(target), uid: f.UID, gid: f.GID, from: "/" + src, kind: f.Kind, link: true}, nil
}

// noClusterCNI gives the runtime a default network with the pod CIDR when
// minikube deploys no CNI (--cni=false): the runtime's own deferred bridge,
// rewritten as minikube rewrites it, else minikube's bridge conflist.
func noClusterCNI(root *os.Root, plan []*planned, bridgeTemplate *contract.IndexFile, c Choice, data map[string]any) ([]*planned, []string, error) {
	var kept []*planned
	var notes []string
	bridges := 0
	for _, p := range plan {
		if p.kind != contract.Deferred || p.link || !strings.HasPrefix(p.dest, "etc/cni/net.d/") {
			kept = append(kept, p)
			continue
		}
		types, ok := cniPlugins(p.data)
		switch {
		case ok && c.Runtime == "crio" && len(types) == 1 && types[0] == "loopback":
			notes = append(notes, fmt.Sprintf("/%s not restored: minikube disables cri-o's loopback config (cni.ConfigureLoopbackCNI)", p.dest))
			continue
		case ok && slices.Contains(types, "bridge"):
			out, err := rewriteBridge(p.data, c.CIDR())
			if err != nil {
				return nil, nil, fmt.Errorf("rewriting %s's bridge /%s for pod CIDR %s: %v", c.Runtime, p.dest, c.CIDR(), err)
			}
			p.data = out
			bridges++
			notes = append(notes, fmt.Sprintf("/%s: %s's bridge, subnet set to %s as minikube's configureAllBridgeCNIs does", p.dest, c.Runtime, c.CIDR()))
		}
		kept = append(kept, p)
	}
	if bridges > 0 {
		return kept, notes, nil
	}
	if bridgeTemplate == nil {
		return nil, nil, fmt.Errorf("--cni=false: %s has no deferred bridge and the index has no template for /%s", c.Runtime, BridgeConflist)
	}
	p, err := planFile(root, *bridgeTemplate, data)
	if err != nil {
		return nil, nil, err
	}
	notes = append(notes, fmt.Sprintf("/%s: %s ships no bridge of its own; minikube's bridge with %s is the pod network", p.dest, c.Runtime, c.CIDR()))
	return append(kept, p), notes, nil
}

// missingValue turns text/template's "map has no entry for key" into a
// message that names the flag to give.
func missingValue(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, `map has no entry for key "`); i >= 0 {
		key := strings.TrimSuffix(msg[i+len(`map has no entry for key "`):], `"`)
		return fmt.Errorf("needs value %q: give --set %s=VALUE", key, key)
	}
	return err
}

// record is the last render's record as read: files under /etc only, and
// what was set aside (left) with the reason.
type record struct {
	Record
	left []Left
}

// readRecord reads the last render's record. It is not trusted: an
// unreadable record, or a path outside /etc, is reported and ignored, so
// that nothing is taken back on its word.
func readRecord(root *os.Root) *record {
	data, err := root.ReadFile(RecordPath)
	if errors.Is(err, fs.ErrNotExist) {
		return &record{}
	}
	var r record
	if err == nil {
		err = json.Unmarshal(data, &r.Record)
	}
	if err != nil {
		return &record{left: []Left{{RecordPath, fmt.Sprintf("unreadable record: %v", err)}}}
	}
	files := r.Files[:0]
	for _, f := range r.Files {
		if c, err := pathx.Clean(f.Path); err != nil || c != f.Path || !strings.HasPrefix(c, "etc/") || c == RecordPath {
			r.left = append(r.left, Left{f.Path, "not a file under /etc that render writes"})
			continue
		}
		files = append(files, f)
	}
	r.Files = files
	return &r
}

func (r *record) find(p string) *RecordFile {
	if i := slices.IndexFunc(r.Files, func(f RecordFile) bool { return f.Path == p }); i >= 0 {
		return &r.Files[i]
	}
	return nil
}

// writeJSON writes v, indented, to name; doing says what for the error
// ("writing /etc/...").
func writeJSON(t *tree, name string, v any, doing string) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := t.write(&planned{dest: name, data: append(data, '\n'), mode: 0o644}); err != nil {
		return fmt.Errorf("%s /%s: %w", doing, name, err)
	}
	return nil
}

// foreign finds files under /etc that the policy forbids and that this
// render did not write.
func foreign(root *os.Root, t *tree, ix *contract.Index, ours map[string]bool, dryRun bool) ([]Foreign, error) {
	// The index carries the policy as apply had it; the boot step matches
	// it with the very code apply used (rules.Forbid.Forbids).
	type item struct {
		p contract.IndexPolicy
		f *rules.Forbid
	}
	var items []item
	policyDirs := map[string]string{} // the first policy whose paths lie in a directory
	for _, p := range ix.Policy {
		f := &rules.Forbid{Name: p.Name, Paths: patterns(p.Forbid), Allow: patterns(p.Allow), AllowTargets: patterns(p.AllowTargets)}
		for _, t := range p.Types {
			f.Types = append(f.Types, rules.EntryType(t))
		}
		items = append(items, item{p: p, f: f})
		for _, pat := range f.Paths {
			for _, d := range pat.Dirs() {
				if _, ok := policyDirs[d]; !ok {
					policyDirs[d] = p.Name
				}
			}
		}
	}
	var found []Foreign
	err := fs.WalkDir(root.FS(), "etc", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || ours[p] || p == RecordPath {
			return nil
		}
		typ, target := "file", ""
		if d.Type()&fs.ModeSymlink != 0 {
			typ = "symlink"
			target, _ = root.Readlink(p)
			if name, ok := policyDirs[p]; ok {
				found = append(found, Foreign{Path: p, Policy: name, Link: target})
				return nil
			}
		} else if !d.Type().IsRegular() {
			typ = "other"
		}
		for _, it := range items {
			if it.f.Forbids(p, rules.EntryType(typ), target) {
				f := Foreign{Path: p, Policy: it.p.Name}
				if it.p.AtBoot == "remove" && !dryRun {
					if err := t.Unlink(p); err != nil {
						return err
					}
					f.Removed = true
				}
				found = append(found, f)
				break
			}
		}
		return nil
	})
	return found, err
}

// patterns are the globs that parse (apply wrote them from patterns that
// did); nil for none.
func patterns(globs []string) []rules.Pattern {
	var out []rules.Pattern
	for _, g := range globs {
		if pat, err := rules.ParsePattern(g); err == nil {
			out = append(out, pat)
		}
	}
	return out
}
