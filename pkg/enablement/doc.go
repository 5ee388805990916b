// Package enablement says which systemd units an image starts at boot: the
// links in the unit directories' .wants and .requires directories, and what
// `systemctl preset-all` (Buildroot's last step before each filesystem
// image) will enable from the preset files. It reads the image through an
// io/fs.FS: a tree beneath its os.Root, an archive or an image from what a
// Collector gathered in the one pass that reads it.
package enablement
