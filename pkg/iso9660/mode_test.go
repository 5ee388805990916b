package iso9660

import (
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnixMode: Rock Ridge's st_mode as fs.FileMode, each file type and
// special bit, and bits above st_mode's (a hostile PX) ignored.
func TestUnixMode(t *testing.T) {
	cases := map[uint32]fs.FileMode{
		0o100644:              0o644,
		0o040755:              fs.ModeDir | 0o755,
		0o120777:              fs.ModeSymlink | 0o777,
		0o020600:              fs.ModeDevice | fs.ModeCharDevice | 0o600,
		0o060600:              fs.ModeDevice | 0o600,
		0o010644:              fs.ModeNamedPipe | 0o644,
		0o140755:              fs.ModeSocket | 0o755,
		0o104755:              fs.ModeSetuid | 0o755,
		0o042775:              fs.ModeDir | fs.ModeSetgid | 0o775,
		0o041777:              fs.ModeDir | fs.ModeSticky | 0o777,
		0o030644:              0o644, // no file type
		0xffff0000 | 0o040700: fs.ModeDir | 0o700,
	}
	got := map[uint32]fs.FileMode{}
	for m := range cases {
		got[m] = unixMode(m)
	}
	if d := cmp.Diff(cases, got); d != "" {
		t.Errorf("unixMode (-want +got):\n%s", d)
	}
}
