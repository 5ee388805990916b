package pinflate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// blockStarts lists where each block of comp starts after the first, as
// the sequential decoder finds them.
func blockStarts(t *testing.T, comp []byte) []int64 {
	st := newStream(comp, 0, nil, nil, 1<<20)
	var starts []int64
	for !st.s.done {
		if _, err := st.next(st.s.br.bitPos() + 1); err != nil {
			t.Fatal(err)
		}
		if at, between := st.s.blockStart(); between && !st.s.done {
			starts = append(starts, at)
		}
	}
	return starts
}

// TestChunkFindsBlockStart: a speculative chunk starts at the first real
// block at or after its first byte, and ends where the next one starts.
func TestChunkFindsBlockStart(t *testing.T) {
	for _, level := range []int{1, 6, 9} {
		comp := deflate(t, sample(2<<20, 3), level)
		starts := blockStarts(t, comp)
		const size = 64 << 10
		var got, want [][2]int64
		for k := 1; (k+1)*size < len(comp); k++ {
			c := &chunk{k: k, base: int64(k*size) * 8, src: comp[k*size : min(len(comp), k*size+size+slack)], stop: size * 8}
			decodeChunk(c, 16<<20, func() bool { return false })
			if c.ok {
				got = append(got, [2]int64{c.start, c.end})
			} else {
				got = append(got, [2]int64{-1, -1})
			}
			var first, next int64 = -1, -1
			for _, s := range starts {
				if first < 0 && s >= c.base {
					first = s
				}
				if next < 0 && s >= c.base+c.stop {
					next = s
				}
			}
			if first == starts[len(starts)-1] || first >= c.base+c.stop {
				// The last block is not looked for, and a chunk in
				// which no block starts has nothing to find: the
				// reader decodes its stretch.
				first, next = -1, -1
			}
			want = append(want, [2]int64{first, next})
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("level %d: chunk (start, end) bits (-true +found):\n%s", level, d)
		}
	}
}
