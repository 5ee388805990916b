// Package manifest defines the JSON record that `apply` writes: what went
// in, which rules were used, what was removed, moved, deferred or added,
// and what came out. Field names are stable: other tools read them.
//
// The same input and rules give a byte-identical manifest: no timestamps
// of the run, no host names, everything sorted.
package manifest
