package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// ownersFor returns who installed what in input: from the flags when
// given, else from the input's own dpkg database when it has one (a
// Debian or Ubuntu root, such as minikube's kicbase image), else nothing.
// note says where the owners came from, "" for the flags or nothing.
func (o *ownershipFlags) ownersFor(input string, open container.OpenOptions) (owners *trim.Owners, note string, err error) {
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

// warnEmptyFileList warns when a --packages-file-list lists no file: every
// owner would be "unknown", which no rule matches, so a truncated or wrong
// list would pass silently. Only the lines up to the first one are read.
func warnEmptyFileList(env *Env, path string) {
	if path == "" {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		return // the command reports it when it reads the list
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			return
		}
	}
	if sc.Err() == nil {
		fmt.Fprintf(env.Stderr, "warning: --packages-file-list %s lists no files: every file's package is unknown\n", names.Quote(path))
	}
}
