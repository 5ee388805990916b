// Package pinflate is a DEFLATE decoder (RFC 1951) written for decoding
// one stream on several cores, after Knespel and Brunst, "Rapidgzip:
// Parallel Decompression and Seeking in Gzip Files Using Cache
// Prefetching" (HPDC 2023): the compressed stream is cut into chunks, a
// worker finds a plausible block start in each and decodes from it while
// the 32 KiB window before it is still unknown, writing 16-bit symbols
// (a byte, or a marker naming a byte of that window), and the markers are
// replaced once the chunk before has been decoded. Nothing here is taken
// from rapidgzip's or any other decoder's source: the method is the
// paper's, the format RFC 1951's, and the acceptance rules for Huffman
// codes those of the vendored klauspost/compress/flate (huffmanDecoder.init
// and decompressor.readHuffman), so that whatever that decoder refuses is
// refused here as well.
//
// It is a prototype, kept with its tests, fuzz target and benchmarks, and
// linked into nothing: on the shared 2-core host it was measured slower
// than klauspost's sequential decoder and costing 1.5 times its CPU time
// (docs/performance.md, "Parallel inflate").
package pinflate
