package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"
)

// validCIDR checks a pod CIDR: an IP prefix as net/netip reads it, in its
// canonical form, so that it can be written into JSON and YAML as is, and a
// subnet the CNI host-local IPAM (the bridge template's) can allocate from:
// its Range.Canonicalize (plugins/ipam/host-local/backend/allocator/range.go)
// refuses host bits set and a prefix with fewer than four addresses, and a
// conflist written with either fails every pod's network at boot.
func validCIDR(s string) error {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return fmt.Errorf("pod CIDR %q is not a CIDR: %v", s, err)
	}
	if p.String() != s {
		return fmt.Errorf("pod CIDR %q is not in canonical form (want %s)", s, p)
	}
	if m := p.Masked(); m != p {
		return fmt.Errorf("pod CIDR %q has host bits set: its network is %s, and the CNI host-local IPAM refuses anything else", s, m)
	}
	if p.Bits() > p.Addr().BitLen()-2 {
		return fmt.Errorf("pod CIDR %q is too small to allocate pod addresses from", s)
	}
	return nil
}

// validSocket checks a CRI socket path: absolute, clean, and made of the
// characters a path written into crictl.yaml and a JSON string needs no
// quoting for.
func validSocket(s string) error {
	if !strings.HasPrefix(s, "/") || path.Clean(s) != s || s == "/" {
		return fmt.Errorf("CRI socket %q is not a clean absolute path", s)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+@:", r)) {
			return fmt.Errorf("CRI socket %q has a character render does not write (%q)", s, r)
		}
	}
	return nil
}

// validName checks a template value's name: a letter or underscore, then
// letters, digits and underscores.
func validName(s string) error {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Errorf("value name %q: want letters, digits and underscores", s)
		}
	}
	if s == "" {
		return fmt.Errorf("empty value name")
	}
	return nil
}

// validValue checks a template value: printable, and without the quotes
// and backslashes that would let it leave a JSON or YAML string.
func validValue(name, s string) error {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r == '\'' || r == '`' {
			return fmt.Errorf("value %s=%q: quotes, backslashes and control characters are not allowed", name, s)
		}
	}
	return nil
}

// checkJSON checks that a rendered file meant to be JSON (by its
// destination's extension, as libcni picks files) parses as one value.
func checkJSON(dest string, data []byte) error {
	if !slices.Contains([]string{".conf", ".conflist", ".json"}, path.Ext(dest)) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("output for /%s is not valid JSON: %v", dest, err)
	}
	if _, err := dec.Token(); err == nil {
		return fmt.Errorf("output for /%s is not valid JSON: more than one value", dest)
	}
	return nil
}
