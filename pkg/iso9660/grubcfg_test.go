package iso9660

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// grubTestSource is an image of the given files (path: content), labelled
// EFIBOOTISO, with a memdisk when memdisk is not nil.
func grubTestSource(files, memdisk map[string]string) grubSource {
	src := grubSource{image: map[string]File{}, labels: []string{"EFIBOOTISO"}, where: "/efiboot.img:/EFI/BOOT/BOOTX64.EFI"}
	content := map[string][]byte{}
	for p, c := range files {
		src.image[p] = File{Path: p, Mode: 0o644}
		content[p] = []byte(c)
	}
	src.read = func(f File) ([]byte, error) { return content[f.Path], nil }
	if memdisk != nil {
		src.memdisk = map[string][]byte{}
		for p, c := range memdisk {
			src.memdisk[p] = []byte(c)
		}
	}
	return src
}

const grubStub = "search --no-floppy --label EFIBOOTISO --set root\n"

// grubConfigCases are TestGrubConfig's: a grub.cfg, the image's other
// files, and the lines it runs or the error refusing it.
var grubConfigCases = []struct {
	name  string
	cfg   string
	files map[string]string
	want  []string // "where: files", kernels marked "kernel"
	err   string
}{
	{name: "minikube", cfg: "set default=\"0\"\nset timeout=\"0\"\n\nmenuentry \"Buildroot\" {\n  # c\n  linux /boot/bzimage console=tty0\n  initrd /boot/initrd # rootfs\n}\n",
		want: []string{"g:6: kernel /boot/bzimage", "g:7: /boot/initrd"}},
	{name: "hash-in-word", cfg: "initrd /boot/a#b\n", want: []string{"g:1: /boot/a#b"}},
	{name: "quotes", cfg: "initrd '/boot/x y' \"/boot/z\"\n", want: []string{"g:1: /boot/x y /boot/z"}},
	{name: "root-and-clean", cfg: grubStub + "initrd ($root)/boot//x/../initrd\n", want: []string{"g:2: /boot/initrd"}},
	{name: "configfile", cfg: grubStub + "configfile /boot/grub/real.conf\n", files: map[string]string{"/boot/grub/real.conf": "menuentry a {\n initrd /boot/evil\n}\n"},
		want: []string{"/boot/grub/real.conf:2: /boot/evil"}},
	{name: "source", cfg: "source ($root)/s.cfg\ninitrd /boot/initrd\n", files: map[string]string{"/s.cfg": "insmod iso9660\ninitrd /boot/other\n"},
		want: []string{"/s.cfg:2: /boot/other", "g:2: /boot/initrd"}},
	{name: "entries-after-config", cfg: "menuentry a {\n initrd /boot/one\n}\ninitrd /boot/two\n", want: []string{"g:4: /boot/two", "g:2: /boot/one"}},
	{name: "configfile-relative", cfg: "configfile boot/grub/real.conf\n", err: "g:1: boot/grub/real.conf: not an absolute path"},
	{name: "configfile-missing", cfg: "configfile /nothing.cfg\n", err: "g:1: configfile /nothing.cfg: no such file"},
	{name: "source-fan-out", cfg: "source /a.cfg\n", files: map[string]string{"/a.cfg": strings.Repeat("source /b.cfg\n", 300), "/b.cfg": strings.Repeat("source /c.cfg\n", 300), "/c.cfg": "insmod fat\n"},
		err: "more than 65536 commands run"},
	{name: "configfile-loop", cfg: "configfile /a.cfg\n", files: map[string]string{"/a.cfg": "source /a.cfg\n"}, err: "/a.cfg: read again while it runs"},
	{name: "variable", cfg: "set rd=/boot/evil\ninitrd $rd\n", err: "g:2: '$' in a word"},
	{name: "set-other", cfg: "set rd=/boot/evil\n", err: "g:1: set rd: only default"},
	{name: "root-elsewhere", cfg: "linux /k root=($root)\n", err: "g:1: root=($root): ($root) where"},
	{name: "variable-use", cfg: "initrd /boot/$rd\n", err: "g:1: '$' in a word"},
	{name: "variable-braces", cfg: "initrd ${root}/boot/initrd\n", err: "g:1: '$' in a word"},
	{name: "variable-in-quotes", cfg: "initrd \"$rd\"\n", err: "a variable or an escape inside quotes"},
	{name: "escape", cfg: "initrd /boot/ini\\trd\n", err: "g:1: '\\\\' in a word"},
	{name: "unclosed", cfg: "menuentry 'a {\n", err: "g:1: unclosed ' quote"},
	{name: "loopback", cfg: "loopback loop /boot/x.iso\ninitrd (loop)/boot/initrd\n", err: "g:1: GRUB command \"loopback\""},
	{name: "other-device", cfg: "initrd (hd0,1)/boot/initrd\n", err: "g:1: (hd0,1)/boot/initrd: a device other than the image's"},
	{name: "memdisk-initrd", cfg: "initrd (memdisk)/boot/initrd\n", err: "is in GRUB's memdisk, not on the image"},
	{name: "newc", cfg: "initrd /boot/initrd newc:init:/boot/evil-init\n", err: "g:1: initrd newc:init:/boot/evil-init: GRUB's newc:NAME:FILE"},
	{name: "search-other-label", cfg: "search --label OTHER --set root\n", err: "g:1: search --label \"OTHER\": the image's label is \"EFIBOOTISO\""},
	{name: "search-file", cfg: "search --file /boot/initrd --set root\n", err: "g:1: search --file: option not followed"},
	{name: "search-set-other", cfg: "search --label EFIBOOTISO --set=x\n", err: "g:1: search --set=x: option not followed"},
	{name: "insmod", cfg: "insmod regexp\n", err: "g:1: insmod regexp: only filesystem"},
	{name: "if", cfg: "if true; then\n", err: "g:1: ';' in a word"},
	{name: "assignment", cfg: "prefix=(memdisk)/x\n", err: "g:1: GRUB command \"prefix=(memdisk)/x\""},
	{name: "glob", cfg: "initrd /boot/*\n", err: "g:1: '*' in a word"},
	{name: "nested", cfg: "menuentry a {\nmenuentry b {\n}\n}\n", err: "g:2: a menu entry inside a menu entry"},
	{name: "brace-in-word", cfg: "menuentry a {x\n", err: "g:1: '{' inside a word"},
	{name: "brace-args", cfg: "linux /k {\n", err: "g:1: \"{\" where GRUB would read a block"},
	{name: "unclosed-entry", cfg: "menuentry a {\n initrd /boot/initrd\n", err: "g:1: menuentry without its \"}\""},
	{name: "control", cfg: "initrd /boot/initrd\r\n", err: "g:1: control character"},
	{name: "submenu", cfg: "submenu a {\n}\n", err: "g:1: \"{\" where GRUB would read a block"},
}

// TestGrubConfig: what is followed of a grub.cfg read from the image's
// root, and what is refused with its file and line.
func TestGrubConfig(t *testing.T) {
	for _, tc := range grubConfigCases {
		t.Run(tc.name, func(t *testing.T) {
			r := &grubRun{src: grubTestSource(tc.files, nil)}
			st := grubState{root: devImage}
			err := r.runText("g", []byte(tc.cfg), false, &st, nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, showLines(r.lines)); d != "" {
				t.Errorf("lines (-want +got):\n%s", d)
			}
		})
	}
}

func showLines(lines []cfgLine) []string {
	var out []string
	for _, l := range lines {
		s := l.where + ": " + strings.Join(l.files, " ")
		if l.kernel {
			s = l.where + ": kernel " + l.files[0]
		}
		out = append(out, s)
	}
	return out
}

// TestGrubProgram: a GRUB program's start, as grub_main makes it: the
// prefix's device and root, the embedded configuration run by the
// rescue parser, then $prefix/grub.cfg.
func TestGrubProgram(t *testing.T) {
	const stub = "insmod iso9660\nsearch --no-floppy --label EFIBOOTISO --set root\n# used to find the cd\n"
	cfg := "menuentry a {\n linux /boot/bzimage\n initrd /boot/initrd # rootfs\n}\n"
	for _, tc := range []struct {
		name    string
		g       GrubImage
		files   map[string]string
		memdisk map[string]string
		want    []string
		err     string
	}{
		{name: "minikube-aarch64", g: GrubImage{HasPrefix: true, Prefix: "/EFI/BOOT", Config: []byte(stub)},
			files: map[string]string{"/EFI/BOOT/grub.cfg": cfg}, want: []string{"/EFI/BOOT/grub.cfg:2: kernel /boot/bzimage", "/EFI/BOOT/grub.cfg:3: /boot/initrd"}},
		{name: "no-prefix", g: GrubImage{Config: []byte(stub)},
			files: map[string]string{"/EFI/BOOT/grub.cfg": cfg}, want: []string{"/EFI/BOOT/grub.cfg:2: kernel /boot/bzimage", "/EFI/BOOT/grub.cfg:3: /boot/initrd"}},
		{name: "embedded-boots", g: GrubImage{HasPrefix: true, Prefix: "/EFI/BOOT", Config: []byte(stub + "linux ($root)/boot/bzimage\ninitrd ($root)/boot/x/evil.gz\n")},
			files: map[string]string{"/EFI/BOOT/grub.cfg": cfg},
			want: []string{"/efiboot.img:/EFI/BOOT/BOOTX64.EFI:(embedded configuration):4: kernel /boot/bzimage", "/efiboot.img:/EFI/BOOT/BOOTX64.EFI:(embedded configuration):5: /boot/x/evil.gz",
				"/EFI/BOOT/grub.cfg:2: kernel /boot/bzimage", "/EFI/BOOT/grub.cfg:3: /boot/initrd"}},
		{name: "standalone", g: GrubImage{HasPrefix: true, Prefix: "(memdisk)/boot/grub"},
			memdisk: map[string]string{"/boot/grub/grub.cfg": "search --no-floppy --label EFIBOOTISO --set root\nset prefix=($root)/EFI/BOOT\nconfigfile ($root)/EFI/BOOT/grub.cfg\n"},
			files:   map[string]string{"/EFI/BOOT/grub.cfg": cfg}, want: []string{"/EFI/BOOT/grub.cfg:2: kernel /boot/bzimage", "/EFI/BOOT/grub.cfg:3: /boot/initrd"}},
		{name: "standalone-root-is-memdisk", g: GrubImage{HasPrefix: true, Prefix: "(memdisk)/boot/grub"},
			memdisk: map[string]string{"/boot/grub/grub.cfg": "initrd /boot/initrd\n"},
			err:     "/efiboot.img:/EFI/BOOT/BOOTX64.EFI:(memdisk)/boot/grub/grub.cfg:1: /boot/initrd is in GRUB's memdisk"},
		{name: "configfile-keeps-root", g: GrubImage{HasPrefix: true, Prefix: "(memdisk)/boot/grub"},
			memdisk: map[string]string{"/boot/grub/grub.cfg": "configfile (memdisk)/boot/grub/x.cfg\ninitrd /boot/initrd\n", "/boot/grub/x.cfg": "search --label EFIBOOTISO --set=root\n"},
			err:     "(memdisk)/boot/grub/grub.cfg:2: /boot/initrd is in GRUB's memdisk"},
		{name: "embedded-comment-after", g: GrubImage{HasPrefix: true, Prefix: "/EFI/BOOT", Config: []byte("search --label EFIBOOTISO --set root # x\n")},
			err: "(embedded configuration):1: \"#\" after a command"},
		{name: "embedded-menuentry", g: GrubImage{HasPrefix: true, Prefix: "/EFI/BOOT", Config: []byte("menuentry a {\n")},
			err: "(embedded configuration):1: '{' in an embedded configuration"},
		{name: "embedded-set-prefix", g: GrubImage{HasPrefix: true, Prefix: "/EFI/BOOT", Config: []byte("set prefix=($root)/other\n")},
			files: map[string]string{"/EFI/BOOT/grub.cfg": cfg, "/other/grub.cfg": "initrd /boot/other\n"}, want: []string{"/other/grub.cfg:1: /boot/other"}},
		{name: "prefix-device", g: GrubImage{HasPrefix: true, Prefix: "(hd0,gpt2)/boot/grub"}, err: "GRUB prefix \"(hd0,gpt2)/boot/grub\": a device other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := grubTestSource(tc.files, tc.memdisk)
			tc.g.Memdisk = src.memdisk
			r, err := runGrubProgram(src, &tc.g, "/EFI/BOOT/BOOTX64.EFI")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, showLines(r.lines)); d != "" {
				t.Errorf("lines (-want +got):\n%s", d)
			}
		})
	}
}

// TestGrubScriptCheck: GRUB's own parser, grub-script-check, as the
// oracle of syntax: every configuration followed is one GRUB reads.
func TestGrubScriptCheck(t *testing.T) {
	archivetest.RequireTool(t, "grub-script-check")
	dir := t.TempDir()
	for _, tc := range grubConfigCases {
		if tc.err != "" {
			continue
		}
		p := filepath.Join(dir, tc.name+".cfg")
		if err := os.WriteFile(p, []byte(tc.cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("grub-script-check", p)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: grub-script-check: %v\n%s", tc.name, err, b)
		}
	}
}
