// Package diff compares two images, trees or archives (or two of apply's
// manifests): which files were added, removed or changed, grouped by the
// package that installed them, and what the rules make of the change:
// offenders new and gone, deferred content changed, a forbidden path
// changed. The CLI's `rootfs-trim diff` prints it.
//
// It streams: each input is read once, through the same readers and the
// same audit step (trim.Auditor) as `audit`, and only a small record of
// each entry is kept (path, type, mode, owner, size, the sha256 of its
// data, link target), never the data: memory grows with the number of
// entries, not their size.
package diff
