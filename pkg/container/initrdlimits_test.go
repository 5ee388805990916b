package container

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// manyInitrdsISO builds, with xorriso, an ISO whose grub.cfg names n
// initrd files, /boot/i0 ... : each a gzip cpio holding etc/fK, of size
// bytes (zeros: the image stays small, the decompressed segment not).
func manyInitrdsISO(t *testing.T, n, size int) string {
	t.Helper()
	archivetest.RequireTool(t, "xorriso")
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	mustDo(t, os.MkdirAll(filepath.Join(root, "boot", "grub"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(root, "boot", "bzImage"), []byte("a kernel"), 0o644))
	var cfg strings.Builder
	cfg.WriteString("menuentry x {\n linux /boot/bzImage\n initrd")
	for k := range n {
		var buf bytes.Buffer
		zw, _, err := compress.NewWriter(&buf, compress.Gzip, compress.WriterOptions{})
		mustDo(t, err)
		w := archive.NewCpioWriter(zw, archive.Newc)
		mustDo(t, w.WriteHeader(&archive.Entry{Name: fmt.Sprintf("etc/f%d", k), Type: archive.TypeRegular, Mode: 0o644, Size: int64(size)}))
		_, err = w.Write(make([]byte, size))
		mustDo(t, err)
		mustDo(t, w.Close())
		mustDo(t, zw.Close())
		name := fmt.Sprintf("i%d", k)
		mustDo(t, os.WriteFile(filepath.Join(root, "boot", name), buf.Bytes(), 0o644))
		cfg.WriteString(" /boot/" + name)
	}
	cfg.WriteString("\n}\n")
	mustDo(t, os.WriteFile(filepath.Join(root, "boot", "grub", "grub.cfg"), []byte(cfg.String()), 0o644))
	out := filepath.Join(dir, "many.iso")
	cmd := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-R", "-J", "-o", out, root)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v\n%s", err, b)
	}
	return out
}

// TestInitrdFilesCapped: a boot entry naming more initrd files than
// MaxInitrdFiles is refused before one is read, by list and apply alike,
// and apply leaves nothing beside its output (issue 37 item 12: 16,000
// files took list 28 s, apply ran out of memory and left its temporary
// directory).
func TestInitrdFilesCapped(t *testing.T) {
	iso := manyInitrdsISO(t, MaxInitrdFiles+1, 1)
	want := fmt.Sprintf("initrd (/boot/grub/grub.cfg:3) is %d files: more than the %d a boot entry may load here; refused", MaxInitrdFiles+1, MaxInitrdFiles)
	_, err := Open(iso, OpenOptions{})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Open: %v, want %q", err, want)
	}
	outDir := t.TempDir()
	_, err = Rewrite(iso, filepath.Join(outDir, "out.iso"), RewriteOptions{Reuse: true})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Rewrite: %v, want %q", err, want)
	}
	if left, _ := os.ReadDir(outDir); len(left) != 0 {
		t.Errorf("left beside the output: %v", left)
	}
}

// TestInitrdFilesBounded: at the cap, every file a segment of 2 MiB
// decompressed, an apply-like rewrite (one entry of the last file
// dropped) holds one segment's matcher at a time, not one per segment:
// the heap stays far under the 64 x 16 MiB the matchers took up front,
// kept to the end; and reading the files costs time linear in their
// number (the view's file lookup was a scan from the first).
func TestInitrdFilesBounded(t *testing.T) {
	const size = 2 << 20
	iso := manyInitrdsISO(t, MaxInitrdFiles, size)
	drop := fmt.Sprintf("etc/f%d", MaxInitrdFiles-1)
	transform := func(e Entries) error {
		return archive.Copy(e.Out, e.In, archive.CopyOptions{Dest: e.OutFormat.Kind, Decide: func(e *archive.Entry) (archive.Action, error) {
			if e.Name == drop {
				return archive.Drop, nil
			}
			return archive.Keep, nil
		}})
	}
	runtime.GC()
	peak := sampleHeap()
	outDir := t.TempDir()
	out := filepath.Join(outDir, "out.iso")
	_, err := Rewrite(iso, out, RewriteOptions{Reuse: true, Transform: transform})
	high := peak()
	mustDo(t, err)
	if high > 256<<20 {
		t.Errorf("heap peaked at %d MiB rewriting %d segments of %d MiB", high>>20, MaxInitrdFiles, size>>20)
	}
	t.Logf("heap peak %d MiB", high>>20)
	in, err := Open(out, OpenOptions{})
	mustDo(t, err)
	defer in.Close()
	var got []string
	for {
		e, err := in.Next()
		if err != nil {
			break
		}
		if e.Type != archive.TypeTrailer {
			got = append(got, e.Name)
		}
	}
	if len(got) != MaxInitrdFiles-1 || slices.Contains(got, drop) {
		t.Errorf("output holds %d entries (want %d, %s gone): %v", len(got), MaxInitrdFiles-1, drop, got)
	}
	if left, _ := os.ReadDir(outDir); len(left) != 1 {
		t.Errorf("beside the output: %v, want out.iso alone", left)
	}
}

// sampleHeap samples the heap in use until the returned function is
// called, which returns the highest seen.
func sampleHeap() func() uint64 {
	var mu sync.Mutex
	var high uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			high = max(high, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return high
	}
}

// TestSegmentsCapped: a file of more than MaxSegments segments is refused
// at the first one too many, naming it; at the cap it is read.
func TestSegmentsCapped(t *testing.T) {
	member := func(k int) []byte {
		var buf bytes.Buffer
		zw, _, err := compress.NewWriter(&buf, compress.Gzip, compress.WriterOptions{})
		mustDo(t, err)
		w := archive.NewCpioWriter(zw, archive.Newc)
		name := fmt.Sprintf("etc/f%d", k)
		mustDo(t, w.WriteHeader(&archive.Entry{Name: name, Type: archive.TypeRegular, Mode: 0o644, Size: int64(len(name))}))
		_, err = w.Write([]byte(name)) // what readSegments checks
		mustDo(t, err)
		mustDo(t, w.Close())
		mustDo(t, zw.Close())
		return buf.Bytes()
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{n: MaxSegments},
		{n: MaxSegments + 1, want: fmt.Sprintf("segment %d at offset", MaxSegments+1)},
	} {
		var file []byte
		for k := range tc.n {
			file = append(file, member(k)...)
		}
		_, segs, err := readSegments(t, file)
		switch {
		case tc.want == "" && (err != nil || len(segs) != tc.n):
			t.Errorf("%d segments: %d read, %v", tc.n, len(segs), err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "more than 64 segments")):
			t.Errorf("%d segments: %v, want %q", tc.n, err, tc.want)
		}
	}
}
