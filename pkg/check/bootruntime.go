package check

import (
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

// runtimeFindings are the errors of the runtime units the whole image in
// would still start at boot after apply, though the boot_runtime policy
// forbids them (trim.ImageEnablers; boot is what its scan gathered), each
// naming the unit, its package and what enables it. What apply takes
// away is no finding, as a file a rule handles is none until it changes:
// check is the gate before apply, and every image starts some runtime
// there.
func runtimeFindings(set *rules.Set, in Input, o *owners.Table, boot *enablement.Collector) ([]Finding, error) {
	if set == nil || set.BootRuntime == nil || in.FileList == "" && !in.Image {
		return nil, nil
	}
	byRuntime, err := trim.ImageEnablers(in.Path, boot)
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, rt := range contract.Runtimes {
		for _, e := range byRuntime[rt] {
			if !set.BootRuntime.Forbids(rt) || appliedAway(set, e) {
				continue
			}
			f := trim.RuntimeFinding(set.BootRuntime, rt, e, o)
			f.Input, f.Package, f.Severity = in.Path, canonical(set, f.Package), rules.Error
			f.Reason += "; apply leaves it enabled: " + leftBy(e)
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

// leftBy says why apply does not take e away.
func leftBy(e enablement.Enabler) string {
	if e.Link != "" {
		return "no rule strips the link"
	}
	return "its preset file is read before apply's " + rules.PresetPath
}
