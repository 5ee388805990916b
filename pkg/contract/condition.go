package contract

import "slices"

// Kind is what happened to an entry: the host-side manifest and the index
// record the same kinds.
type Kind string

// The kinds of change.
const (
	Removed   Kind = "removed"
	Relocated Kind = "relocated"
	// Retargeted is a symlink left in its place pointing at a new target
	// (To); Link in the index.
	Retargeted Kind = "retargeted"
	// Edited is a config file left in its place with one key changed
	// (rules.Edit); the manifest's reason says the key and its values.
	Edited   Kind = "edited"
	Deferred Kind = "deferred"
	Added    Kind = "added"
	Template Kind = "template"
	Created  Kind = "created" // a directory made so that an added file has a parent
	// Dangling is a symlink no rule touched whose target the apply took
	// away (manifest only: the entry is kept as it was; To is its target).
	Dangling Kind = "dangling"
)

// OwnKinds are the kinds of what apply does itself rather than a rule
// action, in the order apply's summary counts them after the actions'
// kinds (their order is pkg/trim's actions table).
var OwnKinds = []Kind{Added, Template, Created, Dangling}

// Runtimes and CNIs that conditions may name. They are the choices of
// minikube's --container-runtime and --cni; "custom" is a CNI the cluster
// installs itself.
var (
	Runtimes = []string{"containerd", "crio", "docker"}
	CNIs     = []string{"bridge", "kindnet", "flannel", "cilium", "calico", "none", "custom"}
)

// Sockets are the CRI sockets minikube uses for each runtime when
// --cri-socket is not given (cruntime's SocketPath methods), and the
// .Socket a template sees. docker is reached through cri-dockerd from
// Kubernetes 1.24 on; before that minikube uses dockershim's socket, which
// the caller passes with --cri-socket /var/run/dockershim.sock.
var Sockets = map[string]string{
	"containerd": "/run/containerd/containerd.sock",
	"crio":       "/var/run/crio/crio.sock",
	"docker":     "/var/run/cri-dockerd.sock",
}

// Condition says when the boot step renders a template or restores a
// deferred file: every list that is set must contain the chosen value.
type Condition struct {
	Runtimes []string `json:"runtime,omitempty"`
	CNIs     []string `json:"cni,omitempty"`
}

// Holds reports whether the condition is met by the chosen runtime and CNI.
func (c Condition) Holds(runtime, cni string) bool {
	return (len(c.Runtimes) == 0 || slices.Contains(c.Runtimes, runtime)) &&
		(len(c.CNIs) == 0 || slices.Contains(c.CNIs, cni))
}

// RuntimeUnits are the systemd units that start each runtime's CRI
// endpoint: what a boot-runtime policy allows or forbids to be enabled,
// and what render starts for the chosen runtime. docker's CRI is
// cri-dockerd's socket; dockerd pulls in containerd.service by Wants=,
// which enables nothing.
var RuntimeUnits = map[string][]string{
	"containerd": {"containerd.service"},
	"crio":       {"crio.service"},
	"docker":     {"docker.service", "docker.socket", "cri-docker.service", "cri-docker.socket"},
}
