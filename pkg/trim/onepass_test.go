package trim

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// auditTwoPass is how audit read an input whose owners come from its own
// dpkg database before it had one pass: owners.Load read the archive through
// for the database, then Audit read it again.
func auditTwoPass(t *testing.T, paths ...string) (string, error) {
	t.Helper()
	set := shippedRules(t)
	var inputs []AuditInput
	var notes []string
	for _, p := range paths {
		db, err := owners.Load(p, container.OpenOptions{})
		if err != nil {
			return "", err
		}
		table := owners.New()
		if db != nil {
			table = db.Owners
			notes = append(notes, db.Describe(p))
		}
		inputs = append(inputs, AuditInput{Path: p, Source: container.SourceOf(p, container.OpenOptions{}), Owners: table})
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
	var first *owners.DB
	if onePass {
		opt.Dpkg = p
	} else {
		var err error
		if first, err = owners.Load(p, container.OpenOptions{}); err != nil {
			return nil, "", err
		}
		opt.Owners = owners.New()
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

// writeFiles writes files (path: content) beneath dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// lateRules: tool's rule strips etc/tool/tool.conf, which only tool's
// package may ship; any CNI configuration is forbidden, and pkgx's rule
// strips pkgx's.
const lateRules = `-- policy.yaml --
policy:
  - name: cni-configs
    forbid: ["etc/cni/net.d/**"]
    reason: kubelet takes the first
-- tool.yaml --
package: tool
rules:
  - name: tool-conf
    match: ["etc/tool/tool.conf"]
    action: strip
    must_match: false
    reason: tool's own
-- x.yaml --
package: pkgx
rules:
  - name: pkgx-cni
    match: ["etc/cni/net.d/10-x.conflist"]
    action: strip
    reason: pkgx's default network
`

func loadLateRules(t *testing.T) *rules.Set {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	for _, part := range strings.Split(lateRules, "-- ")[1:] {
		name, content, _ := strings.Cut(part, " --\n")
		files[name] = content
	}
	writeFiles(t, dir, files)
	set, err := rules.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// writeTar writes a tar of files, in the order given (name, content; a
// name ending in / is a directory), at p.
func writeTar(t *testing.T, p string, files ...string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i < len(files); i += 2 {
		h := &tar.Header{Name: files[i], Mode: 0o644, Size: int64(len(files[i+1])), Typeflag: tar.TypeReg}
		if strings.HasSuffix(files[i], "/") {
			h.Mode, h.Size, h.Typeflag = 0o755, 0, tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// applyLater applies set to the tar at p with its own owners, as the CLI
// does (ApplyOwnersLater), and says how many times it read the owners
// first (a second run, or its attempt).
func applyLater(t *testing.T, set *rules.Set, p string) (*Report, int, error) {
	t.Helper()
	loads := 0
	load := func() (*owners.DB, error) {
		loads++
		return owners.Load(p, container.OpenOptions{})
	}
	rep, err := ApplyOwnersLater(Options{Set: set, Input: archive.KindTar, Dpkg: p}, load, func(opt Options) (*Report, error) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return ApplyStream(archive.NewTarWriter(io.Discard, tar.FormatPAX), archive.KindTar, archive.NewTarReader(f), opt, nil)
	})
	return rep, loads, err
}

// TestOwnersArriveLater: whether the dpkg database or an owners list
// comes before the entries it is about or after them in a tar, audit and
// apply (each through owners.Later) name the same owner for each file:
// pkgx's CNI configuration is stripped by pkgx's rule, tool.conf, which package
// other shipped, is kept.
func TestOwnersArriveLater(t *testing.T) {
	set := loadLateRules(t)
	entries := []string{"etc/", "", "etc/cni/", "", "etc/cni/net.d/", "", "etc/cni/net.d/10-x.conflist", "{}\n",
		"etc/tool/", "", "etc/tool/tool.conf", "conf\n"}
	lists := map[string][]string{
		"dpkg": {"var/", "", "var/lib/", "", "var/lib/dpkg/", "", "var/lib/dpkg/info/", "",
			"var/lib/dpkg/info/pkgx.list", "/.\n/etc/cni/net.d/10-x.conflist\n", "var/lib/dpkg/info/other.list", "/.\n/etc/tool/tool.conf\n"},
		"owners list": {"usr/", "", "usr/local/", "", "usr/local/share/", "", "usr/local/share/rootfs-trim/", "", "usr/local/share/rootfs-trim/owners/", "",
			"usr/local/share/rootfs-trim/owners/pkgx.list", "/etc/cni/net.d/10-x.conflist\n", "usr/local/share/rootfs-trim/owners/other.list", "/etc/tool/tool.conf\n"},
	}
	want := map[string]string{"etc/cni/net.d/10-x.conflist": "pkgx"}
	dir := t.TempDir()
	for kind, list := range lists {
		for _, order := range []string{"before", "after"} {
			t.Run(kind+" "+order, func(t *testing.T) {
				files := append(slices.Clone(list), entries...)
				if order == "after" {
					files = append(slices.Clone(entries), list...)
				}
				p := filepath.Join(dir, strings.ReplaceAll(kind+"-"+order, " ", "-")+".tar")
				writeTar(t, p, files...)

				res, err := Audit(set, []AuditInput{{Path: p, Source: container.SourceOf(p, container.OpenOptions{}), Dpkg: true}}, nil, container.OpenOptions{})
				if err != nil {
					t.Fatal(err)
				}
				audited := map[string]string{}
				for _, f := range res.Findings {
					audited[f.Path] = f.Package
				}
				if diff := cmp.Diff(want, audited); diff != "" {
					t.Errorf("audit (-want +got):\n%s", diff)
				}

				rep, _, err := applyLater(t, set, p)
				if err != nil {
					t.Fatal(err)
				}
				applied := map[string]string{}
				for _, c := range rep.Changes {
					if strings.HasPrefix(c.Path, "etc/") { // not what apply adds
						applied[c.Path] = c.Package
					}
				}
				if diff := cmp.Diff(want, applied); diff != "" {
					t.Errorf("apply (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestApplyOwnersLaterRetries: ApplyOwnersLater applies again, the owners
// read first, only where an owner read late decides an entry (tool.conf:
// tool's rule would strip it, but the database, at the end, says package
// other installed it) or there are more entries than it holds; a corrupt
// input fails in the one run, with its own error.
func TestApplyOwnersLaterRetries(t *testing.T) {
	set := loadLateRules(t)
	dir := t.TempDir()
	late := filepath.Join(dir, "late.tar")
	writeTar(t, late, "etc/", "", "etc/tool/", "", "etc/tool/tool.conf", "conf\n", "usr/", "", "usr/bin/", "", "usr/bin/tool", "#!/bin/sh\n",
		"var/", "", "var/lib/", "", "var/lib/dpkg/", "", "var/lib/dpkg/info/", "",
		"var/lib/dpkg/info/other.list", "/.\n/etc/tool/tool.conf\n", "var/lib/dpkg/info/tool.list", "/.\n/usr/bin/tool\n")
	data, err := os.ReadFile(late)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.tar")
	if err := os.WriteFile(cut, data[:len(data)-1536], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		in      string
		loads   int
		wantErr string
	}{
		{name: "an owner read late decides", in: late, loads: 1},
		{name: "a corrupt input", in: cut, loads: 0, wantErr: "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, loads, err := applyLater(t, set, tc.in)
			if loads != tc.loads {
				t.Errorf("owners read first %d times, want %d", loads, tc.loads)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, ErrOwnersLate) {
					t.Fatalf("error %v, want one with %q, not ErrOwnersLate", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range rep.Changes {
				if c.Path == "etc/tool/tool.conf" {
					t.Errorf("%s %s, want it kept (package other has no rule)", c.Kind, c.Path)
				}
			}
			if rep.Dpkg == nil || len(rep.Dpkg.Packages) != 2 {
				t.Errorf("database %+v, want the input's (2 packages)", rep.Dpkg)
			}
		})
	}
}

// TestApplyTooManyToHold: past the entries it holds, a one-pass apply
// fails with ErrOwnersLate, for ApplyOwnersLater to read the owners first.
func TestApplyTooManyToHold(t *testing.T) {
	var in bytes.Buffer
	w := archive.NewCpioWriter(&in, archive.Newc)
	for i := range maxSeen + 1 {
		if err := w.WriteHeader(&archive.Entry{Name: fmt.Sprintf("f%06d", i), Type: archive.TypeRegular, Mode: 0o644, Inode: uint64(i + 1), Nlink: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := ApplyStream(archive.NewCpioWriter(io.Discard, archive.Newc), archive.KindCpio, archive.NewCpioReader(&in),
		Options{Set: loadLateRules(t), Input: archive.KindCpio, Dpkg: "in.cpio"}, nil)
	if !errors.Is(err, ErrOwnersLate) || !errors.Is(err, owners.ErrTooMany) {
		t.Fatalf("%v, want ErrOwnersLate for owners.ErrTooMany", err)
	}
}
