package trim

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/enablement"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
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
// the image fsys, what starts it at boot once preset-all has run, by
// runtime in contract.Runtimes order.
func RuntimeEnablers(fsys fs.FS) (map[string][]enablement.Enabler, error) {
	ps, err := enablement.ReadPresets(fsys)
	if err != nil {
		return nil, err
	}
	units := map[string][]enablement.Enabler{}
	for _, rt := range contract.Runtimes {
		for _, name := range contract.RuntimeUnits[rt] {
			u, err := enablement.FindUnit(fsys, name)
			if err != nil {
				return nil, err
			}
			units[rt] = append(units[rt], enablement.Enablers(u, ps)...)
		}
	}
	return units, nil
}

// NewBootCollector gathers, as an input streams past, what
// RuntimeEnablers reads of it.
func NewBootCollector() *enablement.Collector {
	var units []string
	for _, rt := range contract.Runtimes {
		units = append(units, contract.RuntimeUnits[rt]...)
	}
	return enablement.NewCollector(units...)
}

// bootFiles are the files whose data NewBootCollector's collectors read.
var bootFiles = NewBootCollector()

// ImageEnablers are the RuntimeEnablers of the whole image at path: a
// tree read beneath its root, any other input from what streamed
// (NewBootCollector) gathered as it was read.
func ImageEnablers(path string, streamed *enablement.Collector) (map[string][]enablement.Enabler, error) {
	var fsys fs.FS
	if st, err := os.Stat(path); err == nil && st.IsDir() && !ociimage.IsImage(path, st) {
		root, err := os.OpenRoot(path)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		fsys = root.FS()
	} else {
		fsys = streamed.FS()
	}
	byRuntime, err := RuntimeEnablers(fsys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return byRuntime, nil
}

// runtimeFindings reports each runtime unit the image in starts at boot:
// a warning where the policy forbids its runtime, a note where it names
// it or where there is no policy. Only a whole image is read (not one package's, --package): its
// files are where systemctl and Buildroot's preset-all find them. A
// forbidden link is left out: it is the offender of set.BootRuntimeRule,
// which strips it.
func runtimeFindings(set *rules.Set, in AuditInput, streamed *enablement.Collector) ([]Finding, error) {
	if in.Owners != nil && in.Owners.Fixed != "" {
		return nil, nil
	}
	byRuntime, err := ImageEnablers(in.Path, streamed)
	if err != nil {
		return nil, err
	}
	var found []Finding
	for _, rt := range contract.Runtimes {
		// No policy allows every runtime.
		b := cmp.Or(set.BootRuntime, &rules.BootRuntime{Enabled: rt})
		for _, e := range byRuntime[rt] {
			if e.Link != "" && b.Forbids(rt) {
				continue
			}
			f := RuntimeFinding(b, rt, e, in.Owners)
			f.Input = in.Path
			found = append(found, f)
		}
	}
	return found, nil
}

// RuntimeFinding is what audit says of e, which starts runtime's unit at
// boot: [runtime-enabled], a warning, where the policy b forbids the
// runtime; [runtime-allowed], a note, where it names it.
func RuntimeFinding(b *rules.BootRuntime, runtime string, e enablement.Enabler, o *owners.Table) Finding {
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
