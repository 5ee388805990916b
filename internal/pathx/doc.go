// Package pathx is how every package spells a path inside an image: Clean
// for an entry's name (canonical, and refused when it would leave the root),
// CleanRule for a path as a rule or the command line writes it, and
// ResolveLink for where a symlink leads, never above the root. It is a leaf,
// so that rules and render match paths exactly as archive and trim do
// without importing them.
package pathx
