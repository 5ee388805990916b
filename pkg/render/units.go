package render

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// Units is the service manager of the running system: render stops the
// units of the runtimes not chosen and starts the chosen one's. It acts on
// the running system only, and makes no enablement link: at boot, a link
// made now does not join the transaction systemd is running, and the next
// boot starts from the image's enablement and renders the record again.
type Units interface {
	// Describe says, for each unit, what systemd knows of it.
	Describe(names []string) (map[string]Unit, error)
	// Stop stops units and cancels their queued start jobs, and waits.
	Stop(names []string) error
	// Start queues start jobs without waiting: at boot the runtimes are
	// ordered after the render unit, which would wait for itself.
	Start(names []string) error
}

// Unit is what systemd knows of a unit.
type Unit struct {
	Load  string   // LoadState: loaded, not-found, masked, ...
	Needs []string // its Requires= and BindsTo=
}

// unitPlan is what makes exactly the chosen runtime's units run.
type unitPlan struct {
	stop, start []string
	notes       []string
}

// planUnits stops every other runtime's installed unit and starts the
// chosen runtime's. A unit the chosen one requires or is bound to stays
// (docker bound to containerd, as minikube's dockerBoundToContainerd
// keeps it); a masked one is not started.
func planUnits(runtime string, known map[string]Unit) unitPlan {
	var p unitPlan
	needed := map[string]string{}
	for _, u := range contract.RuntimeUnits[runtime] {
		switch known[u].Load {
		case "loaded":
			p.start = append(p.start, u)
			for _, n := range known[u].Needs {
				needed[n] = u
			}
		case "masked":
			p.notes = append(p.notes, fmt.Sprintf("%s is masked: not started", u))
		default:
			p.notes = append(p.notes, fmt.Sprintf("%s is not installed: not started", u))
		}
	}
	for _, rt := range contract.Runtimes {
		for _, u := range contract.RuntimeUnits[rt] {
			switch {
			case rt == runtime || slices.Contains(contract.RuntimeUnits[runtime], u) || slices.Contains(p.stop, u):
			case needed[u] != "":
				p.notes = append(p.notes, fmt.Sprintf("%s left running: %s needs it", u, needed[u]))
			case known[u].Load != "" && known[u].Load != "not-found":
				p.stop = append(p.stop, u)
			}
		}
	}
	return p
}

// switchUnits describes every runtime's units, then stops and starts them
// as planUnits says, unless dryRun.
func switchUnits(units Units, runtime string, res *Result, dryRun bool) error {
	var all []string
	for _, rt := range contract.Runtimes {
		all = append(all, contract.RuntimeUnits[rt]...)
	}
	known, err := units.Describe(all)
	if err != nil {
		return fmt.Errorf("asking systemd about the runtimes' units: %w", err)
	}
	p := planUnits(runtime, known)
	res.Notes = append(res.Notes, p.notes...)
	if len(p.stop) > 0 && !dryRun {
		if err := units.Stop(p.stop); err != nil {
			return fmt.Errorf("stopping the other runtimes: %w", err)
		}
	}
	res.Stopped = p.stop
	if len(p.start) > 0 && !dryRun {
		if err := units.Start(p.start); err != nil {
			return fmt.Errorf("starting %s: %w", runtime, err)
		}
	}
	res.Started = p.start
	return nil
}

// Systemctl is Units through systemctl(1), on the system render runs on.
type Systemctl struct{}

// Booted reports whether systemd is the running system's service manager
// (sd_booted(3): /run/systemd/system is a directory).
func Booted() bool {
	st, err := os.Stat("/run/systemd/system")
	return err == nil && st.IsDir()
}

func (Systemctl) Describe(names []string) (map[string]Unit, error) {
	out, err := systemctl(append([]string{"show", "--property=Id,LoadState,Requires,BindsTo", "--"}, names...)...)
	if err != nil {
		return nil, err
	}
	return parseShow(out)
}

func (Systemctl) Stop(names []string) error {
	_, err := systemctl(append([]string{"stop", "--"}, names...)...)
	return err
}

func (Systemctl) Start(names []string) error {
	_, err := systemctl(append([]string{"start", "--no-block", "--"}, names...)...)
	return err
}

func systemctl(args ...string) ([]byte, error) {
	cmd := exec.Command("systemctl", append([]string{"--no-pager", "--no-ask-password"}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// parseShow reads systemctl show's output: a block of NAME=VALUE lines per
// unit, blocks apart by an empty line, each with its Id.
func parseShow(out []byte) (map[string]Unit, error) {
	units := map[string]Unit{}
	for _, block := range strings.Split(string(out), "\n\n") {
		var id string
		var u Unit
		for _, line := range strings.Split(block, "\n") {
			k, v, ok := strings.Cut(line, "=")
			switch {
			case line == "":
			case !ok:
				return nil, fmt.Errorf("systemctl show: %q is not NAME=VALUE", line)
			case k == "Id":
				id = v
			case k == "LoadState":
				u.Load = v
			case k == "Requires" || k == "BindsTo":
				u.Needs = append(u.Needs, strings.Fields(v)...)
			}
		}
		if id != "" {
			units[id] = u
		} else if strings.TrimSpace(block) != "" {
			return nil, fmt.Errorf("systemctl show: a unit without Id")
		}
	}
	return units, nil
}
