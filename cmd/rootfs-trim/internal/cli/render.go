package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/fslock"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/render"
)

func init() {
	register(&command{name: "render", summary: "at boot: write /etc for the chosen runtime and CNI", run: runRender})
}

const renderHelp = `
Runs in the image. minikube (patched, see integrations/minikube/) calls it
when it configures the runtime, with the choice it made; it writes into /etc
exactly the deferred files and templates that apply put under
/usr/share/minikube for that choice, takes back what an earlier render wrote
for another (only files whose content is still what it wrote), and records
the choice in /var/lib/minikube/rootfs-trim/choice.json, on the persistent
disk. At boot, rootfs-trim-render.service runs render --from-record before
any runtime starts, so a restarted VM has the right /etc again; with no
record it writes nothing. A file the policy forbids that render did not
write is reported, and removed only where the policy says at_boot: remove.
On the running system (--root /, systemd booted) it then stops the other
runtimes' units and starts the chosen runtime's.

Runtimes: containerd, crio, docker (cri-dockerd; before Kubernetes 1.24,
--cri-socket /var/run/dockershim.sock). --cni takes minikube's values:
bridge (minikube's 1-k8s.conflist), true or kindnet, calico, cilium, flannel
(deployed from a pod: nothing in /etc/cni/net.d), false (no cluster CNI: the
runtime's own bridge rewritten to the pod CIDR, else minikube's bridge), or a
manifest path (the cluster installs the CNI). auto is minikube's to resolve.
The pod CIDR defaults to minikube's 10.244.0.0/16. See docs/boot.md.
`

type keyValues map[string]string

func (kv keyValues) String() string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k+"="+kv[k])
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want NAME=VALUE")
	}
	kv[k] = v
	return nil
}

func runRender(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "render", "[--root DIR] --runtime R --cni C [--pod-cidr CIDR] [--cri-socket PATH] [--set NAME=VALUE]... | --from-record", renderHelp)
	root := fs.String("root", "/", "the root `directory` of the system to configure")
	runtime := fs.String("runtime", "", "container `runtime`: containerd, crio or docker")
	cni := fs.String("cni", "", "minikube's --cni `value`: bridge, kindnet, true, calico, cilium, flannel, false or a manifest path")
	podCIDR := fs.String("pod-cidr", "", "pod network `CIDR` (default 10.244.0.0/16, minikube's)")
	criSocket := fs.String("cri-socket", "", "CRI socket `path`, as minikube's --cri-socket (default: the runtime's)")
	values := keyValues{}
	fs.Var(values, "set", "template value `NAME=VALUE` (repeatable)")
	fromRecord := fs.Bool("from-record", false, "render the choice recorded by the last render (the boot unit); none recorded: nothing to do")
	dryRun := fs.Bool("dry-run", false, "show what would change; write nothing")
	quiet := fs.Bool("quiet", false, "print only problems")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("render takes no arguments")
	}
	// A path as the user can open it: beneath --root, not as the configured
	// system will see it (the same with the default root, /).
	shown := func(p string) string { return names.Quote(filepath.Join(*root, p)) }
	c := render.Choice{Runtime: *runtime, CNI: *cni, PodCIDR: *podCIDR, CRISocket: *criSocket, Values: values}
	if *fromRecord {
		if *runtime != "" || *cni != "" || *podCIDR != "" || *criSocket != "" || len(values) > 0 {
			return usagef("--from-record takes the choice from the record: no --runtime, --cni, --pod-cidr, --cri-socket or --set")
		}
		var ok bool
		c, ok, err = render.LoadChoice(*root)
		if err != nil {
			return err
		}
		if !ok {
			if !*quiet {
				fmt.Fprintf(env.Stdout, "render: no choice recorded in %s; nothing to do\n", shown(render.ChoicePath))
			}
			return nil
		}
	}
	if err := c.Validate(); err != nil {
		return usagef("%v", err)
	}
	// Two renders at once (the boot unit and minikube's call) must not
	// interleave: the second waits for the first.
	unlock, err := fslock.Lock(filepath.Join(*root, "etc"), true)
	if err != nil {
		return err
	}
	defer unlock()
	opt := render.Options{Root: *root, Choice: c, DryRun: *dryRun, Save: !*fromRecord}
	// Units only of the system render runs on: another root's are not
	// running here.
	if filepath.Clean(*root) == "/" && render.Booted() {
		opt.Units = render.Systemctl{}
	}
	res, err := render.Render(opt)
	if err != nil {
		return err
	}
	out := env.Stdout
	if !*quiet {
		from := "flags"
		if *fromRecord {
			from = shown(render.ChoicePath)
		}
		fmt.Fprintf(out, "render: %s (from %s)\n", names.Text(c.Describe()), from)
		printRendered(out, res, shown)
		if !*fromRecord && !*dryRun {
			fmt.Fprintf(out, "recorded   %s\n", shown(render.ChoicePath))
		}
	}
	for _, p := range res.Modified {
		fmt.Fprintf(env.Stderr, "note: %s was not what render last wrote there; replaced\n", shown(p))
	}
	for _, l := range res.Left {
		fmt.Fprintf(env.Stderr, "warning: %s is in render's record but was left in place: %s\n", shown(l.Path), names.Text(l.Why))
	}
	for _, f := range res.Foreign {
		if f.Link != "" {
			fmt.Fprintf(env.Stderr, "warning: %s is a symlink to %s where policy %s expects a directory: what is beneath it bypasses the policy; left in place, not followed\n", shown(f.Path), names.Quote(f.Link), names.Text(f.Policy))
			continue
		}
		done := "; left in place (the policy says at_boot: report)"
		if f.Removed {
			done = ": removed"
		}
		fmt.Fprintf(env.Stderr, "warning: %s was not written by render and policy %s forbids it%s\n", shown(f.Path), names.Text(f.Policy), done)
	}
	if *dryRun && !*quiet {
		fmt.Fprintln(out, "dry run: nothing written")
	}
	return nil
}

// printRendered lists what render wrote, found unchanged, removed, stopped and
// started, and its notes.
func printRendered(out io.Writer, res *render.Result, shown func(string) string) {
	for _, l := range []struct {
		verb  string
		items []string
		show  func(string) string
	}{
		{"wrote", res.Written, shown}, {"unchanged", res.Unchanged, shown}, {"removed", res.Removed, shown},
		{"stopped", res.Stopped, names.Text}, {"started", res.Started, names.Text},
	} {
		for _, p := range l.items {
			fmt.Fprintf(out, "%-10s %s\n", l.verb, l.show(p))
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(out, "note: %s\n", names.Text(n))
	}
}
