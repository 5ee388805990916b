package container

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
)

// tarInTar is a container that exists only in the tests: a tar file
// whose one member, inner.tar, is the archive. It is the one-place change
// docs/architecture.md names ("A new container"), shown: one type and one
// row (withTarInTar), and the table tests take it through open, list,
// audit, apply and repack as they take the real ones.
type tarInTar struct{ plain }

const tarInTarMember = "inner.tar"

func (tarInTar) Name() string { return "tar-in-tar" }

func (tarInTar) Is(path string, fi os.FileInfo) bool {
	if !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	h, err := tar.NewReader(f).Next()
	return err == nil && h.Name == tarInTarMember
}

func (tarInTar) Open(path string, fi os.FileInfo, opt OpenOptions) (*Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(f)
	in, err := func() (*Input, error) {
		if _, err := tr.Next(); err != nil {
			return nil, err
		}
		return openStream(tr, nil, opt, false)
	}()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	in.Format.Container = tarInTar{}
	return fileInput(in, path, f, fi)
}

func (tarInTar) describe(f archive.Format) string { return f.String() + " in a tar" }

// writer: a tar in a tar, but a tree as asked.
func (c tarInTar) writer(_ *Input, f archive.Format) Container {
	if f.Kind == archive.KindDir {
		return treeContainer{}
	}
	return c
}

func (tarInTar) create(w writing) (sink, error) {
	w.noReuse()
	work, err := tempDir(w.path)
	if err != nil {
		return nil, err
	}
	inner, err := createStream(filepath.Join(work, tarInTarMember), w.out.Format, OutputOptions{Compress: compressOptions(w.opt, compress.LevelChoice{}), Digest: w.opt.Digest})
	if err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	return &tarInTarOut{Output: inner, path: w.path, work: work}, nil
}

// tarInTarOut writes the archive as a stream, then wraps it.
type tarInTarOut struct {
	*Output
	path, work string
}

func (o *tarInTarOut) Commit() error {
	if err := o.Output.Commit(); err != nil {
		return err
	}
	defer os.RemoveAll(o.work)
	inner, err := os.Open(o.Output.Path)
	if err != nil {
		return err
	}
	defer inner.Close()
	fi, err := inner.Stat()
	if err != nil {
		return err
	}
	outer := filepath.Join(o.work, "outer.tar")
	f, err := os.Create(outer)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = tw.WriteHeader(&tar.Header{Name: tarInTarMember, Mode: 0o644, Size: fi.Size(), Typeflag: tar.TypeReg})
	if err == nil {
		_, err = io.Copy(tw, inner)
	}
	if err == nil {
		err = tw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(outer, o.path)
}

func (o *tarInTarOut) Abort() {
	o.Output.Abort()
	os.RemoveAll(o.work)
}

// samples: the tree as a gzip newc archive, wrapped.
func (tarInTar) samples(t *testing.T, tree string) []Sample {
	inner := rewriteTo(t, tree, tarInTarMember, Want{Format: "newc", Codec: "gzip"})
	path := filepath.Join(t.TempDir(), "tar-in-tar.tar")
	b, err := os.ReadFile(inner)
	mustDo(t, err)
	f, err := os.Create(path)
	mustDo(t, err)
	tw := tar.NewWriter(f)
	mustDo(t, tw.WriteHeader(&tar.Header{Name: tarInTarMember, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}))
	_, err = tw.Write(b)
	mustDo(t, err)
	mustDo(t, tw.Close())
	mustDo(t, f.Close())
	return []Sample{{Name: "newc-gzip", Path: path}}
}

// withTarInTar registers tarInTar, with its one row, for the test: before
// the stream, which takes any regular file.
func withTarInTar(t *testing.T) {
	saved := containers
	containers = slices.Insert(slices.Clone(containers), len(containers)-1, Container(tarInTar{}))
	t.Cleanup(func() { containers = saved })
}

// WithTestContainer registers the test-only container for an external
// test (commands_test.go).
func WithTestContainer(t *testing.T) { withTarInTar(t) }

// RowSamples is every row's samples, the test-only row's too once
// registered, each named row/sample, with the row's name in Row: the
// table the command tests walk.
func RowSamples(t *testing.T, tree string) []Sample {
	var out []Sample
	for _, c := range containers {
		s, ok := c.(sampler)
		if !ok {
			t.Fatalf("container %q supplies no samples", c.Name())
		}
		for _, sample := range s.samples(t, tree) {
			sample.Name, sample.Row = c.Name()+"/"+sample.Name, c.Name()
			out = append(out, sample)
		}
	}
	return out
}

// TestNewContainerFiles: docs/architecture.md's "A new container" names
// every method of Container, and exactly the files a new container
// touches (those tarInTar, the tests' own, shows; the documents; the
// table tests), each of which exists.
func TestNewContainerFiles(t *testing.T) {
	b, err := os.ReadFile("../../docs/architecture.md")
	mustDo(t, err)
	doc := string(b)
	start := strings.Index(doc, "- **A new container**")
	if start < 0 {
		t.Fatal(`docs/architecture.md has no "A new container"`)
	}
	section := doc[start:]
	section = section[:strings.Index(section[1:], "\n- **")+1]
	quoted := map[string]bool{}
	for i, part := range strings.Split(section, "`") {
		if i%2 == 1 {
			quoted[part] = true
		}
	}
	ct := reflect.TypeOf((*Container)(nil)).Elem()
	for i := range ct.NumMethod() {
		if name := ct.Method(i).Name; !quoted[name] {
			t.Errorf("Container's method %s is not named", name)
		}
	}
	var files []string
	for q := range quoted {
		if strings.HasSuffix(q, ".go") || strings.HasSuffix(q, ".md") {
			files = append(files, q)
			if _, err := os.Stat(filepath.Join("../..", q)); err != nil {
				t.Errorf("named, but: %v", err)
			}
		}
	}
	slices.Sort(files)
	want := []string{"docs/formats.md", "docs/security.md", "pkg/container/commands_test.go", "pkg/container/containers.go", "pkg/container/containers_test.go", "pkg/container/tarintar_test.go"}
	if d := cmp.Diff(want, files); d != "" {
		t.Errorf("the files named (-want +got):\n%s", d)
	}
}
