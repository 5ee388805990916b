package cli

import (
	"archive/tar"
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
)

// TestImageReadOnce: list, audit and check read each layer of an image
// once, and apply once to judge it plus once to copy the layers it keeps:
// the merged view's headers, and the data of the files the rules name,
// come from the one pass that learns what each layer hides (issue 26, 29).
// The layers hold 4 MiB of random data each, which gzip cannot shrink, so
// a second decompression is a second read of the blobs.
func TestImageReadOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	big := func(name string) ocitest.Entry {
		b := make([]byte, 4<<20)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return ocitest.Entry{Name: name, Data: string(b)}
	}
	steps := ocitest.Kicbase("../../../../testdata/packages")
	for i := range steps {
		steps[i].Entries = append(steps[i].Entries, big("opt/blob"+strconv.Itoa(i)))
	}
	steps = append(steps, ocitest.Step{CreatedBy: "RUN rm /opt/blob0", Entries: []ocitest.Entry{
		{Name: "opt/", Type: tar.TypeDir}, {Name: "opt/.wh.blob0"}}})
	img := ocitest.Image(steps, "linux/amd64")
	var blobs int64
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			t.Fatal(err)
		}
		blobs += n
	}
	dir := t.TempDir()
	lock := filepath.Join(dir, "kic.lock")
	tests := []struct {
		name  string
		args  []string
		code  int
		reads float64 // the blobs' bytes read, at most, as a multiple of their size
	}{
		{"list", []string{"list"}, ExitOK, 1.1},
		{"audit", []string{"audit", "--rules", "../../../../rules"}, ExitFindings, 1.1},
		{"check", []string{"check", "--rules", "../../../../rules", "--lock", lock, "--update-lock"}, ExitOK, 1.1},
		{"apply", []string{"apply", "--rules", "../../../../rules", "--quiet"}, ExitOK, 2.1},
		// A docker save tarball: owners read as the merged view goes by.
		{"apply-tarball", []string{"apply", "--rules", "../../../../rules", "--quiet"}, ExitOK, 2.1},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A new image each time: none was scanned before (Open's cache).
			in := filepath.Join(dir, "kic"+strconv.Itoa(i))
			if tc.name == "apply-tarball" {
				in += ".tar"
				ocitest.WriteDockerArchive(in, img, "kicbase:test")
			} else {
				ocitest.WriteLayout(in, img, "kicbase")
			}
			args := append(tc.args, in)
			if strings.HasPrefix(tc.name, "apply") {
				args = append(args, filepath.Join(dir, tc.name+"-out"))
			}
			before := bytesRead(t)
			code, _, stderr := run(t, nil, args...)
			read := bytesRead(t) - before
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			got := float64(read) / float64(blobs)
			t.Logf("%s read %.2f times the layers' %d bytes", tc.name, got, blobs)
			if got > tc.reads {
				t.Errorf("%s read %d bytes, %.2f times the layers' %d; want at most %.1f times", tc.name, read, got, blobs, tc.reads)
			}
		})
	}
	if !bytes.Contains(must(os.ReadFile(lock)), []byte("crio")) {
		t.Error("the lock names no cri-o file")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
