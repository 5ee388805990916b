package trim

import (
	"path/filepath"
	"testing"
)

// TestJournalPath: the journal sits beside the tree; the live root, which
// has nothing beside it, keeps its journal in the temporary directory, so
// that apply on / works (the last RUN of a Dockerfile).
func TestJournalPath(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, tc := range []struct{ root, want string }{
		{"/work/out/target", "/work/out/.target.rootfs-trim-journal"},
		{"/work/out/target/", "/work/out/.target.rootfs-trim-journal"},
		{"/", filepath.Join(tmp, ".rootfs-trim-journal-of-root")},
	} {
		got, err := journalPath(tc.root)
		if err != nil {
			t.Errorf("journalPath(%q): %v", tc.root, err)
			continue
		}
		if got != tc.want {
			t.Errorf("journalPath(%q) = %q, want %q", tc.root, got, tc.want)
		}
	}
}
