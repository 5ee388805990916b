package check

import (
	"cmp"
	"path"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// scanWithRuntimes scans in and returns what its configs make (scan)
// and its runtimeFindings, from what the one scan gathered.
func scanWithRuntimes(opt Options, in Input, o *owners.Table, state func(string) *pkgState) ([]trim.Finding, []Finding, error) {
	boot := trim.NewBootCollector()
	found, err := scan(opt, in, o, state, boot)
	if err != nil {
		return nil, nil, err
	}
	runtimes, err := runtimeFindings(opt.Set, in, o, boot)
	return found, runtimes, err
}

// runtimeFindings report each runtime unit the whole image in starts at
// boot (trim.ImageEnablers; boot is what its scan gathered), naming the
// unit, its package and what enables it, as audit's do: an error where
// the boot_runtime policy forbids it and apply leaves it enabled, a note
// where apply takes it away (check is the gate before apply, so the image
// it reads still starts it) or where no policy forbids it.
//
// The lock records no runtime: a bump that makes the image start a
// forbidden one fails every check, locked or not, and its links are files
// the lock already records (the policy's rule strips them); what else a
// bump enables is what the policy allows, shown in these notes.
func runtimeFindings(set *rules.Set, in Input, o *owners.Table, boot *enablement.Collector) ([]Finding, error) {
	if set == nil || in.FileList == "" && !in.Image {
		return nil, nil
	}
	byRuntime, err := trim.ImageEnablers(in.Path, boot)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, rt := range contract.Runtimes {
		// No policy allows every runtime.
		b := cmp.Or(set.BootRuntime, &rules.BootRuntime{Enabled: rt})
		for _, e := range byRuntime[rt] {
			f := trim.RuntimeFinding(b, rt, e, o)
			f.Input, f.Package = in.Path, canonical(set, f.Package)
			if b.Forbids(rt) {
				var how string
				f.Severity, how = byApply(set, e)
				f.Reason += "; " + how
			}
			out = append(out, Finding{Finding: f})
		}
	}
	return out, nil
}

// appliedAway says whether apply's boot_runtime rule takes e away: a link
// it strips, or what preset-all would enable where apply's preset file
// (rules.PresetPath), which sorts first, is read first.
func appliedAway(set *rules.Set, e enablement.Enabler) bool {
	if e.Link != "" {
		return set.BootRuntimeRule != nil && set.BootRuntimeRule.Matches(e.Link)
	}
	f := e.Preset.File
	return f == "" || f == rules.PresetPath || path.Base(f) > path.Base(rules.PresetPath)
}

// byApply is what apply makes of e, which enables a forbidden runtime:
// a note where it takes e away, an error where it leaves it; and how.
func byApply(set *rules.Set, e enablement.Enabler) (rules.Severity, string) {
	away := appliedAway(set, e)
	switch {
	case away && e.Link != "":
		return rules.Note, "apply takes it away: it strips the link"
	case away:
		return rules.Note, "apply takes it away: " + rules.PresetPath + ", read first, disables it"
	case e.Link != "":
		return rules.Error, "apply leaves it enabled: no rule strips the link"
	}
	return rules.Error, "apply leaves it enabled: its preset file is read before apply's " + rules.PresetPath
}
