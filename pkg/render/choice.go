// Package render is the boot-time half of rootfs-trim: once the container
// runtime and the CNI are known, it writes into /etc exactly the deferred
// files and templates that apply put under /usr/share/minikube for that
// choice, and takes out what an earlier render wrote for another.
package render

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// Sockets are the CRI sockets minikube configures for each runtime; docker
// is reached through cri-dockerd.
var Sockets = map[string]string{
	"containerd": "/run/containerd/containerd.sock",
	"crio":       "/var/run/crio/crio.sock",
	"docker":     "/var/run/cri-dockerd.sock",
}

// PodCNIs are CNIs deployed from a pod once the cluster is up: nothing may
// sit in /etc/cni/net.d before them, or it would win.
var PodCNIs = []string{"kindnet", "flannel", "cilium", "calico"}

// Choice is what the boot step renders for.
type Choice struct {
	Runtime string
	CNI     string
	PodCIDR string
	Values  map[string]string
	// From says where each setting came from, for the log.
	From map[string]string
}

// The keys of the environment file and of the kernel command line.
const (
	EnvRuntime     = "MINIKUBE_CONTAINER_RUNTIME"
	EnvCNI         = "MINIKUBE_CNI"
	EnvPodCIDR     = "MINIKUBE_POD_CIDR"
	EnvValuePrefix = "MINIKUBE_RENDER_"

	CmdlineRuntime     = "minikube.runtime"
	CmdlineCNI         = "minikube.cni"
	CmdlinePodCIDR     = "minikube.pod_cidr"
	CmdlineValuePrefix = "minikube.set."
)

// Merge fills what c leaves empty from lower-precedence sources: flags
// first, then the environment file, then the kernel command line.
func (c *Choice) Merge(from string, runtime, cni, podCIDR string, values map[string]string) {
	if c.From == nil {
		c.From = map[string]string{}
	}
	if c.Values == nil {
		c.Values = map[string]string{}
	}
	set := func(dst *string, v, key string) {
		if *dst == "" && v != "" {
			*dst = v
			c.From[key] = from
		}
	}
	set(&c.Runtime, runtime, "runtime")
	set(&c.CNI, cni, "cni")
	set(&c.PodCIDR, podCIDR, "pod-cidr")
	for k, v := range values {
		if _, ok := c.Values[k]; !ok {
			c.Values[k] = v
			c.From["value "+k] = from
		}
	}
}

// Validate checks the choice names a known runtime and CNI.
func (c *Choice) Validate() error {
	var problems []string
	switch {
	case c.Runtime == "":
		problems = append(problems, fmt.Sprintf("no container runtime chosen (--runtime, %s in the environment file, or %s= on the kernel command line)", EnvRuntime, CmdlineRuntime))
	case Sockets[c.Runtime] == "":
		problems = append(problems, fmt.Sprintf("unknown container runtime %q (want %s)", c.Runtime, strings.Join(rules.Runtimes, ", ")))
	}
	switch {
	case c.CNI == "":
		problems = append(problems, fmt.Sprintf("no CNI chosen (--cni, %s in the environment file, or %s= on the kernel command line)", EnvCNI, CmdlineCNI))
	case !contains(rules.CNIs, c.CNI):
		problems = append(problems, fmt.Sprintf("unknown CNI %q (want %s)", c.CNI, strings.Join(rules.CNIs, ", ")))
	}
	if c.PodCIDR != "" {
		if err := validCIDR(c.PodCIDR); err != nil {
			problems = append(problems, err.Error())
		}
	}
	names := make([]string, 0, len(c.Values))
	for k := range c.Values {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if err := validName(k); err != nil {
			problems = append(problems, err.Error())
		} else if err := validValue(k, c.Values[k]); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ReadEnvFile reads KEY=VALUE lines as systemd's EnvironmentFile does
// (comments, blank lines, optional quotes). A missing file is no error: the
// runtime may not be chosen yet.
func ReadEnvFile(path string) (runtime, cni, podCIDR string, values map[string]string, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return "", "", "", nil, nil
	}
	if err != nil {
		return "", "", "", nil, err
	}
	defer f.Close()
	vars, err := ParseEnv(f, path)
	if err != nil {
		return "", "", "", nil, err
	}
	values = map[string]string{}
	for k, v := range vars {
		if name, ok := strings.CutPrefix(k, EnvValuePrefix); ok && name != "" {
			values[name] = v
		}
	}
	return vars[EnvRuntime], vars[EnvCNI], vars[EnvPodCIDR], values, nil
}

// ParseEnv parses an environment file; errors name file:line.
func ParseEnv(r io.Reader, name string) (map[string]string, error) {
	vars := map[string]string{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(text, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", name, line)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		vars[k] = v
	}
	return vars, sc.Err()
}

// ParseCmdline reads minikube.* settings from a kernel command line.
func ParseCmdline(cmdline string) (runtime, cni, podCIDR string, values map[string]string) {
	values = map[string]string{}
	for _, word := range strings.Fields(cmdline) {
		k, v, ok := strings.Cut(word, "=")
		if !ok {
			continue
		}
		switch {
		case k == CmdlineRuntime:
			runtime = v
		case k == CmdlineCNI:
			cni = v
		case k == CmdlinePodCIDR:
			podCIDR = v
		case strings.HasPrefix(k, CmdlineValuePrefix) && len(k) > len(CmdlineValuePrefix):
			values[k[len(CmdlineValuePrefix):]] = v
		}
	}
	return runtime, cni, podCIDR, values
}

// Describe says, in one line, what was chosen and from where.
func (c *Choice) Describe() string {
	parts := []string{fmt.Sprintf("runtime %s (%s)", c.Runtime, c.From["runtime"]), fmt.Sprintf("cni %s (%s)", c.CNI, c.From["cni"])}
	if c.PodCIDR != "" {
		parts = append(parts, fmt.Sprintf("pod CIDR %s (%s)", c.PodCIDR, c.From["pod-cidr"]))
	}
	keys := make([]string, 0, len(c.Values))
	for k := range c.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", k, c.Values[k], c.From["value "+k]))
	}
	return strings.Join(parts, ", ")
}
