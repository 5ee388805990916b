package cli

import (
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// ownersFor returns who installed what in input: from the flags when
// given, else from the input's own dpkg database when it has one (a
// Debian or Ubuntu root, such as minikube's kicbase image), else nothing.
// note says where the owners came from, "" for the flags or nothing.
func (o *ownershipFlags) ownersFor(input string, open archive.OpenOptions) (owners *trim.Owners, note string, err error) {
	if o.fileList != "" || o.pkg != "" {
		owners, err = o.load()
		return owners, "", err
	}
	db, err := trim.LoadDpkg(input, open)
	if err != nil {
		return nil, "", err
	}
	if db == nil {
		return trim.NewOwners(), "", nil
	}
	return db.Owners, db.Describe(names.Quote(input)), nil
}
