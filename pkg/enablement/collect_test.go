package enablement

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// TestCollectorBounded: an input of more preset files than a Collector
// holds is refused naming the entry, not read into memory to the end.
func TestCollectorBounded(t *testing.T) {
	c := NewCollector("crio.service")
	data := bytes.Repeat([]byte("#\n"), maxFile/2)
	var err error
	for i := 0; err == nil && i < maxHeld/maxFile+2; i++ {
		e := &archive.Entry{Name: fmt.Sprintf("etc/systemd/system-preset/%d.preset", i), Type: archive.TypeRegular, Size: int64(len(data))}
		_, err = c.Entry(e, bytes.NewReader(data))
	}
	var fe *archive.FormatError
	if !errors.Is(err, ErrTooMany) || !errors.As(err, &fe) || fe.Entry == "" {
		t.Fatalf("err %v, want ErrTooMany naming the entry", err)
	}
}

// TestCollectorLaterEntryWins: a later entry of a path replaces what an
// earlier one said (a link over a unit file, then a directory over it),
// and the data a Collector reads is still the caller's to read.
func TestCollectorLaterEntryWins(t *testing.T) {
	c := NewCollector("crio.service")
	unit := "usr/lib/systemd/system/crio.service"
	r, err := c.Entry(&archive.Entry{Name: unit, Type: archive.TypeRegular, Size: 3}, bytes.NewReader([]byte("[x]")))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(r); string(got) != "[x]" {
		t.Fatalf("the caller reads %q", got)
	}
	if _, err := c.Entry(&archive.Entry{Name: "./" + unit, Type: archive.TypeSymlink, Linkname: "/dev/null"}, nil); err != nil {
		t.Fatal(err)
	}
	if target, err := fs.ReadLink(c.FS(), unit); err != nil || target != "/dev/null" {
		t.Fatalf("ReadLink: %q, %v; want the later link", target, err)
	}
	if _, err := c.Entry(&archive.Entry{Name: unit, Type: archive.TypeDir}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Lstat(c.FS(), unit); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Lstat after a directory replaced it: %v", err)
	}
}
