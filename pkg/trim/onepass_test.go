package trim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// auditTwoPass is how audit read an input whose owners come from its own
// dpkg database before it had one pass: LoadDpkg read the archive through
// for the database, then Audit read it again.
func auditTwoPass(t *testing.T, paths ...string) (string, error) {
	t.Helper()
	set := shippedRules(t)
	var inputs []AuditInput
	var notes []string
	for _, p := range paths {
		db, err := LoadDpkg(p, container.OpenOptions{})
		if err != nil {
			return "", err
		}
		owners := NewOwners()
		if db != nil {
			owners = db.Owners
			notes = append(notes, db.Describe(p))
		}
		inputs = append(inputs, AuditInput{Path: p, Source: container.SourceOf(p, container.OpenOptions{}), Owners: owners})
	}
	res, err := Audit(set, inputs, nil, container.OpenOptions{})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%q\n%d entries\n%+v", notes, res.Entries, res.Findings), nil
}

func auditOnePass(t *testing.T, paths ...string) (string, error) {
	t.Helper()
	set := shippedRules(t)
	var inputs []AuditInput
	for _, p := range paths {
		inputs = append(inputs, AuditInput{Path: p, Source: container.SourceOf(p, container.OpenOptions{}), Dpkg: true})
	}
	res, err := Audit(set, inputs, nil, container.OpenOptions{})
	if err != nil {
		return "", err
	}
	if len(res.Databases) != len(paths) {
		t.Fatalf("%d databases for %d inputs", len(res.Databases), len(paths))
	}
	var notes []string
	for i, db := range res.Databases {
		if db != nil {
			notes = append(notes, db.Describe(paths[i]))
		}
	}
	return fmt.Sprintf("%q\n%d entries\n%+v", notes, res.Entries, res.Findings), nil
}

// dpkgFixtures archives the package fixtures that carry a dpkg database
// (and one without) as GNU cpio does, gzipped and truncated too.
func dpkgFixtures(t *testing.T) (dir string, names []string) {
	t.Helper()
	dir = t.TempDir()
	for _, fx := range []string{"cri-o-deb-v1.35.0", "cri-o-kubic-deb-v1.28.0", "cri-o-kubic-deb-v1.24.0", "podman-v5.8.2"} {
		root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "packages", "upstream", fx, "root"))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fx+".cpio")
		archivetest.RunIn(t, root, nil, "sh", "-c", "find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 > "+out)
		archivetest.RunIn(t, dir, nil, "gzip", "-9", "-n", "-k", fx+".cpio")
		gz, err := os.ReadFile(out + ".gz")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out+".cut.gz", gz[:len(gz)*2/3], 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, out, out+".gz", out+".cut.gz", root)
	}
	return dir, names
}

// TestAuditOnePass: an audit whose owners come from the input's own dpkg
// database reads the input once, and says what the two passes said,
// findings, notes and errors, for each fixture alone and for all at once.
func TestAuditOnePass(t *testing.T) {
	_, paths := dpkgFixtures(t)
	check := func(t *testing.T, paths ...string) {
		want, wantErr := auditTwoPass(t, paths...)
		got, gotErr := auditOnePass(t, paths...)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("error %v, want %v", gotErr, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("audit (-two passes +one):\n%s", diff)
		}
	}
	for _, p := range paths {
		t.Run(filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), func(t *testing.T) { check(t, p) })
	}
	t.Run("all", func(t *testing.T) { check(t, paths...) })
}

// TestAuditPipe: a pipe can be read only once, which two passes could not
// do ("not a regular file"); one pass audits it as it does the file.
func TestAuditPipe(t *testing.T) {
	dir, paths := dpkgFixtures(t)
	for _, p := range paths {
		if filepath.Ext(p) != ".gz" || filepath.Ext(p[:len(p)-3]) == ".cut" {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			fifo := filepath.Join(dir, "fifo")
			os.Remove(fifo)
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			go func() {
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				defer w.Close()
				data, _ := os.ReadFile(p)
				w.Write(data)
			}()
			set := shippedRules(t)
			res, err := Audit(set, []AuditInput{{Path: fifo, Source: container.SourceOf(fifo, container.OpenOptions{}), Dpkg: true}}, nil, container.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := Audit(set, []AuditInput{{Path: p, Source: container.SourceOf(p, container.OpenOptions{}), Dpkg: true}}, nil, container.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range want.Findings {
				if want.Findings[i].Input == p {
					want.Findings[i].Input = fifo
				}
			}
			if diff := cmp.Diff(summary(want), summary(res)); diff != "" {
				t.Errorf("audit of a pipe (-the file +the pipe):\n%s", diff)
			}
		})
	}
}

func summary(res *AuditResult) string {
	var dbs []string
	for _, db := range res.Databases {
		if db != nil {
			dbs = append(dbs, db.Describe("x"))
		}
	}
	return fmt.Sprintf("%q\n%d entries\n%+v", dbs, res.Entries, res.Findings)
}

// applyOwned applies the shipped rules to the cpio archive at p, with the
// owners of its dpkg database read first (the two passes) or as it goes by
// (Options.Dpkg), and returns the output and the report.
func applyOwned(t *testing.T, p string, onePass bool) ([]byte, string, error) {
	t.Helper()
	set := shippedRules(t)
	opt := Options{Set: set, Input: archive.KindCpio}
	var first *DpkgDB
	if onePass {
		opt.Dpkg = p
	} else {
		var err error
		if first, err = LoadDpkg(p, container.OpenOptions{}); err != nil {
			return nil, "", err
		}
		opt.Owners = NewOwners()
		if first != nil {
			opt.Owners = first.Owners
		}
	}
	in, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := archive.NewCpioWriter(&out, archive.Newc)
	rep, err := ApplyStream(w, archive.KindCpio, archive.NewCpioReader(bytes.NewReader(in)), opt, nil)
	if err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var db string
	if rep.Dpkg != nil {
		first = rep.Dpkg
	}
	if first != nil {
		db = first.Describe("x")
	}
	rep.Dpkg = nil
	return out.Bytes(), fmt.Sprintf("%+v %q", *rep, db), nil
}

// TestApplyOnePass: an apply whose owners come from the input's dpkg
// database, read as the input goes by, writes the bytes and reports the
// changes (owners, rules) that reading the database first did.
func TestApplyOnePass(t *testing.T) {
	_, paths := dpkgFixtures(t)
	for _, p := range paths {
		if filepath.Ext(p) != ".cpio" {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			want, wantRep, err := applyOwned(t, p, false)
			if err != nil {
				t.Fatal(err)
			}
			got, gotRep, err := applyOwned(t, p, true)
			if err != nil {
				t.Fatalf("one pass: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the output differs from the two passes' (%d bytes, want %d)", len(got), len(want))
			}
			if diff := cmp.Diff(wantRep, gotRep); diff != "" {
				t.Errorf("report (-two passes +one):\n%s", diff)
			}
		})
	}
}

// TestApplyOwnerDecidesLate: where an owner the stream brings after an
// entry would have it kept rather than stripped, the one pass fails with
// ErrOwnersDecide (the CLI then reads the database first) and writes
// nothing in place of what two passes write.
func TestApplyOwnerDecidesLate(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"rules/policy.yaml":                 "policy:\n  - name: cni-configs\n    forbid: [\"etc/cni/net.d/**\"]\n    reason: kubelet takes the first\n",
		"rules/tool.yaml":                   "package: tool\nrules:\n  - name: tool-conf\n    match: [\"etc/tool/tool.conf\"]\n    action: strip\n    must_match: false\n    reason: tool's own\n",
		"t/etc/tool/tool.conf":              "conf\n",
		"t/var/lib/dpkg/info/other.list":    "/.\n/etc/tool/tool.conf\n",
		"t/var/lib/dpkg/info/tool.list":     "/.\n/usr/bin/tool\n",
		"t/usr/bin/tool":                    "#!/bin/sh\n",
		"t/etc/cni/net.d/87-other.conflist": "{}\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(dir, "t/etc/cni/net.d/87-other.conflist"))
	in := filepath.Join(dir, "late.cpio")
	archivetest.RunIn(t, filepath.Join(dir, "t"), nil, "sh", "-c", "find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 > "+in)
	set, err := rules.Load(filepath.Join(dir, "rules"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err = ApplyStream(archive.NewCpioWriter(&out, archive.Newc), archive.KindCpio, archive.NewCpioReader(bytes.NewReader(data)),
		Options{Set: set, Input: archive.KindCpio, Dpkg: in}, nil)
	if !errors.Is(err, ErrOwnersDecide) {
		t.Fatalf("one pass: %v, want ErrOwnersDecide", err)
	}
	db, err := LoadDpkg(in, container.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	rep, err := ApplyStream(archive.NewCpioWriter(&out, archive.Newc), archive.KindCpio, archive.NewCpioReader(bytes.NewReader(data)),
		Options{Set: set, Input: archive.KindCpio, Owners: db.Owners}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Changes {
		if c.Path == "etc/tool/tool.conf" {
			t.Errorf("two passes: %s %s, want it kept (package other has no rule)", c.Kind, c.Path)
		}
	}
}
