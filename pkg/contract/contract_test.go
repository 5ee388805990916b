package contract

import (
	"slices"
	"testing"
)

// Every runtime a rule may name has a socket render can hand a template,
// and render knows no runtime the rules cannot name.
func TestRuntimesHaveSockets(t *testing.T) {
	for _, rt := range Runtimes {
		if Sockets[rt] == "" {
			t.Errorf("runtime %s has no socket", rt)
		}
	}
	for rt := range Sockets {
		if !slices.Contains(Runtimes, rt) {
			t.Errorf("socket for %s, which is not in Runtimes", rt)
		}
	}
	for _, rt := range Runtimes {
		if len(RuntimeUnits[rt]) == 0 {
			t.Errorf("runtime %s has no units", rt)
		}
	}
	if len(RuntimeUnits) != len(Runtimes) {
		t.Errorf("RuntimeUnits names %d runtimes, Runtimes %d", len(RuntimeUnits), len(Runtimes))
	}
}
