package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/fslock"
	"github.com/rootfs-trim/rootfs-trim/pkg/render"
)

func init() {
	register(&command{name: "render", summary: "at boot: write /etc for the chosen runtime and CNI", run: runRender})
}

const renderHelp = `
Runs in the image, at boot (rootfs-trim-render.service) and again whenever
minikube chooses the runtime. It writes into /etc exactly the deferred files
and templates that apply put under /usr/share/minikube for the chosen runtime
and CNI, and removes what an earlier render wrote for another choice. It never
touches a file it did not write; a file the policy forbids that appeared later
(podman's default network, say) is reported, and removed only where the policy
says at_boot: remove.

Settings, first found wins: flags; the environment file (MINIKUBE_CONTAINER_RUNTIME,
MINIKUBE_CNI, MINIKUBE_POD_CIDR, MINIKUBE_RENDER_<NAME>); the kernel command line
(minikube.runtime=, minikube.cni=, minikube.pod_cidr=, minikube.set.<NAME>=).

Runtimes: containerd, crio, docker (through cri-dockerd).
CNIs: bridge (minikube's bridge, needs the pod CIDR), kindnet, flannel, cilium,
calico (deployed from a pod: nothing in /etc/cni/net.d), none (the runtime's own
default network, if its package shipped one), custom (the cluster installs it).
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
	fs := newFlagSet(env, "render", "[--root DIR] [--runtime R] [--cni C] [--pod-cidr CIDR] [--set NAME=VALUE]...", renderHelp)
	root := fs.String("root", "/", "the root `directory` of the system to configure")
	runtime := fs.String("runtime", "", "container `runtime`: containerd, crio or docker")
	cni := fs.String("cni", "", "`CNI`: bridge, kindnet, flannel, cilium, calico, none or custom")
	podCIDR := fs.String("pod-cidr", "", "pod network `CIDR`, for the bridge CNI")
	values := keyValues{}
	fs.Var(values, "set", "template value `NAME=VALUE` (repeatable)")
	envFile := fs.String("env-file", "", "environment `file` (default ROOT/var/run/minikube/env)")
	cmdline := fs.String("cmdline", "", "kernel command line `file` (default /proc/cmdline when ROOT is /)")
	dryRun := fs.Bool("dry-run", false, "show what would change; write nothing")
	quiet := fs.Bool("quiet", false, "print only problems")
	ifChosen := fs.Bool("if-chosen", false, "succeed quietly when no runtime and no CNI are chosen yet (the boot unit)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("render takes no arguments")
	}
	c := render.Choice{}
	c.Merge("flag", *runtime, *cni, *podCIDR, values)
	if *envFile == "" {
		*envFile = filepath.Join(*root, "var/run/minikube/env")
	}
	r, n, p, v, err := render.ReadEnvFile(*envFile)
	if err != nil {
		return err
	}
	c.Merge(*envFile, r, n, p, v)
	if *cmdline == "" && filepath.Clean(*root) == "/" {
		*cmdline = "/proc/cmdline"
	}
	if *cmdline != "" {
		data, err := os.ReadFile(*cmdline)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		r, n, p, v := render.ParseCmdline(string(data))
		c.Merge("kernel command line", r, n, p, v)
	}
	if *ifChosen && c.Runtime == "" && c.CNI == "" {
		if !*quiet {
			fmt.Fprintln(env.Stdout, "render: no runtime or CNI chosen yet; nothing to do")
		}
		return nil
	}
	// Two runtime units starting together both pull the boot step in:
	// the second waits for the first rather than interleaving with it.
	unlock, err := fslock.Lock(filepath.Join(*root, "etc"), true)
	if err != nil {
		return err
	}
	defer unlock()
	res, err := render.Render(render.Options{Root: *root, Choice: c, DryRun: *dryRun})
	if err != nil {
		return err
	}
	out := env.Stdout
	if !*quiet {
		fmt.Fprintf(out, "render: %s\n", c.Describe())
		for _, p := range res.Written {
			fmt.Fprintf(out, "wrote      /%s\n", p)
		}
		for _, p := range res.Unchanged {
			fmt.Fprintf(out, "unchanged  /%s\n", p)
		}
		for _, p := range res.Removed {
			fmt.Fprintf(out, "removed    /%s\n", p)
		}
	}
	for _, p := range res.Modified {
		fmt.Fprintf(env.Stderr, "note: /%s was changed since the last render; replaced\n", p)
	}
	for _, l := range res.Left {
		fmt.Fprintf(env.Stderr, "warning: /%s is in render's record but was left in place: %s\n", l.Path, l.Why)
	}
	for _, f := range res.Foreign {
		if f.Removed {
			fmt.Fprintf(env.Stderr, "warning: /%s was not written by render and policy %s forbids it: removed\n", f.Path, f.Policy)
		} else {
			fmt.Fprintf(env.Stderr, "warning: /%s was not written by render and policy %s forbids it; left in place (the policy says at_boot: report)\n", f.Path, f.Policy)
		}
	}
	if *dryRun && !*quiet {
		fmt.Fprintln(out, "dry run: nothing written")
	}
	return nil
}
