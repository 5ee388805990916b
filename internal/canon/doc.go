// Package canon is the one JSON encoding of everything rootfs-trim writes
// for people and tools to read and diff: the manifest, the index, the lock,
// and audit's and check's --format json. Two-space indent, <, > and &
// left as they are (paths and reasons are not HTML), map keys sorted, one
// trailing newline, "##[" written "##\u005b" (names.JSON: what a CI log
// would take as a workflow command); written in one Write, so a failed
// encoding writes nothing.
package canon
