package pinflate

import (
	"bytes"
	"testing"
)

// FuzzParallelMatchesSequential: on any input, the parallel reader gives
// klauspost's gzip reader's output, error and member end. With plain
// set, the input is first compressed, so that the fuzzer reaches the
// speculative decoding of valid streams, cut into chunks of 256 bytes.
func FuzzParallelMatchesSequential(f *testing.F) {
	f.Add([]byte("hello, hello, hello world"), true, uint8(6))
	f.Add(gzipped(f, sample(20000, 1), 9), false, uint8(0))
	f.Add(gzipped(f, sample(5000, 2), 1), false, uint8(0))
	f.Add(gzipped(f, bytes.Repeat([]byte("ab"), 5000), 0), false, uint8(0))
	f.Add(sample(30000, 3), true, uint8(9))
	f.Fuzz(func(t *testing.T, in []byte, plain bool, level uint8) {
		if plain {
			in = gzipped(t, in, int(level%11)-1)
		}
		compare(t, in, Options{Workers: 2, ChunkSize: 256, ChunkCap: 64 << 10})
	})
}
