// Package splice rewrites a compressed archive by reusing the compressed
// pieces of its input whose content did not change, so that an apply which
// edits a few entries costs little more than reading the input.
//
// The work is split in two. A Matcher watches the input's decompressed
// stream go by and tells, for every byte of the output stream, where the
// same byte sits in the input (or that it is new). A codec's splicer
// (BlockSplicer for lz4 and xz, Gzip) then copies each compressed block
// of the input whose whole content appears, contiguous, in the output,
// and compresses the rest anew.
//
// Soundness does not rest on knowing what apply did: every byte the Matcher
// attributes to the input was compared with that input byte. Resynchronising
// after a removal is a search, and a poor guess only costs speed.
package splice
