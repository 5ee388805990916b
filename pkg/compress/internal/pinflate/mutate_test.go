package pinflate

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestReaderMutations: damaged streams (bits flipped, bytes replaced,
// cut short) give the sequential reader's output, error and end.
func TestReaderMutations(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seeds := [][]byte{gzipped(t, sample(20000, 1), 9), gzipped(t, sample(5000, 2), 1), gzipped(t, bytes.Repeat([]byte("ab"), 5000), 0), gzipped(t, sample(30000, 3), 6)}
	for i := 0; i < 300; i++ {
		in := bytes.Clone(seeds[r.IntN(len(seeds))])
		for range r.IntN(4) + 1 {
			switch r.IntN(3) {
			case 0:
				in[r.IntN(len(in))] ^= byte(1 << r.IntN(8))
			case 1:
				in = in[:r.IntN(len(in))+1]
			default:
				in[r.IntN(len(in))] = byte(r.Uint32())
			}
		}
		compare(t, in, Options{Workers: 2, ChunkSize: 256, ChunkCap: 64 << 10})
	}
}
