package container

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// TestTarSparseBomb: the holes a sparse file expands to count against
// --max-size, as decompressed bytes do: a few kilobytes of tar holding a
// 1 TiB hole are refused, quickly, rather than expanded.
func TestTarSparseBomb(t *testing.T) {
	requireGNUTar(t)
	src := t.TempDir()
	holeyFile(t, filepath.Join(src, "bomb"), 1<<40, map[int64]string{1<<40 - 4: "end\n"})
	holeyFile(t, filepath.Join(src, "a"), 600<<20, map[int64]string{0: "a"})
	holeyFile(t, filepath.Join(src, "b"), 600<<20, map[int64]string{0: "b"})
	for _, tc := range []struct {
		files []string
		err   string // "" when it fits
	}{
		{[]string{"bomb"}, `tar "bomb": expanding its holes: input expands beyond the size limit (--max-size 1073741824 bytes): a sparse bomb`},
		{[]string{"a"}, ""},
		// The limit is for the whole input, holes and data alike.
		{[]string{"a", "b"}, `tar "b": expanding its holes`},
	} {
		t.Run(strings.Join(tc.files, "+"), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "a.tar")
			runIn(t, src, nil, "tar", append([]string{"--format=posix", "--sparse", "-cf", file}, tc.files...)...)
			in, err := Open(file, OpenOptions{MaxSize: 1 << 30})
			mustDo(t, err)
			defer in.Close()
			start := time.Now()
			for err == nil {
				if _, err = in.Next(); err == nil {
					_, err = io.Copy(io.Discard, in)
				}
			}
			if tc.err == "" && err != io.EOF || tc.err != "" && (!errors.Is(err, archive.ErrTooLarge) || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
