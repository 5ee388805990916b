// Package fslock keeps two rootfs-trim runs from changing one tree at once
// (a Buildroot rebuild racing a manual run, two runtime units starting the
// boot step together).
package fslock
