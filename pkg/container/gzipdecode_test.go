package container

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// procIO is this process's rchar and wchar: the bytes its read and write
// calls (copy_file_range counted in both) moved.
func procIO(t *testing.T) (rchar, wchar int64) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "rchar":
			rchar = n
		case "wchar":
			wchar = n
		}
	}
	return rchar, wchar
}

// TestGzipApplyDecodesOnce: apply on a gzip input through the splice
// decodes the input once: the reader's inflate maps the deflate blocks
// the splicer copies. Counted as the bytes read: the input once by its
// decoder, the copied blocks' bits once more by the splicer, the output
// once by the check before rename: about 3 times the file, where a second
// decode of the input to map its blocks (splice.ScanGzip, before) made it
// 4. The output is the same either way (docs/performance.md). The copy of
// the input that runs ahead in case nothing changes (copyahead.go), as
// far as it gets, is left out: it is all that is written besides the
// output.
func TestGzipApplyDecodesOnce(t *testing.T) {
	archivetest.RequireTool(t, "gzip")
	dir := t.TempDir()
	var stream bytes.Buffer
	w, err := archive.NewWriterFor(&stream, archive.Format{Kind: archive.KindCpio})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(29, 2))
	words := strings.Fields("usr lib etc systemd kubelet containerd libc.so.6 ELF 0x7f kube-proxy cni conflist")
	mt := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var entries []*archive.Entry
	data := map[string]string{}
	for i := range 400 {
		var b strings.Builder
		for b.Len() < 60<<10 {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(byte('0' + rng.IntN(75)))
		}
		name := fmt.Sprintf("usr/share/f%03d", i)
		e := &archive.Entry{Name: name, Type: archive.TypeRegular, Mode: 0o644, ModTime: mt, Size: int64(b.Len()), Nlink: 1}
		entries = append(entries, e)
		data[name] = b.String()
	}
	writeAll(t, w, entries, data)
	in := filepath.Join(dir, "in.cpio")
	mustDo(t, os.WriteFile(in, stream.Bytes(), 0o644))
	runIn(t, dir, nil, "gzip", "-9", "-n", "in.cpio")
	fi, err := os.Stat(in + ".gz")
	mustDo(t, err)
	drop := func(e Entries) error {
		return archive.Copy(e.Out, &dropReader{Reader: e.In, name: "usr/share/f010"}, archive.CopyOptions{Dest: e.OutFormat.Kind})
	}
	r0, w0 := procIO(t)
	res, err := Rewrite(in+".gz", filepath.Join(dir, "out.cpio.gz"), RewriteOptions{Reuse: true,
		Open: OpenOptions{Backend: compress.PureGo}, Transform: drop})
	mustDo(t, err)
	r1, w1 := procIO(t)
	out, err := os.Stat(filepath.Join(dir, "out.cpio.gz"))
	mustDo(t, err)
	ahead := (w1 - w0) - out.Size()
	read := r1 - r0 - ahead
	if !strings.Contains(res.Compressor, "splice") {
		t.Fatalf("not spliced: %q", res.Compressor)
	}
	times := float64(read) / float64(fi.Size())
	t.Logf("read %d bytes for an input of %d: %.2f times (the copy ahead, %d bytes, left out)", read, fi.Size(), times, ahead)
	if times > 3.5 {
		t.Errorf("read %d bytes for an input of %d: %.2f times, want at most 3.5 (one decode of the input)", read, fi.Size(), times)
	}
	runIn(t, dir, nil, "gzip", "-t", "out.cpio.gz")
}

// dropReader leaves one entry out.
type dropReader struct {
	archive.Reader
	name string
}

func (d *dropReader) Next() (*archive.Entry, error) {
	e, err := d.Reader.Next()
	if err == nil && e.Name == d.name {
		return d.Reader.Next()
	}
	return e, err
}
