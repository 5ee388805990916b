package trim

import (
	"cmp"
	"fmt"
	"os"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// The checks of the boot-runtime policy (rules.BootRuntime).
const (
	// CheckRuntimeEnabled: a runtime the policy forbids starts at boot,
	// by a link or by what preset-all will enable; apply disables it.
	CheckRuntimeEnabled = "runtime-enabled"
	// CheckRuntimeAllowed: the runtime the policy names starts at boot
	// (a note).
	CheckRuntimeAllowed = "runtime-allowed"
)

// RuntimeEnablers lists, for each runtime unit (contract.RuntimeUnits) of
// the tree at root, what starts it at boot once preset-all has run, by
// runtime in contract.Runtimes order.
func RuntimeEnablers(root *os.Root) (map[string][]enablement.Enabler, error) {
	ps, err := enablement.ReadPresets(root.FS())
	if err != nil {
		return nil, err
	}
	units := map[string][]enablement.Enabler{}
	for _, rt := range contract.Runtimes {
		for _, name := range contract.RuntimeUnits[rt] {
			u, err := enablement.FindUnit(root.FS(), name)
			if err != nil {
				return nil, err
			}
			units[rt] = append(units[rt], enablement.Enablers(u, ps)...)
		}
	}
	return units, nil
}

// runtimeFindings reports each runtime unit the tree in.Path starts at
// boot: a warning where the policy forbids its runtime, a note where it
// names it. Only a whole image's directory is read (not one package's,
// --package): its files are where systemctl and Buildroot's preset-all
// find them.
func runtimeFindings(set *rules.Set, in AuditInput) ([]Finding, error) {
	b := set.BootRuntime
	if in.Owners != nil && in.Owners.Fixed != "" {
		return nil, nil
	}
	if st, err := os.Stat(in.Path); b == nil || err != nil || !st.IsDir() {
		return nil, nil
	}
	root, err := os.OpenRoot(in.Path)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	byRuntime, err := RuntimeEnablers(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Path, err)
	}
	var found []Finding
	for _, rt := range contract.Runtimes {
		for _, e := range byRuntime[rt] {
			if e.Link != "" && b.Forbids(rt) {
				continue // the offender of set.BootRuntimeRule, which strips it
			}
			found = append(found, runtimeFinding(b, rt, e, in.Owners))
		}
	}
	return found, nil
}

func runtimeFinding(b *rules.BootRuntime, runtime string, e enablement.Enabler, o *owners.Table) Finding {
	path := e.Link
	if e.Preset != nil {
		// The preset file that enables it, or the unit file itself where
		// no preset line names it.
		path = cmp.Or(e.Preset.File, e.File)
	}
	f := Finding{Path: path, Package: "", Rule: b.Name, Policy: b.Name, Pos: b.Pos, Target: e.Unit,
		Check: CheckRuntimeAllowed, Action: "allowed", Severity: rules.Note}
	if o != nil {
		f.Package = o.Owner(e.File)
	}
	allowed := "none"
	if b.Enabled != "" {
		allowed = b.Enabled
	}
	f.Reason = fmt.Sprintf("%s (%s) starts at boot: %s", e.Unit, runtime, e)
	if b.Forbids(runtime) {
		f.Check, f.Action, f.Severity = CheckRuntimeEnabled, "disable", rules.Warning
		f.Reason += fmt.Sprintf("; the policy allows %s: %s", allowed, b.Reason)
	}
	return f
}
