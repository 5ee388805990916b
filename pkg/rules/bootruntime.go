package rules

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// BootRuntime is the site's policy on which container runtime the image
// starts at boot, so that kubeadm finds one CRI endpoint: none (the boot
// step or minikube starts the chosen one) or the one named, whose units
// (contract.RuntimeUnits) alone may be enabled.
type BootRuntime struct {
	Name    string
	Enabled string // a runtime of contract.Runtimes, or "" for none
	Reason  string
	Link    string
	Pos     Pos
}

// Forbids reports whether the policy forbids the image to enable runtime.
func (b *BootRuntime) Forbids(runtime string) bool { return runtime != b.Enabled }

type rawBootRuntime struct {
	Name    located `yaml:"name"`
	Enabled located `yaml:"enabled"`
	Reason  located `yaml:"reason"`
	Link    located `yaml:"link"`
}

func (l *loader) bootRuntime(file string, r *rawBootRuntime) {
	pos := Pos{file, cmp.Or(r.Name.Line, r.Enabled.Line)}
	if !l.claimName(pos, "boot_runtime", r.Name.V) {
		return
	}
	if prev := l.set.BootRuntime; prev != nil {
		l.errorf(pos, "boot_runtime %s: a second one (the first is %s at %s)", r.Name.V, prev.Name, prev.Pos)
		return
	}
	b := &BootRuntime{Name: r.Name.V, Reason: r.Reason.V, Link: r.Link.V, Pos: pos}
	switch v := r.Enabled.V; {
	case v == "none":
	case slices.Contains(contract.Runtimes, v):
		b.Enabled = v
	default:
		l.errorf(Pos{file, cmp.Or(r.Enabled.Line, pos.Line)}, "boot_runtime %s: enabled: %q: want none or one of %v", b.Name, v, contract.Runtimes)
	}
	if b.Reason == "" {
		l.errorf(pos, "boot_runtime %s: a reason is required", b.Name)
	}
	l.set.BootRuntime = b
}

// Matches reports whether r matches name, a cleaned path.
func (r *Rule) Matches(name string) bool { return matchAny(r.Paths, name) }

// PresetPath is the preset file apply writes for the boot-runtime policy:
// 00- sorts before every packaged preset file, and systemctl preset-all
// (Buildroot runs it after apply, when it makes each filesystem image)
// follows the first line that names a unit.
const PresetPath = "usr/lib/systemd/system-preset/00-rootfs-trim.preset"

// SelfPackage names what rootfs-trim adds of its own accord (the preset
// file), made for a whole image, whichever packages are in it.
const SelfPackage = "rootfs-trim"

// linkDirs are the unit directories whose .wants and .requires links
// the boot-runtime rule strips (enablement.UnitDirs).
var linkDirs = []string{"etc", "run", "usr/local/lib", "usr/lib"}

// bootRuntimeRules turns the policy into what apply does: a rule for any
// owner that strips the forbidden runtimes' .wants and .requires links,
// and the preset file that disables their units (and enables the allowed
// one's) before any other preset file is read.
func (l *loader) bootRuntimeRules() {
	b := l.set.BootRuntime
	if b == nil {
		return
	}
	p := l.set.byName[AnyPackage]
	if p == nil {
		p = &Package{Name: AnyPackage, Pos: b.Pos}
		l.set.byName[AnyPackage] = p
		l.set.Packages = append(l.set.Packages, p)
	}
	var units []string
	preset := fmt.Sprintf("# Written by rootfs-trim apply for boot_runtime %s (%s).\n", b.Name, filepath.Base(b.Pos.File))
	for _, rt := range contract.Runtimes {
		for _, u := range contract.RuntimeUnits[rt] {
			if b.Forbids(rt) {
				units = append(units, u)
				preset += "disable " + u + "\n"
			} else {
				preset += "enable " + u + "\n"
			}
		}
	}
	r := &Rule{Name: b.Name, Package: AnyPackage, Action: Strip, Reason: b.Reason, Link: b.Link, Pos: b.Pos}
	for _, dir := range linkDirs {
		pt, err := ParsePattern(dir + "/systemd/system/*.{wants,requires}/{" + strings.Join(units, ",") + "}")
		if err != nil {
			l.errorf(b.Pos, "boot_runtime %s: %v", b.Name, err)
			return
		}
		r.Paths = append(r.Paths, pt)
	}
	p.Rules = append(p.Rules, r)
	l.set.BootRuntimeRule = r
	p.Adds = append(p.Adds, &Addition{Path: PresetPath, Source: "boot_runtime " + b.Name, Data: []byte(preset),
		Mode: 0o644, Package: SelfPackage, Reason: b.Reason, Pos: b.Pos})
}
