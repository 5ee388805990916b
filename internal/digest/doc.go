// Package digest is the one way rootfs-trim spells a sha256: lowercase hex,
// as the manifest, the index and the lock record it.
package digest
