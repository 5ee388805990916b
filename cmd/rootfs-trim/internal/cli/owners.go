package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
)

// ownersFor returns who installed what in input: from the flags when
// given, else from the input's own dpkg database when it has one (a
// Debian or Ubuntu root, such as minikube's kicbase image), else from the
// index of an earlier apply that recorded them (a trimmed release ISO),
// else nothing.
// note says where the owners came from (ownersNote).
func (o *ownershipFlags) ownersFor(input string, open container.OpenOptions) (table *owners.Table, note string, err error) {
	if o.fileList != "" || o.pkg != "" {
		table, err = o.load()
		return table, o.ownersNote(input, nil), err
	}
	db, err := owners.Load(input, open)
	if err != nil {
		return nil, "", err
	}
	o.db = db
	return db.Table(), o.ownersNote(input, db), nil
}

// ownersNote says where the owners of input came from: db, its dpkg
// database when it had one, else the flags or nothing; "" where there is
// nothing worth saying (the flags, or no database, for an archive or a
// tree). Whether they are is the input's container's to say
// (container.OwnersUnknown: an ISO image always gets a note).
func (o *ownershipFlags) ownersNote(input string, db *owners.DB) string {
	if db != nil {
		return db.Describe(names.Quote(input))
	}
	why := container.OwnersUnknown(input)
	if why == "" {
		return ""
	}
	switch {
	case o.pkg != "":
		return fmt.Sprintf("owners in %s: --package %s", names.Quote(input), names.Quote(o.pkg))
	case o.fileList != "":
		return fmt.Sprintf("owners in %s: from --packages-file-list %s", names.Quote(input), names.Quote(o.fileList))
	}
	return fmt.Sprintf("owners in %s: unknown: %s, and this one no index of an earlier apply that records owners; pass the build's with --packages-file-list", names.Quote(input), why)
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
