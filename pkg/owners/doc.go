// Package owners says which package installed each file of a rootfs: from
// Buildroot's packages-file-list (Table), or from what the image records
// about itself (DB: dpkg's database, the ListsDir lists, the index of an
// earlier apply), read first (Load) or as the input goes by (Later).
package owners
