package check

import (
	"fmt"
	"sort"

	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// The lock is keyed by the package name of the rule file (its package:
// line), not by the name the inputs used: minikube's ISO names its arm64
// packages after their .mk directory (containerd-bin-aarch64), Debian
// after its own packages (containerd.io), and one lock serves them all.
// A name no rule file knows is its own key.

// canonical returns the key of name in the lock.
func canonical(set *rules.Set, name string) string {
	return set.LockName(name)
}

// foldLock rekeys a lock written by name or alias by the canonical names.
// Two entries for one package cannot be merged (which version would the
// lock hold?): that is an error naming both.
func foldLock(set *rules.Set, lock *Lock) (*Lock, error) {
	out := &Lock{Version: lock.Version, Packages: map[string]*LockPackage{}}
	keys := make([]string, 0, len(lock.Packages))
	for k := range lock.Packages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	from := map[string]string{}
	for _, k := range keys {
		c := canonical(set, k)
		if prev, dup := from[c]; dup {
			return nil, fmt.Errorf("lock: %s and %s are one package (%s) under two names; keep one entry", prev, k, c)
		}
		from[c] = k
		out.Packages[c] = lock.Packages[k]
	}
	return out, nil
}

// seenAs lists the names other than the canonical one that the inputs
// used for a package, sorted.
func (s *pkgState) seenAs() []string {
	var out []string
	for n := range s.seen {
		if n != s.name {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
