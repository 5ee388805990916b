package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRecord plants a record as an attacker, or a stale image, would.
func plantRecord(t *testing.T, root string, files ...RecordFile) {
	t.Helper()
	data, err := json.Marshal(Record{Version: 1, Runtime: "crio", CNI: "kindnet", Files: files})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, RecordPath)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// #12 defect 4: the record is not trusted. render takes back only a file
// it could have written (a render destination in the index), whose content
// is still what it recorded, reached without following any symlink.
func TestRecordNotTrusted(t *testing.T) {
	hostname := []byte("node\n")
	busybox := []byte("busybox binary\n")
	tests := []struct {
		name    string
		prepare func(root string) []RecordFile
		keep    []string // files that must survive, relative to root
	}{
		{"a file render never writes, hash matching", func(root string) []RecordFile {
			os.WriteFile(filepath.Join(root, "etc/hostname"), hostname, 0o644)
			return []RecordFile{{Path: "etc/hostname", SHA256: sumOf(hostname)}}
		}, []string{"etc/hostname"}},
		{"a file render never writes, any hash", func(root string) []RecordFile {
			os.WriteFile(filepath.Join(root, "etc/hostname"), hostname, 0o644)
			return []RecordFile{{Path: "etc/hostname", SHA256: strings.Repeat("0", 64)}}
		}, []string{"etc/hostname"}},
		{"through a symlinked parent", func(root string) []RecordFile {
			os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755)
			os.WriteFile(filepath.Join(root, "usr/bin/busybox"), busybox, 0o755)
			os.Symlink("../usr/bin", filepath.Join(root, "etc/lnk"))
			return []RecordFile{{Path: "etc/lnk/busybox", SHA256: sumOf(busybox)}}
		}, []string{"usr/bin/busybox"}},
		{"a render destination whose parent is a symlink", func(root string) []RecordFile {
			// etc/cni -> ../usr/lib/cni: etc/cni/net.d/1-k8s.conflist is a
			// destination, but not one render can have written there.
			conf := []byte(`{"name":"mine"}`)
			os.MkdirAll(filepath.Join(root, "usr/lib/cni/net.d"), 0o755)
			os.WriteFile(filepath.Join(root, "usr/lib/cni/net.d/1-k8s.conflist"), conf, 0o644)
			os.RemoveAll(filepath.Join(root, "etc/cni"))
			os.Symlink("../usr/lib/cni", filepath.Join(root, "etc/cni"))
			return []RecordFile{{Path: "etc/cni/net.d/1-k8s.conflist", SHA256: sumOf(conf)}}
		}, []string{"usr/lib/cni/net.d/1-k8s.conflist"}},
		{"a destination changed since render wrote it", func(root string) []RecordFile {
			os.WriteFile(filepath.Join(root, "etc/cni/net.d/1-k8s.conflist"), []byte(`{"name":"edited"}`), 0o644)
			return []RecordFile{{Path: "etc/cni/net.d/1-k8s.conflist", SHA256: sumOf([]byte(`{"name":"original"}`))}}
		}, []string{"etc/cni/net.d/1-k8s.conflist"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := appliedImage(t)
			plantRecord(t, root, tc.prepare(root)...)
			before := map[string]string{}
			for _, k := range tc.keep {
				b, err := os.ReadFile(filepath.Join(root, k))
				if err != nil {
					t.Fatal(err)
				}
				before[k] = string(b)
			}
			res, err := Render(Options{Root: root, Choice: choice("crio", "kindnet", "")})
			if err != nil {
				t.Logf("render: %v", err)
			}
			for _, k := range tc.keep {
				b, err := os.ReadFile(filepath.Join(root, k))
				if err != nil || string(b) != before[k] {
					t.Errorf("render took back /%s, which it cannot have written (%v)", k, err)
				}
			}
			if err == nil && len(res.Left) == 0 {
				t.Errorf("render did not report the recorded file it left: %+v", res)
			}
		})
	}
}

// #12 defect 5: values are validated for their kind before anything is
// written; nothing can inject into a JSON file.
func TestValuesValidated(t *testing.T) {
	for _, cidr := range []string{`10.0.0.0/8","x":"y`, `10.0.0.0/8"`, "10.0.0.0", "10.0.0.0/33", "not-a-cidr", " 10.0.0.0/8"} {
		t.Run(cidr, func(t *testing.T) {
			root := appliedImage(t)
			before := snapshot(t, root)
			_, err := Render(Options{Root: root, Choice: choice("crio", "bridge", cidr)})
			if err == nil || !strings.Contains(err.Error(), "pod CIDR") {
				t.Errorf("err = %v, want one about the pod CIDR", err)
			}
			if after := snapshot(t, root); after != before {
				t.Errorf("a refused render changed /etc")
			}
		})
	}
}

// #12 minor: a render killed mid-write leaves .X.rootfs-trim.tmp files;
// the next run removes them, and does not warn about them.
func TestStaleTempFilesCleaned(t *testing.T) {
	root := appliedImage(t)
	stale := []string{"etc/cni/net.d/.1-k8s.conflist.rootfs-trim.tmp", "etc/.crictl.yaml.rootfs-trim.tmp", "etc/rootfs-trim/.rendered.json.rootfs-trim.tmp"}
	for _, s := range stale {
		os.MkdirAll(filepath.Dir(filepath.Join(root, s)), 0o755)
		os.WriteFile(filepath.Join(root, s), []byte("half"), 0o600)
	}
	// kindnet: render writes no 1-k8s.conflist this time, so nothing
	// overwrites that temporary file by chance.
	res, err := Render(Options{Root: root, Choice: choice("crio", "kindnet", "")})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stale {
		if _, err := os.Lstat(filepath.Join(root, s)); err == nil {
			t.Errorf("/%s is still there", s)
		}
	}
	for _, f := range res.Foreign {
		if strings.Contains(f.Path, ".rootfs-trim.tmp") {
			t.Errorf("render warns about its own temporary file /%s", f.Path)
		}
	}
}

// A template whose output for a .conf, .conflist or .json destination is
// not JSON is refused, and nothing is written.
func TestTemplateJSONChecked(t *testing.T) {
	rulesDir := t.TempDir()
	copyDir(t, filepath.Join("..", "..", "rules"), rulesDir)
	os.WriteFile(filepath.Join(rulesDir, "templates/mtu.conflist.tmpl"), []byte(`{"name": "x", "mtu": {{ index .Values "MTU" }}}`+"\n"), 0o644)
	f, _ := os.OpenFile(filepath.Join(rulesDir, "templates.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("  - name: mtu\n    source: templates/mtu.conflist.tmpl\n    dest: etc/cni/net.d/50-mtu.conflist\n    cni: [bridge]\n    reason: test\n")
	f.Close()
	root := appliedImageFrom(t, rulesDir)
	before := snapshot(t, root)
	c := choice("crio", "bridge", "10.244.0.0/16")
	c.Values["MTU"] = "1450, 1" // a value of a valid kind; the output is still not JSON
	_, err := Render(Options{Root: root, Choice: c})
	if err == nil || !strings.Contains(err.Error(), "template mtu") || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("err = %v, want one saying template mtu is not valid JSON", err)
	}
	if after := snapshot(t, root); after != before {
		t.Errorf("a refused render changed /etc")
	}
	c.Values["MTU"] = "1450"
	if _, err := Render(Options{Root: root, Choice: c}); err != nil {
		t.Errorf("a good value: %v", err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestValidators(t *testing.T) {
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"cidr v4", validCIDR("10.244.0.0/16"), true},
		{"cidr v6", validCIDR("fd00:10:244::/56"), true},
		{"cidr injection", validCIDR(`10.0.0.0/8","x":"y`), false},
		{"cidr host bits", validCIDR("10.244.0.1/16"), false},
		{"cidr v6 host bits", validCIDR("fd00:10:244::1/56"), false},
		{"cidr host route", validCIDR("10.244.0.1/32"), false},
		{"cidr v4 smallest", validCIDR("10.244.0.0/30"), true},
		{"cidr leading zero", validCIDR("010.244.0.0/16"), false},
		{"socket", validSocket("/var/run/dockershim.sock"), true},
		{"socket relative", validSocket("run/x.sock"), false},
		{"socket dotdot", validSocket("/run/../x.sock"), false},
		{"socket quote", validSocket(`/run/x".sock`), false},
		{"socket newline", validSocket("/run/x\n.sock"), false},
		{"name", validName("MTU_1"), true},
		{"name digit first", validName("1MTU"), false},
		{"name dash", validName("M-TU"), false},
		{"value", validValue("MTU", "1450"), true},
		{"value quote", validValue("MTU", `1450, "x": "y`), false},
		{"value newline", validValue("MTU", "1\n2"), false},
		{"json ok", checkJSON("etc/cni/net.d/x.conflist", []byte(`{"a": 1}`+"\n")), true},
		{"json two values", checkJSON("etc/cni/net.d/x.conf", []byte(`{"a": 1} {}`)), false},
		{"json broken", checkJSON("etc/x.json", []byte(`{"a": 1,}`)), false},
		{"not json", checkJSON("etc/crictl.yaml", []byte(`{`)), true},
	}
	for _, tc := range tests {
		if (tc.err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.name, tc.err, tc.ok)
		}
	}
}
