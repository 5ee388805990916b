// Package render is the boot-time half of rootfs-trim: once the container
// runtime and the CNI are known, it writes into /etc exactly the deferred
// files and templates that apply put under /usr/share/minikube for that
// choice, and takes out what an earlier render wrote for another.
//
// The choice is minikube's, in minikube's words (see docs/boot.md): the
// runtime, the --cni value, the pod CIDR and the CRI socket, as
// pkg/minikube/node/start.go configureRuntimes has them.
package render
