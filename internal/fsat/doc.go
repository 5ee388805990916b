// Package fsat is the one place rootfs-trim changes a directory tree it was
// given: every create, write, chmod, chown, mtime and unlink works on a
// directory descriptor opened beneath the tree and acts on the last
// component itself (the *at system calls, O_NOFOLLOW, O_PATH), so that no
// name, and no symlink an archive or an earlier run put in the tree, can make
// it act outside the tree or through a link.
//
// A Tree resolves the directories on the way in one of two modes: Beneath
// (os.Root: a symlink on the way is followed while it stays in the tree, as
// the kernel unpacks an initramfs), for the directory output of repack and
// apply (archive.DirWriter) and for apply on a tree (pkg/trim); NoSymlinks (a
// symlink anywhere on the way is refused, even one that stays inside), for
// render, which writes and takes back files in /etc at boot. It imports
// nothing of the project, so archive, trim and render all build on it.
package fsat
