// Package configkey reads one key of a structured config file (TOML, JSON)
// as its consumer reads it, and changes that key alone: every other byte of
// the file (comments, order, spacing) stays as it was. Values come from a
// full decode (go-toml/v2, encoding/json, as containerd, cri-o and libcni
// decode); the bytes to change come from what keeps positions (go-toml/v2's
// unstable parser, json.Decoder's token offsets), because the common
// decoders do not write a file back as it was.
package configkey
