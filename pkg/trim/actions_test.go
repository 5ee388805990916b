package trim

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// allActions lists pkg/rules' actions: the values from 1 (0 is no action)
// up to the first that has no name of its own, for which String says
// "action(N)".
func allActions() []rules.Action {
	var all []rules.Action
	for a := rules.Action(1); !strings.HasPrefix(a.String(), "action("); a++ {
		all = append(all, a)
	}
	return all
}

// TestEveryActionHandled walks every rule action and fails when one is not
// handled everywhere it must be: its row in Actions (decision, manifest
// kind, export, check), its writer, and what apply, on a stream and on a
// tree, does with a file it takes. A new action needs a row here too, which
// says what it must do.
func TestEveryActionHandled(t *testing.T) {
	const src = "etc/x/f.conf"
	want := map[rules.Action]struct {
		fields       string // the rule's YAML beyond match, name and reason
		kind         contract.Kind
		dest         string // where apply writes the file; "" when it only goes
		exportable   bool
		locksContent bool
		// link: the action takes only symlinks; src is one, to link,
		// and dest must hold what want says ("-> target" for a symlink).
		link, want string
		dirs       bool   // a directory the rule matches goes with all beneath
		target     string // audit's Target for the file
		// content is the file's ("hello" if empty): what an action that
		// judges it (ActionSpec.Judge) has something to change in.
		content string
	}{
		rules.Strip:    {"action: strip", contract.Removed, "", true, false, "", "", true, "", ""},
		rules.Relocate: {"action: relocate\n    to: opt/moved/", contract.Relocated, "opt/moved/f.conf", false, false, "", "hello", false, "", ""},
		rules.Defer: {"action: defer\n    runtime: containerd", contract.Deferred,
			contract.DeferredPath("containerd", src), false, true, "", "hello", false, "", ""},
		rules.Retarget: {"action: retarget\n    to: /opt/new/f.conf", contract.Retargeted, src, false, false, "/opt/old/f.conf", "-> /opt/new/f.conf", false, "/opt/new/f.conf", ""},
		rules.Edit: {"action: edit\n    format: toml\n    key: a\n    set: 22", contract.Edited, src, false, false, "", "a = 22 # x\n", false, "",
			"a = 1 # x\n"},
	}
	if len(Actions) != len(actionTable) {
		t.Errorf("actionTable has %d rows for %d actions: one row per action", len(actionTable), len(Actions))
	}
	for a := range Actions {
		if !slices.Contains(allActions(), a) {
			t.Errorf("Actions has a row for %v, which pkg/rules does not know", a)
		}
	}
	for _, a := range allActions() {
		t.Run(a.String(), func(t *testing.T) {
			w, ok := want[a]
			if !ok {
				t.Fatalf("action %s has no row in this test: say what apply must do with it", a)
			}
			spec := Actions[a]
			if spec == nil {
				t.Fatalf("action %s has no row in trim.Actions (actions.go)", a)
			}
			if spec.Action != a {
				t.Errorf("Actions[%s] is the row of action %s", a, spec.Action)
			}
			if !slices.Contains(Kinds(), spec.Kind) || specOfKind(spec.Kind) != spec || slices.Contains(contract.OwnKinds, spec.Kind) {
				t.Errorf("kind %q: not this action's own (apply's summary, the index on re-apply and check would take it for another's)", spec.Kind)
			}
			if spec.Applied == nil || spec.Taken == nil || spec.KeepOnReapply == nil || spec.Redo == nil || spec.Target == nil {
				t.Fatalf("Actions[%s]: a column is unset: Applied %v, Taken %v, KeepOnReapply %v, Redo %v, Target %v",
					a, spec.Applied != nil, spec.Taken != nil, spec.KeepOnReapply != nil, spec.Redo != nil, spec.Target != nil)
			}
			if spec.Dirs != w.dirs || (spec.Dirs && spec.Moves) {
				t.Errorf("Actions[%s]: takes directories %v, want %v (only an action that does not move can)", a, spec.Dirs, w.dirs)
			}
			if spec.Kind != w.kind || spec.Exportable != w.exportable || spec.LocksContent != w.locksContent {
				t.Errorf("Actions[%s] = %+v, want kind %s, exportable %v, locks content %v", a, *spec, w.kind, w.exportable, w.locksContent)
			}
			if spec.InPlace != (w.dest == src) {
				t.Errorf("Actions[%s]: in place %v, want a destination %q", a, spec.InPlace, w.dest)
			}
			if spec.Moves != (w.dest != "") || spec.Moves != (spec.place != nil) {
				t.Errorf("Actions[%s]: moves %v, writer set %v, want a destination %q", a, spec.Moves, spec.place != nil, w.dest)
			}

			dir := t.TempDir()
			yaml := "package: p\nrules:\n  - name: r\n    match: [\"" + src + "\"]\n    reason: test\n    " + w.fields + "\n"
			if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			set, err := rules.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			srcType := archive.TypeRegular
			if w.link != "" {
				srcType = archive.TypeSymlink
			}
			dec, err := NewDecider(set, nil, nil).Decide(&archive.Entry{Name: src, Type: srcType, Linkname: w.link})
			if err != nil {
				t.Fatal(err)
			}
			if dec.Spec != spec || dec.Rule == nil || dec.Rule.Action != a {
				t.Fatalf("decision %+v, want rule r with Actions[%s]", dec, a)
			}
			if f := findingFor(dec.Verdict, nil); f.Target != w.target || f.Action != a.String() {
				t.Errorf("audit: finding %+v, want action %s, target %q", f, a, w.target)
			}

			// The manifest's To: the destination, or a symlink's new
			// target; none for a file changed where it is.
			changeTo := w.dest
			if w.link != "" {
				changeTo = strings.TrimPrefix(w.want, "-> ")
			}
			if spec.Judge != nil {
				changeTo = ""
			}
			content := cmp.Or(w.content, "hello")
			mt := time.Unix(1700000000, 0).UTC()
			entries := []*archive.Entry{
				{Name: ".", Type: archive.TypeDir, Mode: 0o755, Nlink: 3, ModTime: mt},
				{Name: "etc", Type: archive.TypeDir, Mode: 0o755, Nlink: 3, ModTime: mt},
				{Name: "etc/x", Type: archive.TypeDir, Mode: 0o755, Nlink: 2, ModTime: mt},
				{Name: src, Type: archive.TypeRegular, Mode: 0o644, Nlink: 1, ModTime: mt, Size: int64(len(content))},
			}
			if w.link != "" {
				entries[3] = &archive.Entry{Name: src, Type: archive.TypeSymlink, Linkname: w.link, Mode: 0o777, Nlink: 1, ModTime: mt}
			}
			out, rep := applyData(t, set, entries, content)
			got := map[string]string{}
			eachCpioEntry(t, out.Bytes(), func(e *archive.Entry, r io.Reader) {
				b, _ := io.ReadAll(r)
				got[e.Name] = string(b)
				if e.Type == archive.TypeSymlink {
					got[e.Name] = "-> " + e.Linkname
				}
			})
			checkTaken(t, "stream", rep, got, src, w.dest, w.want, changeTo, w.kind)
			checkReapplied(t, set, spec, out.Bytes(), src)

			root := filepath.Join(t.TempDir(), "root")
			for _, e := range entries[1:] {
				p := filepath.Join(root, e.Name)
				if e.Type == archive.TypeDir {
					os.MkdirAll(p, 0o755)
				} else if e.Type == archive.TypeSymlink {
					if err := os.Symlink(e.Linkname, p); err != nil {
						t.Fatal(err)
					}
				} else if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep, err = ApplyDir(context.Background(), root, Options{Set: set, Owners: owners.New(), Epoch: &mt}, false)
			if err != nil {
				t.Fatal(err)
			}
			got = map[string]string{}
			filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
				rel, _ := filepath.Rel(root, p)
				switch {
				case err == nil && fi.Mode().IsRegular():
					b, _ := os.ReadFile(p)
					got[rel] = string(b)
				case err == nil && fi.Mode()&os.ModeSymlink != 0:
					l, _ := os.Readlink(p)
					got[rel] = "-> " + l
				}
				return nil
			})
			checkTaken(t, "tree", rep, got, src, w.dest, w.want, changeTo, w.kind)
		})
	}
}

// checkTaken: src left its place (unless the action writes it in place),
// reached dest holding want when there is one, and the manifest and the
// index record it with kind.
func checkTaken(t *testing.T, how string, rep *Report, files map[string]string, src, dest, want, changeTo string, kind contract.Kind) {
	t.Helper()
	if _, ok := files[src]; ok && src != dest {
		t.Errorf("%s: %s is still in place", how, src)
	}
	if dest != "" && files[dest] != want {
		t.Errorf("%s: %s = %q, want %q", how, dest, files[dest], want)
	}
	found := false
	for _, c := range rep.Changes {
		found = found || (c.Path == src && c.Kind == kind && c.To == changeTo)
	}
	if !found {
		t.Errorf("%s: no %s change for %s -> %q in %+v", how, kind, src, changeTo, rep.Changes)
	}
	ix, err := contract.DecodeIndex(bytes.NewReader([]byte(files[contract.IndexPath])))
	if err != nil {
		t.Fatalf("%s: index: %v", how, err)
	}
	found = false
	for _, f := range ix.Files {
		found = found || (f.Kind == kind && f.Name == "r")
	}
	if !found {
		t.Errorf("%s: the index records no %s file of rule r: %+v", how, kind, ix.Files)
	}
}

// checkReapplied applies set again to applied, an applied image, and wants
// the same bytes back (Applied, KeepOnReapply); the index records what the
// action took away from src (Taken), and a link to src dangles exactly
// when it did.
func checkReapplied(t *testing.T, set *rules.Set, spec *ActionSpec, applied []byte, src string) {
	t.Helper()
	var again bytes.Buffer
	ow := archive.NewCpioWriter(&again, archive.Newc)
	if _, err := ApplyStream(ow, archive.KindCpio, archive.NewCpioReader(bytes.NewReader(applied)), Options{Set: set, Owners: owners.New()}, nil); err != nil {
		t.Fatalf("re-apply: %v", err)
	}
	ow.Close()
	if !bytes.Equal(again.Bytes(), applied) {
		t.Errorf("re-apply to the applied image changed it")
	}
	d := NewDecider(set, nil, map[string]bool{contract.IndexPath: true})
	eachCpioEntry(t, applied, func(e *archive.Entry, r io.Reader) {
		dec, err := d.Decide(e)
		if err != nil {
			t.Fatal(err)
		}
		if dec.Own {
			if _, err := d.takeOwn(dec.Path, r); err != nil {
				t.Fatal(err)
			}
		} else if dec.Spec != nil && dec.Spec.Judge == nil {
			// (An action that judges the content decides on the
			// path, and finds nothing to change: same bytes above.)
			t.Errorf("re-apply: %s decided again as %s", dec.Path, dec.Spec.Action)
		}
	})
	if _, err := d.Decide(&archive.Entry{Name: "etc/link", Type: archive.TypeSymlink, Linkname: "/" + src}); err != nil {
		t.Fatal(err)
	}
	dangles := len(d.Dangling()) == 1
	if want := !spec.InPlace; dangles != want {
		t.Errorf("a link to %s dangles in the applied image: %v, want %v (Taken)", src, dangles, want)
	}
}

// eachCpioEntry calls fn with each entry of the cpio archive data and a
// reader of its data.
func eachCpioEntry(t *testing.T, data []byte, fn func(e *archive.Entry, r io.Reader)) {
	t.Helper()
	r := archive.NewCpioReader(bytes.NewReader(data))
	for {
		e, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(e, r)
	}
}
