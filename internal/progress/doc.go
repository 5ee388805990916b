// Package progress shows how far a long operation on an archive has got:
// bytes and entries, rate, and an ETA when the total size is known. It
// draws on a terminal only; everywhere else it stays silent.
package progress
