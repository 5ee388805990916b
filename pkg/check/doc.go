// Package check is the CI gate for package version bumps: it compares what
// packages ship now with what the lock file recorded when the rules were
// last reviewed, and fails on new offenders, stale rules and deferred files
// whose content changed upstream.
package check
