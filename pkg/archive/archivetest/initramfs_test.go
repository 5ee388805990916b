package archivetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// header builds one newc header by hand, with its name and padding.
func header(magic string, mode, size, check uint32, name string) string {
	h := magic + fmt.Sprintf("%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		1, mode, 0, 0, 1, 0, size, 0, 0, 0, 0, uint32(len(name)+1), check) + name + "\x00"
	return pad4(h)
}

func pad4(s string) string {
	for len(s)%4 != 0 {
		s += "\x00"
	}
	return s
}

// TestCheckInitramfs holds the checker to the kernel's rules: it must
// refuse each archive the kernel would unpack only in part, or else the
// tests that lean on it prove nothing.
func TestCheckInitramfs(t *testing.T) {
	trailer := header("070701", 0, 0, 0, "TRAILER!!!")
	dir := header("070701", 0o40755, 0, 0, "etc")
	file := header("070701", 0o100644, 2, 0, "etc/f") + pad4("hi")
	for _, tc := range []struct {
		name, in string
		want     InitramfsStats
		wantErr  string
	}{
		{name: "good", in: dir + file + trailer, want: InitramfsStats{Members: 1, Entries: 2}},
		{name: "two members, zeros between", in: dir + trailer + strings.Repeat("\x00", 8) + file + trailer + "\x00\x00\x00\x00",
			want: InitramfsStats{Members: 2, Entries: 2}},
		{name: "good checksum", in: dir + header("070702", 0o100644, 2, 'h'+'i', "etc/f") + pad4("hi") + trailer,
			want: InitramfsStats{Members: 1, Entries: 2}},
		{name: "empty", in: "", wantErr: "no archive member"},
		{name: "no trailer", in: dir + file, wantErr: "truncated header"},
		{name: "old magic", in: strings.Replace(dir, "070701", "070707", 1) + trailer, wantErr: "is not 070701"},
		{name: "bad hex", in: dir[:6] + "zz" + dir[8:] + trailer, wantErr: "not hex"},
		{name: "parent later", in: file + dir + trailer, wantErr: `parent directory "etc" does not precede it`},
		{name: "bad checksum", in: dir + header("070702", 0o100644, 2, 0, "etc/f") + pad4("hi") + trailer, wantErr: "bad data checksum"},
		{name: "empty symlink", in: header("070701", 0o120777, 0, 0, "l") + trailer, wantErr: "empty symlink"},
		{name: "misaligned", in: dir + trailer + "\x00\x00" + file + trailer, wantErr: "not 4-byte aligned"},
		{name: "truncated data", in: dir + header("070701", 0o100644, 9, 0, "etc/f") + "hi", wantErr: "truncated data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckInitramfs(strings.NewReader(tc.in))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("stats (-want +got):\n%s", d)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
