// Package archive reads and writes rootfs archives (cpio newc/crc, tar,
// directory trees) as one stream of entries, without losing any field a
// rootfs entry has. The file around the archive (its compression, opening,
// creating and reusing it) is pkg/container's.
//
// The shape follows archive/tar: a Reader yields an Entry with Next and its
// data with Read; a Writer takes an Entry with WriteHeader and its data with
// Write. Every format maps onto the same Entry so that a transform (strip,
// relocate, add) is written once and works on all of them.
package archive
