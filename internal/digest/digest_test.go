package digest

import (
	"strings"
	"testing"
)

func TestDigest(t *testing.T) {
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" // FIPS 180-2, "abc"
	if got := Bytes([]byte("abc")); got != abc {
		t.Errorf("Bytes = %s", got)
	}
	if got, err := Reader(strings.NewReader("abc")); err != nil || got != abc {
		t.Errorf("Reader = %s, %v", got, err)
	}
	h := New()
	h.Write([]byte("a"))
	h.Write([]byte("bc"))
	if got := Sum(h); got != abc {
		t.Errorf("Sum = %s", got)
	}
}
