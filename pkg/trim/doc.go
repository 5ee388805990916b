// Package trim decides, for every entry of a rootfs, what the rules make of
// it, and carries that out: `apply` on archives (streaming) and on
// directory trees (in place), and `audit`, which only reports.
package trim
