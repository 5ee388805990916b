package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

// Bytes is the sha256 of b.
func Bytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Reader is the sha256 of what r yields, read to its end.
func Reader(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return Sum(h), nil
}

// New starts a sha256 to write into; Sum spells it.
func New() hash.Hash { return sha256.New() }

// Sum spells the sha256 h has computed so far.
func Sum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }
