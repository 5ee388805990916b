package trim

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// Two deferred files that rules of one package restore at one path for one
// condition (cri-o's 10-crio-bridge.conflist and .conflist.disabled, after
// a package upgrade): the one already at that path is deferred and
// restored, the other removed, naming the one kept, whatever order the
// input lists them in. Files of two packages, or two renamed files of which
// none is at the restored path, are still refused.
func TestTwoDeferralsOfOnePath(t *testing.T) {
	const (
		on  = "etc/x/a.conf"
		off = "etc/x/a.conf.off"
		old = "etc/x/a.conf.old"
	)
	ruleOn := "  - name: on\n    match: [\"" + on + "\"]\n    action: defer\n    runtime: crio\n    reason: t\n"
	ruleOff := "  - name: off\n    match: [\"" + off + "\"]\n    action: defer\n    runtime: crio\n    restore_as: a.conf\n    reason: t\n"
	ruleOld := "  - name: old\n    match: [\"" + old + "\"]\n    action: defer\n    runtime: crio\n    restore_as: a.conf\n    reason: t\n"
	ruleOffOther := strings.Replace(ruleOff, "runtime: crio", "runtime: containerd", 1)
	type result struct {
		Deferred map[string]string // index: deferred dest -> source
		Removed  map[string]string // manifest: removed path -> kept
		Err      string
	}
	tests := []struct {
		name  string
		files map[string]string // rule file -> its rules
		order []string
		want  result
	}{
		{"enabled first", map[string]string{"p.yaml": ruleOn + ruleOff}, []string{on, off},
			result{Deferred: map[string]string{on: contract.DeferredPath("crio", on)}, Removed: map[string]string{off: on}}},
		{"disabled first", map[string]string{"p.yaml": ruleOff + ruleOn}, []string{off, on},
			result{Deferred: map[string]string{on: contract.DeferredPath("crio", on)}, Removed: map[string]string{off: on}}},
		{"two packages", map[string]string{"p.yaml": ruleOn, "q.yaml": strings.Replace(ruleOff, "name: off", "name: q-off", 1)}, []string{on, off},
			result{Err: "both restore"}},
		{"none at the restored path", map[string]string{"p.yaml": ruleOff + ruleOld}, []string{off, old},
			result{Err: "rules off and old both restore etc/x/a.conf for crio at boot"}},
		{"other conditions", map[string]string{"p.yaml": ruleOn + ruleOffOther}, []string{on, off},
			result{Deferred: map[string]string{on: contract.DeferredPath("crio", on), "containerd " + on: contract.DeferredPath("containerd", off)}, Removed: map[string]string{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				pkg := strings.TrimSuffix(name, ".yaml")
				if err := os.WriteFile(filepath.Join(dir, name), []byte("package: "+pkg+"\nrules:\n"+body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			set, err := rules.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			mt := time.Unix(1700000000, 0).UTC()
			entries := []*archive.Entry{
				{Name: ".", Type: archive.TypeDir, Mode: 0o755, Nlink: 3, ModTime: mt},
				{Name: "etc", Type: archive.TypeDir, Mode: 0o755, Nlink: 3, ModTime: mt},
				{Name: "etc/x", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
			}
			for _, p := range tc.order {
				entries = append(entries, &archive.Entry{Name: p, Type: archive.TypeRegular, Mode: 0o644, Nlink: 1, ModTime: mt, Size: int64(len(p))})
			}
			var in bytes.Buffer
			w := archive.NewCpioWriter(&in, archive.Newc)
			for _, e := range entries {
				w.WriteHeader(e)
				io.WriteString(w, e.Name[:e.Size]) // each file holds its own name
			}
			w.Close()

			// A stream, then a tree, must agree.
			var out bytes.Buffer
			rep, err := ApplyStream(archive.NewCpioWriter(&out, archive.Newc), archive.KindCpio, archive.NewCpioReader(&in), Options{Set: set, Owners: owners.New()}, nil)
			files := map[string]string{}
			if err == nil {
				eachCpioEntry(t, out.Bytes(), func(e *archive.Entry, r io.Reader) {
					b, _ := io.ReadAll(r)
					files[e.Name] = string(b)
				})
			}
			checkRestored(t, "stream", rep, files, err, tc.want.Deferred, tc.want.Removed, tc.want.Err)

			root := t.TempDir()
			os.MkdirAll(filepath.Join(root, "etc/x"), 0o755)
			for _, p := range tc.order {
				os.WriteFile(filepath.Join(root, p), []byte(p), 0o644)
			}
			rep, err = ApplyDir(context.Background(), root, Options{Set: set, Owners: owners.New(), Epoch: &mt}, false)
			files = map[string]string{}
			filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					rel, _ := filepath.Rel(root, p)
					b, _ := os.ReadFile(p)
					files[rel] = string(b)
				}
				return nil
			})
			checkRestored(t, "tree", rep, files, err, tc.want.Deferred, tc.want.Removed, tc.want.Err)
		})
	}
}

// checkRestored compares what an apply did with what TestTwoDeferralsOfOnePath
// wants: the error, or the index's deferred records (restored path, with
// "containerd " before it for that condition -> the copy, which must hold
// the source's content), the removals with the file kept, and no file left
// in etc/x.
func checkRestored(t *testing.T, how string, rep *Report, files map[string]string, err error, deferred, removed map[string]string, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: err = %v, want %q", how, err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", how, err)
	}
	ix, err := contract.DecodeIndex(strings.NewReader(files[contract.IndexPath]))
	if err != nil {
		t.Fatalf("%s: index: %v", how, err)
	}
	gotDeferred := map[string]string{}
	for _, f := range ix.Files {
		if f.Kind == contract.Deferred {
			key := f.Dest
			if f.When.Runtimes[0] != "crio" {
				key = f.When.Runtimes[0] + " " + f.Dest
			}
			gotDeferred[key] = f.Source
			if src := strings.TrimPrefix(f.Source, contract.Dir+"/deferred/"+f.When.Runtimes[0]+"/"); files[f.Source] != src {
				t.Errorf("%s: %s holds %q, want the content of %s", how, f.Source, files[f.Source], src)
			}
		}
	}
	if d := cmp.Diff(deferred, gotDeferred); d != "" {
		t.Errorf("%s: deferred (-want +got):\n%s", how, d)
	}
	gotRemoved := map[string]string{}
	for _, c := range rep.Changes {
		if c.Kind == contract.Removed {
			gotRemoved[c.Path] = c.Kept
		}
	}
	if d := cmp.Diff(removed, gotRemoved); d != "" {
		t.Errorf("%s: removed -> kept (-want +got):\n%s", how, d)
	}
	for p := range files {
		if strings.HasPrefix(p, "etc/x/") {
			t.Errorf("%s: %s is still in /etc", how, p)
		}
	}
}
