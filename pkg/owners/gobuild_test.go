package owners

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage/ocitest"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners/gobintest"
)

// goOwnership is what a DB says of Go binaries.
type goOwnership struct {
	Owners         map[string]string
	Modules        map[string]string
	ModuleFiles    map[string][]string
	GoFiles        int
	Contradictions []Contradiction
}

// TestGoBuildOwners: an executable no record names is owned by the main
// module its Go build information names, at the module's version, or,
// for "(devel)" and a GOPATH build, with no version; go version -m on each
// binary is the oracle. A dpkg package and an owners list still win, and
// an owners list's version that the binary contradicts is said. A tree
// (opened, each binary read in place) and a tar of it (read once, each
// binary held while it goes by) give the same.
func TestGoBuildOwners(t *testing.T) {
	b := gobintest.New(t)
	bins := map[string]string{
		"usr/local/bin/buildkitd": b.Module("example.com/buildkit", "v1.2.3"),
		"usr/local/bin/buildctl":  b.Module("example.com/buildkit", "v1.2.3"),
		"usr/local/bin/devel":     b.Devel("example.com/develtool"),
		"usr/bin/containerd":      b.GOPATH("example.com/containerd/cmd/containerd"),
		"usr/local/bin/crictl":    b.Module("example.com/crictl", "v0.9.0"),
		"usr/bin/runc":            b.Module("example.com/runc", "v1.1.0"),
	}
	// The oracle: what go version -m says of each.
	pathRE, modRE := regexp.MustCompile(`(?m)^\tpath\t(\S+)$`), regexp.MustCompile(`(?m)^\tmod\t(\S+)\t(\S+)`)
	oracle := map[string][2]string{}
	for p, bin := range bins {
		out := b.VersionM(bin)
		if m := modRE.FindStringSubmatch(out); m != nil {
			oracle[p] = [2]string{m[1], m[2]}
		} else if m := pathRE.FindStringSubmatch(out); m != nil {
			oracle[p] = [2]string{m[1], ""}
		} else {
			t.Fatalf("go version -m %s: no path:\n%s", bin, out)
		}
	}
	version := func(p string) string {
		if v := oracle[p][1]; v != "(devel)" {
			return v
		}
		return ""
	}
	want := goOwnership{
		Owners: map[string]string{
			"usr/local/bin/buildkitd": oracle["usr/local/bin/buildkitd"][0],
			"usr/local/bin/buildctl":  oracle["usr/local/bin/buildctl"][0],
			"usr/local/bin/devel":     oracle["usr/local/bin/devel"][0],
			"usr/bin/containerd":      oracle["usr/bin/containerd"][0],
			"usr/local/bin/crictl":    "crictl",
			"usr/bin/runc":            "runc",
			"usr/bin/script":          Unknown,
		},
		Modules: map[string]string{
			oracle["usr/local/bin/buildkitd"][0]: version("usr/local/bin/buildkitd"),
			oracle["usr/local/bin/devel"][0]:     version("usr/local/bin/devel"),
			oracle["usr/bin/containerd"][0]:      version("usr/bin/containerd"),
		},
		ModuleFiles: map[string][]string{
			oracle["usr/local/bin/buildkitd"][0]: {"usr/local/bin/buildctl", "usr/local/bin/buildkitd"},
			oracle["usr/local/bin/devel"][0]:     {"usr/local/bin/devel"},
			oracle["usr/bin/containerd"][0]:      {"usr/bin/containerd"},
		},
		GoFiles: 4,
		Contradictions: []Contradiction{{Path: "usr/local/bin/crictl", Package: "crictl", Listed: "v1.0.0",
			Module: oracle["usr/local/bin/crictl"][0], Version: oracle["usr/local/bin/crictl"][1]}},
	}
	if diff := cmp.Diff(map[string]string{"example.com/buildkit": "v1.2.3", "example.com/develtool": "", "example.com/containerd/cmd/containerd": ""}, want.Modules); diff != "" {
		t.Fatalf("go version -m does not say what the builds mean to record (-want +got):\n%s", diff)
	}

	root := t.TempDir()
	files := map[string]string{
		DpkgInfoDir + "/runc.list":   "/.\n/usr/bin/runc\n",
		DpkgStatus:                   "Package: runc\nStatus: install ok installed\nVersion: 1.1.5+ds1-1\n",
		ListsDir + "/crictl.list":    "/usr/local/bin/crictl\n",
		ListsDir + "/crictl.version": "v1.0.0\n",
		"usr/bin/script":             "#!/bin/sh\n",
	}
	for p, data := range files {
		writeTreeFile(t, filepath.Join(root, p), []byte(data), 0o755)
	}
	for p, bin := range bins {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		writeTreeFile(t, filepath.Join(root, p), data, 0o755)
	}
	archive := filepath.Join(t.TempDir(), "root.tar")
	tarTree(t, root, archive)
	var records, binaries []ocitest.Entry
	for p, data := range files {
		records = append(records, ocitest.Entry{Name: p, Data: data, Mode: 0o644})
	}
	for p, bin := range bins {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		binaries = append(binaries, ocitest.Entry{Name: p, Data: string(data), Mode: 0o755})
	}
	layout := filepath.Join(t.TempDir(), "layout")
	ocitest.WriteLayout(layout, ocitest.Image([]ocitest.Step{{CreatedBy: "records", Entries: records}, {CreatedBy: "binaries", Entries: binaries}}, "linux/amd64"), "test")
	for _, input := range []string{root, archive, layout} {
		db, err := Load(input, container.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := goOwnership{Owners: map[string]string{}, Modules: db.Modules, ModuleFiles: db.ModuleFiles, GoFiles: db.GoFiles, Contradictions: db.Contradictions}
		for p := range want.Owners {
			got.Owners[p] = db.Owners.Owner(p)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", filepath.Base(input), diff)
		}
	}
}

func writeTreeFile(t *testing.T, name string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, mode); err != nil {
		t.Fatal(err)
	}
}

// tarTree writes the tree at root as a tar, in the tree's walk order
// (usr/ before var/: the binaries come before dpkg's lists).
func tarTree(t *testing.T, root, name string) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	if err := tw.AddFS(os.DirFS(root)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// FuzzGoBinaries: whatever an executable holds (a hostile ELF, a
// truncated one, a header whose size is not its data's), reading it for
// build information neither fails nor panics on in-memory data, and
// Later hands the caller its data byte for byte.
func FuzzGoBinaries(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01\x00"), int64(minGoBinary))
	f.Add([]byte("#!/bin/sh\necho hi\n"), int64(minGoBinary+1))
	f.Add(append([]byte("\x7fELF"), []byte("\xff Go buildinf:\x08\x02")...), int64(MaxGoBinary))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		// The size a header claims decides whether the data is read; the
		// data is what the entry holds, shorter or longer.
		e := &archive.Entry{Name: "usr/bin/x", Type: archive.TypeRegular, Mode: 0o755, Size: size}
		later := NewLater[struct{}]("fuzz", 0)
		r, err := later.Entry(e, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("error on in-memory data: %v", err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("the caller read %d bytes (%v), want the entry's %d", len(got), err, len(data))
		}
		db, err := later.Done()
		if err != nil {
			t.Fatal(err)
		}
		if db != nil && db.GoFiles > 0 && !validModulePath(db.Owners.Owner("usr/bin/x")) {
			t.Fatalf("owner %q", db.Owners.Owner("usr/bin/x"))
		}
	})
}
