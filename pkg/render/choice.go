package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// DefaultPodCIDR is minikube's cni.DefaultPodCIDR: what every CNI manager's
// CIDR() returns and what its bridge conflist holds.
const DefaultPodCIDR = "10.244.0.0/16"

// The classes rules and templates are written for (contract.CNIs). minikube's
// --cni values map onto them: false is "none" (no cluster CNI), a manifest
// path is "custom" (the cluster installs it).
const (
	ClassNone   = "none"
	ClassCustom = "custom"
)

// Choice is what render writes /etc for.
// The JSON names are those of the recorded choice (ChoicePath).
type Choice struct {
	Runtime string `json:"runtime"`
	// CNI is minikube's --cni value as minikube resolved it: false, true,
	// kindnet, bridge, calico, cilium, flannel, or a manifest path.
	CNI     string `json:"cni"`
	PodCIDR string `json:"pod_cidr,omitempty"`
	// CRISocket overrides the runtime's socket (minikube's --cri-socket).
	CRISocket string            `json:"cri_socket,omitempty"`
	Values    map[string]string `json:"values,omitempty"`
}

// Class is the rules' name for the CNI: bridge, kindnet, flannel, cilium,
// calico, none or custom.
func (c *Choice) Class() string {
	switch c.CNI {
	case "true", "kindnet":
		return "kindnet"
	case "false":
		return ClassNone
	case "bridge", "calico", "cilium", "flannel":
		return c.CNI
	}
	return ClassCustom
}

// Socket is the CRI socket for the choice.
func (c *Choice) Socket() string {
	if c.CRISocket != "" {
		return c.CRISocket
	}
	return contract.Sockets[c.Runtime]
}

// CIDR is the pod CIDR, minikube's default when none was given.
func (c *Choice) CIDR() string {
	if c.PodCIDR != "" {
		return c.PodCIDR
	}
	return DefaultPodCIDR
}

// CNIValues are the --cni values minikube's cni.New (pkg/minikube/cni/
// cni.go) switches on and that render takes; anything else minikube takes
// as a manifest path (NewCustom). The completions offer these.
var CNIValues = []string{"bridge", "kindnet", "true", "calico", "cilium", "flannel", "false"}

// minikubeWords are every --cni word cni.New knows: CNIValues, and auto or
// nothing, which it resolves itself (Validate refuses them).
var minikubeWords = append([]string{"", "auto"}, CNIValues...)

// classOnly reports whether v is a class the rules use (contract.CNIs:
// none, custom) that is not a minikube value. minikube would take it for
// a manifest path, and so would render, writing for a custom CNI what the
// user meant as none; the minikube patch passes --cni as the user typed it,
// so the words a user may have read in the rules are refused instead.
func classOnly(v string) bool {
	return slices.Contains(contract.CNIs, v) && !slices.Contains(minikubeWords, v)
}

// Validate checks every value for its kind. It refuses only what minikube
// itself refuses (cni.New: a --cni value that names no CNI and no file),
// and "auto", which only minikube can resolve.
func (c *Choice) Validate() error {
	var problems []string
	switch {
	case c.Runtime == "":
		problems = append(problems, "no container runtime chosen (--runtime containerd, crio or docker)")
	case contract.Sockets[c.Runtime] == "":
		problems = append(problems, fmt.Sprintf("unknown container runtime %q (want %s)", c.Runtime, strings.Join(contract.Runtimes, ", ")))
	}
	switch {
	case c.CNI == "" || c.CNI == "auto":
		problems = append(problems, fmt.Sprintf("--cni %q: minikube resolves auto from the driver, the node count and the Kubernetes version (cni.chooseDefault), which the node cannot know; pass the CNI minikube chose: false, kindnet, bridge, calico, cilium, flannel or the manifest path", c.CNI))
	case classOnly(c.CNI):
		problems = append(problems, fmt.Sprintf("--cni %q: that is the rules' name for a class of CNI, not a minikube --cni value: minikube's word for no CNI is false, and a CNI the cluster installs is given as its manifest path", c.CNI))
	case strings.ContainsRune(c.CNI, 0):
		problems = append(problems, fmt.Sprintf("--cni %q: not a CNI name and not a path", c.CNI))
	}
	if c.PodCIDR != "" {
		if err := validCIDR(c.PodCIDR); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if c.CRISocket != "" {
		if err := validSocket(c.CRISocket); err != nil {
			problems = append(problems, err.Error())
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Values)) {
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

// Describe says, in one line, what was chosen.
func (c *Choice) Describe() string {
	cni := c.CNI
	if cls := c.Class(); cls != c.CNI {
		cni = fmt.Sprintf("%s (%s)", c.CNI, cls)
	}
	parts := []string{"runtime " + c.Runtime, "cni " + cni, "pod CIDR " + c.CIDR(), "socket " + c.Socket()}
	for _, k := range slices.Sorted(maps.Keys(c.Values)) {
		parts = append(parts, fmt.Sprintf("%s=%s", k, c.Values[k]))
	}
	return strings.Join(parts, ", ")
}
