package check

import (
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// lockedFiles follows, through one input, the regular files whose
// content the lock records, by their number (archive.Landing.File): a
// file's content and mode are what the last entries that wrote it left,
// and every name of it shows them. In a cpio stream a later regular file
// at one name of a hard-link group is written in place over the group
// (init/initramfs.c, do_name), so a locked name gets the later content;
// and the member that carries a group's data may come before or after
// the locked name.
type lockedFiles struct {
	// content is that of every file with several names, and of every
	// file a lock file is a name of (readCapped's form).
	content map[uint32][]byte
	names   map[uint32][]*lockedName
}

// lockedName is a lock file and whether the lock keeps its content.
type lockedName struct {
	lf           *LockFile
	locksContent bool
	// judged is the rule that judges the file by its content
	// (trim.ActionSpec.Judge): the lock keeps, as its content, what the
	// rule reads in it (an edit rule's key and value), not its bytes.
	judged *rules.Rule
}

func newLockedFiles() *lockedFiles {
	return &lockedFiles{content: map[uint32][]byte{}, names: map[uint32][]*lockedName{}}
}

// wrote takes in what the regular entry e did to its file: its mode
// (fchmod) and, when dec.Data says its data is the file's content from
// here on and the file is followed, that content, read from r. It
// returns the content when it read it.
func (f *lockedFiles) wrote(dec trim.Decision, e *archive.Entry, r io.Reader, offending bool) ([]byte, bool, error) {
	if e.Type != archive.TypeRegular || dec.File == 0 {
		return nil, false, nil
	}
	named := f.names[dec.File]
	for _, n := range named {
		n.lf.Mode = fmt.Sprintf("%04o", e.Mode)
	}
	if !dec.Data || (!offending && e.Nlink < 2 && len(named) == 0) {
		return nil, false, nil
	}
	content, err := readCapped(r, e.Size)
	if err != nil {
		return nil, false, err
	}
	f.content[dec.File] = content
	for _, n := range named {
		n.set(content)
	}
	return content, true, nil
}

// add records n, a name of the file numbered file (0: none), and
// returns its content so far, if known.
func (f *lockedFiles) add(file uint32, n *lockedName) ([]byte, bool) {
	if file == 0 {
		return nil, false
	}
	f.names[file] = append(f.names[file], n)
	c, ok := f.content[file]
	return c, ok
}

// set gives the lock file the content c.
func (n *lockedName) set(c []byte) {
	n.lf.SHA256 = digest.Bytes(c)
	n.lf.Content = ""
	if n.locksContent && len(c) <= maxLockedContent && utf8.Valid(c) {
		n.lf.Content = string(c)
	}
	if r := n.judged; r != nil {
		n.lf.Content = judgedContent(r, c)
	}
}

// judgedContent is what rule r reads in c, as the lock keeps it:
// "key = value" ("key absent" when c lacks it).
func judgedContent(r *rules.Rule, c []byte) string {
	res, err := trim.Actions[r.Action].Judge(r, c)
	switch {
	case err != nil:
		return fmt.Sprintf("%s unreadable: %v\n", r.Edit.Key, err)
	case !res.Found:
		return fmt.Sprintf("%s absent\n", r.Edit.Key)
	}
	return fmt.Sprintf("%s = %s\n", r.Edit.Key, res.Show())
}
