package iso9660

import (
	"errors"
	"fmt"
	"path"
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

// ReadBoot finds the boot configurations, in the image's tree and in each
// El Torito image that is a FAT filesystem (an EFI boot image, whatever
// its platform id), and the initrds they name, each checked to be a file
// of the image. An image with no configuration, or whose configurations
// name no initrd, or one that is not in the image, is an error.
func (im *Image) ReadBoot() (*Boot, error) {
	b := &Boot{}
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
	var texts []configText
	for _, f := range cfgs {
		data, err := im.ReadFile(f, maxConfig)
		if err != nil {
			return nil, err
		}
		texts = append(texts, configText{where: f.Path, dir: path.Dir(f.Path), data: data})
	}
	fat, err := im.efiConfigs(files)
	if err != nil {
		return nil, err
	}
	texts = append(texts, fat...)
	if len(texts) == 0 {
		return nil, errors.New("no boot configuration (isolinux.cfg, syslinux.cfg or grub.cfg, in the image or in an EFI boot image)")
	}
	seen := map[string]bool{}
	for _, t := range texts {
		b.Configs = append(b.Configs, t.where)
		lines := parseConfig(t)
		for _, l := range lines {
			if l.kernel {
				b.Kernels = appendNew(b.Kernels, l.files[0])
				continue
			}
			ird := Initrd{Where: fmt.Sprintf("%s:%d", t.where, l.line)}
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
	}
	if len(b.Initrds) == 0 {
		return nil, fmt.Errorf("%s: no initrd named", names.Quote(strings.Join(b.Configs, ", ")))
	}
	if err := im.checkViews(b); err != nil {
		return nil, err
	}
	return b, nil
}

func appendNew(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// efiConfigs reads the configurations inside each El Torito image that is
// a FAT filesystem.
func (im *Image) efiConfigs(files map[string]File) ([]configText, error) {
	imgs, err := im.BootImages()
	if err != nil {
		return nil, err
	}
	byOffset := map[int64]string{}
	for p, f := range files {
		if f.Mode.IsRegular() {
			byOffset[f.Offset] = p
		}
	}
	var out []configText
	done := map[int64]bool{}
	for _, bi := range imgs {
		off := bi.Offset()
		if done[off] || !IsFAT(im.r, off) {
			continue
		}
		done[off] = true
		fat, err := OpenFAT(im.r, off, im.size)
		if err != nil {
			return nil, fmt.Errorf("EFI boot image at sector %d: %w", bi.LBA, err)
		}
		where := byOffset[off]
		if where == "" {
			where = fmt.Sprintf("(EFI boot image at sector %d)", bi.LBA)
		}
		found, err := fat.Find(configNames, maxConfig)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", names.Quote(where), err)
		}
		sort.Slice(found, func(i, j int) bool { return found[i].Path < found[j].Path })
		for _, f := range found {
			// Its paths name files of the ISO: GRUB's embedded config
			// searches for the volume and sets root to it.
			out = append(out, configText{where: where + ":" + f.Path, dir: "/", data: f.Data})
		}
	}
	return out, nil
}

type configText struct {
	where, dir string
	data       []byte
}

type cfgLine struct {
	line   int
	kernel bool
	files  []string
}

// parseConfig finds the kernel and initrd lines of a syslinux or GRUB
// configuration: syslinux "KERNEL f", "LINUX f", "INITRD a[,b]", "APPEND
// ... initrd=a[,b] ..." (keywords in any case; doc/syslinux.txt); GRUB
// "linux f ...", "initrd a b ..." and their 16/efi variants. A path is
// absolute in the image; syslinux's relative ones are relative to the
// configuration's directory; GRUB's "(device)" prefix is dropped.
func parseConfig(t configText) []cfgLine {
	var out []cfgLine
	grub := strings.EqualFold(path.Base(t.where), "grub.cfg")
	for i, raw := range strings.Split(string(t.data), "\n") {
		fields := strings.Fields(strings.TrimSpace(raw))
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		kw := strings.ToLower(fields[0])
		args := fields[1:]
		var l cfgLine
		switch {
		case grub && (kw == "linux" || kw == "linux16" || kw == "linuxefi") && len(args) > 0:
			l = cfgLine{kernel: true, files: []string{grubPath(args[0])}}
		case grub && (kw == "initrd" || kw == "initrd16" || kw == "initrdefi"):
			for _, a := range args {
				l.files = append(l.files, grubPath(a))
			}
		case !grub && (kw == "kernel" || kw == "linux") && len(args) > 0:
			l = cfgLine{kernel: true, files: []string{sysPath(t.dir, args[0])}}
		case !grub && kw == "initrd" && len(args) > 0:
			l.files = sysList(t.dir, args[0])
		case !grub && kw == "append":
			for _, a := range args {
				if v, ok := strings.CutPrefix(a, "initrd="); ok {
					l.files = sysList(t.dir, v)
				}
			}
		}
		if len(l.files) > 0 {
			l.line = i + 1
			out = append(out, l)
		}
	}
	return out
}

func grubPath(a string) string {
	a = strings.Trim(a, `"'`)
	if strings.HasPrefix(a, "(") {
		if i := strings.IndexByte(a, ')'); i >= 0 {
			a = a[i+1:]
		}
	}
	return path.Clean("/" + a)
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
