package iso9660

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// maxConfig bounds a boot configuration read whole.
const maxConfig = 1 << 20

// configNames are the boot configurations looked for, anywhere in the
// image and in an EFI boot image: isolinux/syslinux (syslinux's
// core/fs/lib/searchconfig.c searches these names) and GRUB.
var configNames = []string{"isolinux.cfg", "syslinux.cfg", "grub.cfg"}

// Initrd is what one boot entry loads as its initramfs: one file, or
// several the bootloader concatenates (GRUB "initrd a b", syslinux
// "initrd=a,b").
type Initrd struct {
	Files []File
	// Where names the configuration line, "/isolinux/isolinux.cfg:4", or
	// inside an EFI image "/EFI/BOOT/efiboot.img:/EFI/BOOT/GRUB.CFG:3".
	Where string
}

// Paths are the initrd's files' paths in the image, in load order.
func (i Initrd) Paths() []string {
	var out []string
	for _, f := range i.Files {
		out = append(out, f.Path)
	}
	return out
}

// Boot is what the image's boot configurations say.
type Boot struct {
	// Configs are the configurations read, where each is.
	Configs []string
	// Initrds are the distinct initrds they name, in the order first met.
	Initrds []Initrd
	// Kernels are the kernels they name.
	Kernels []string
}

// ReadBoot finds the boot configurations and the initrds they name, each
// checked to be a file of the image: isolinux's, syslinux's and every
// grub.cfg, in the image's tree and in each El Torito image that is a FAT
// filesystem (whatever its platform id), and what each GRUB EFI program
// there runs (runGrubProgram). An image with no configuration, or whose
// configurations name no initrd, or one that is not in the image, is an
// error.
func (im *Image) ReadBoot() (*Boot, error) {
	files := map[string]File{}
	var cfgs []File
	err := im.Walk(func(f File) error {
		files[f.Path] = f
		if f.Mode.IsRegular() && matchName(path.Base(f.Path), configNames) {
			cfgs = append(cfgs, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	src := grubSource{image: files, read: func(f File) ([]byte, error) { return im.ReadFile(f, maxConfig) }, labels: im.grubLabels()}
	found := &bootFound{}
	for _, f := range cfgs {
		data, err := im.ReadFile(f, maxConfig)
		if err != nil {
			return nil, err
		}
		if err := found.read(configText{where: f.Path, dir: path.Dir(f.Path), data: data}, src); err != nil {
			return nil, err
		}
	}
	if err := im.efiConfigs(files, src, found); err != nil {
		return nil, err
	}
	if len(found.configs) == 0 {
		return nil, errors.New("no boot configuration (isolinux.cfg, syslinux.cfg or grub.cfg, in the image or in an EFI boot image)")
	}
	b, err := found.boot(files)
	if err != nil {
		return nil, err
	}
	// Every path named must be the same file to each bootloader's view.
	if err := im.checkViews(b); err != nil {
		return nil, err
	}
	return b, nil
}

// boot resolves the lines' files; each initrd's Where is the first line
// naming it.
func (found *bootFound) boot(files map[string]File) (*Boot, error) {
	b := &Boot{}
	for _, c := range found.configs {
		b.Configs = appendNew(b.Configs, c)
	}
	seen := map[string]bool{}
	for _, l := range found.lines {
		if l.kernel {
			b.Kernels = appendNew(b.Kernels, l.files[0])
			continue
		}
		ird := Initrd{Where: l.where}
		for _, p := range l.files {
			f, ok := files[p]
			if !ok || !f.Mode.IsRegular() {
				return nil, fmt.Errorf("%s: initrd %s: no such file in the image", names.Quote(ird.Where), names.Quote(p))
			}
			ird.Files = append(ird.Files, f)
		}
		key := strings.Join(ird.Paths(), "\x00")
		if !seen[key] {
			seen[key] = true
			b.Initrds = append(b.Initrds, ird)
		}
	}
	if len(b.Initrds) == 0 {
		return nil, fmt.Errorf("%s: no initrd named", names.Quote(strings.Join(b.Configs, ", ")))
	}
	return b, nil
}

// grubLabels are the labels GRUB's iso9660 driver may give the image
// (grub_iso9660_label: the Joliet volume name where there is one, else
// the primary's): a search must name all of them.
func (im *Image) grubLabels() []string {
	if im.HasJoliet {
		return []string{im.VolumeID, im.JolietVolumeID}
	}
	return []string{im.VolumeID}
}

// read adds one configuration found by its name: a syslinux one as
// syslinux reads it, a grub.cfg followed from the image's root.
func (found *bootFound) read(t configText, src grubSource) error {
	found.configs = append(found.configs, t.where)
	if !strings.EqualFold(path.Base(t.where), "grub.cfg") {
		found.lines = append(found.lines, parseSyslinux(t)...)
		return nil
	}
	r := &grubRun{src: src}
	st := grubState{root: devImage}
	err := r.runText(t.where, t.data, false, &st, nil)
	found.lines = append(found.lines, r.lines...)
	return err
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// maxEFIProgram bounds an EFI program read whole from an EFI boot image.
const maxEFIProgram = 64 << 20

// bootFound is what the image and its EFI boot images hold: the
// configurations read and the lines they run.
type bootFound struct {
	configs []string
	lines   []cfgLine
}

// efiConfigs adds what each El Torito image that is a FAT filesystem
// holds: its grub.cfg files, read as the image's own are, and its EFI
// programs, each of which must be GRUB, followed as runGrubProgram says.
func (im *Image) efiConfigs(files map[string]File, src grubSource, out *bootFound) error {
	imgs, err := im.BootImages()
	if err != nil {
		return err
	}
	parts, err := im.partitions()
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.esp {
			return fmt.Errorf("%s is an EFI system partition: a firmware booting the image as a disk loads its programs, which rootfs-trim does not read", p)
		}
	}
	byOffset := map[int64]string{}
	for p, f := range files {
		if f.Mode.IsRegular() {
			byOffset[f.Offset] = p
		}
	}
	done := map[int64]bool{}
	for _, bi := range imgs {
		off := bi.Offset()
		if done[off] || !IsFAT(im.r, off) {
			continue
		}
		done[off] = true
		where := byOffset[off]
		if where == "" {
			where = fmt.Sprintf("(EFI boot image at sector %d)", bi.LBA)
		}
		if p, ok := parts.at(off); ok {
			return fmt.Errorf("%s: %s maps the EFI boot image: GRUB's boot device would be that partition, not the CD (grub_efidisk_get_device_name), which rootfs-trim does not follow", names.Quote(where), p)
		}
		fat, err := OpenFAT(im.r, off, im.size)
		if err != nil {
			return fmt.Errorf("EFI boot image at sector %d: %w", bi.LBA, err)
		}
		if err := out.readFAT(fat, where, src); err != nil {
			return err
		}
	}
	return nil
}

func (out *bootFound) readFAT(fat *FAT, where string, src grubSource) error {
	found, err := fat.FindFunc(func(name string) bool {
		return matchName(name, configNames) || strings.HasSuffix(strings.ToUpper(name), ".EFI")
	}, maxEFIProgram)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	for _, f := range found {
		at := where + ":" + f.Path
		if !strings.HasSuffix(strings.ToUpper(f.Path), ".EFI") {
			// Its paths name files of the ISO, as a grub.cfg of the
			// image's own tree does.
			if err := out.read(configText{where: at, dir: "/", data: f.Data}, src); err != nil {
				return err
			}
			continue
		}
		g, err := ReadGrubImage(f.Data)
		if err != nil {
			return fmt.Errorf("%s: %w: rootfs-trim cannot tell what it loads", at, err)
		}
		psrc := src
		psrc.memdisk, psrc.where = g.Memdisk, at
		r, err := runGrubProgram(psrc, g, f.Path)
		if err != nil {
			return err
		}
		out.configs, out.lines = append(out.configs, r.configs...), append(out.lines, r.lines...)
	}
	return nil
}

// runGrubProgram follows what a GRUB EFI program does once the firmware
// has loaded it from the El Torito image (grub_main,
// grub-core/kern/main.c): grub_set_prefix_and_root sets the prefix from
// its -p ("(memdisk)/boot/grub" for grub-mkstandalone, which makes the
// memdisk root too; a path alone is on the boot device, which for an
// El Torito image GRUB names as the whole CD, the image; none is the
// program's directory), the embedded configuration runs, then normal
// mode (grub_cmd_normal, grub-core/normal/main.c) reads $prefix/grub.cfg.
func runGrubProgram(src grubSource, g *GrubImage, efiPath string) (*grubRun, error) {
	r := &grubRun{src: src}
	st := grubState{root: devImage, prefixDev: devImage}
	prefix := g.Prefix
	if strings.HasPrefix(prefix, "(") {
		dev, rest, _ := strings.Cut(prefix[1:], ")")
		if dev != "memdisk" {
			return nil, fmt.Errorf("%s: GRUB prefix %q: a device other than the boot device or (memdisk)", src.where, prefix)
		}
		st.root, st.prefixDev, prefix = devMemdisk, devMemdisk, rest
	}
	if prefix == "" {
		prefix = path.Dir(efiPath)
	}
	if !strings.HasPrefix(prefix, "/") {
		return nil, fmt.Errorf("%s: GRUB prefix %q: not an absolute path", src.where, g.Prefix)
	}
	st.prefix = prefix
	if g.Config != nil {
		if err := r.runText(src.where+":(embedded configuration)", g.Config, true, &st, nil); err != nil {
			return nil, err
		}
	}
	cfg := grubFileName{dev: st.prefixDev, path: path.Join(st.prefix, "grub.cfg")}
	if _, err := r.runFile(cfg, &st, nil); err != nil {
		return nil, err
	}
	return r, nil
}

type configText struct {
	where, dir string
	data       []byte
}

type cfgLine struct {
	where  string // "file:line"
	kernel bool
	files  []string
}

// parseSyslinux finds the kernel and initrd lines of a syslinux
// configuration: "KERNEL f", "LINUX f", "INITRD a[,b]", "APPEND ...
// initrd=a[,b] ..." (keywords in any case; doc/syslinux.txt). A path is
// absolute in the image, or relative to the configuration's directory.
func parseSyslinux(t configText) []cfgLine {
	var out []cfgLine
	for i, raw := range strings.Split(string(t.data), "\n") {
		fields := strings.Fields(strings.TrimSpace(raw))
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		kw := strings.ToLower(fields[0])
		args := fields[1:]
		var l cfgLine
		switch {
		case (kw == "kernel" || kw == "linux") && len(args) > 0:
			l = cfgLine{kernel: true, files: []string{sysPath(t.dir, args[0])}}
		case kw == "initrd" && len(args) > 0:
			l.files = sysList(t.dir, args[0])
		case kw == "append":
			for _, a := range args {
				if v, ok := strings.CutPrefix(a, "initrd="); ok {
					l.files = sysList(t.dir, v)
				}
			}
		}
		if len(l.files) > 0 {
			l.where = fmt.Sprintf("%s:%d", t.where, i+1)
			out = append(out, l)
		}
	}
	return out
}

func sysPath(dir, a string) string {
	if strings.HasPrefix(a, "/") {
		return path.Clean(a)
	}
	return path.Join(dir, a)
}

func sysList(dir, v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p != "" {
			out = append(out, sysPath(dir, p))
		}
	}
	return out
}
