// Package rules loads the declarative rule files of rules/: the policy (what
// no package may leave in the final rootfs), per-package rules (what each
// package must not ship and what to do with it), files to add, and the
// templates the boot step renders. Loading parses, validates and compiles in
// one pass; every error points at file:line.
package rules
