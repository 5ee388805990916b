// Package contract is what build and boot share about an image: where apply
// puts its files under usr/share/minikube, the index that lists them, the
// conditions under which the boot step writes them, and the runtimes and
// CRI sockets those conditions name. apply (pkg/trim) writes it and render
// (pkg/render) reads it: both take it from here, so they cannot disagree.
package contract
