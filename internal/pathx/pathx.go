package pathx

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// ErrUnsafePath reports a name that would leave the root of the archive.
var ErrUnsafePath = errors.New("unsafe path")

// PathMax is the kernel's PATH_MAX. The initramfs unpacker silently skips a
// name or symlink target longer than this, so we refuse them loudly instead.
const PathMax = 4096

// Clean returns the canonical form of an archive name: relative to the root,
// no "./" prefix, no trailing slash, "." for the root itself.
//
// It uses package path, not filepath: archive names are always
// slash-separated, whatever the host. Names that are absolute or climb out of
// the root with ".." are refused rather than rewritten, because silently
// turning "/etc/x" into "etc/x" would let two different entries collide.
func Clean(name string) (string, error) {
	if isClean(name) {
		return name, nil
	}
	if name == "" {
		return "", fmt.Errorf("%w: empty name", ErrUnsafePath)
	}
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w: %q is absolute", ErrUnsafePath, name)
	}
	if strings.IndexByte(name, 0) >= 0 {
		return "", fmt.Errorf("%w: %q contains a NUL byte", ErrUnsafePath, name)
	}
	if hasDotDot(name) {
		return "", fmt.Errorf("%w: %q has a .. component", ErrUnsafePath, name)
	}
	return path.Clean(name), nil
}

// isClean reports, in one pass, whether name is already what Clean would
// return for it: the common case, which then costs no more than a scan.
// Components are non-empty and neither "." nor ".."; no NUL, no leading or
// trailing slash. "." alone is clean.
func isClean(name string) bool {
	if name == "." {
		return true
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) {
			c := name[i]
			if c == 0 {
				return false
			}
			if c != '/' {
				continue
			}
		}
		switch name[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}

// hasDotDot reports whether a component of name is "..", without the
// allocation of splitting: Clean runs on every entry of every input.
func hasDotDot(name string) bool {
	for name != "" {
		part, rest, _ := strings.Cut(name, "/")
		if part == ".." {
			return true
		}
		name = rest
	}
	return false
}

// CleanRule normalises a path the way a user writes it in a rule or on the
// command line, where "/etc/x", "etc/x" and "./etc/x" all mean the same file.
func CleanRule(p string) (string, error) {
	trimmed := strings.TrimLeft(p, "/")
	if trimmed == "" {
		return ".", nil
	}
	return Clean(trimmed)
}

// ResolveLink is where a symlink at name (a cleaned path) pointing at
// target leads in the image, lexically: an absolute target from the root,
// a relative one from the link's directory, ".." never above the root (as
// in the booted system, where / is the root); "." for the root. Other
// symlinks on the way are not followed.
func ResolveLink(name, target string) string {
	if !strings.HasPrefix(target, "/") {
		target = path.Join("/", path.Dir(name), target)
	}
	if t := strings.TrimPrefix(path.Clean("/"+target), "/"); t != "" {
		return t
	}
	return "."
}
