package iso9660

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// GRUB configurations are followed, not scanned: rootfs-trim runs the
// part of GRUB's script language a node image's configuration uses and
// refuses the rest, naming the file and line, since anything else
// (variables, conditions, loopback, other devices) could make GRUB load a
// file other than the one judged. What is followed is runText's menu
// entries and exec's commands (docs/security.md lists them).
//
// A PATH is absolute, on the root device or with "($root)" or
// "(memdisk)" before it. The root device is the image itself (the device
// GRUB's EFI disk driver names for the El Torito image it was loaded
// from is the whole CD: grub_efidisk_get_device_name) or the memdisk of a
// grub-mkstandalone program, until "search" sets it to the image.

// grubDev is a device GRUB reads files from.
type grubDev int

const (
	devImage   grubDev = iota // the ISO image
	devMemdisk                // the EFI program's memdisk
)

// rootWord marks an unquoted "($root)" at a word's start, the one use of
// a variable followed; no other byte of a word can be NUL.
const rootWord = "\x00"

// grubState is the part of GRUB's environment followed: the root device,
// and the prefix, set by grub_set_prefix_and_root and by "set prefix".
type grubState struct {
	root      grubDev
	prefixDev grubDev
	prefix    string // "" : none
}

// grubSource is the files GRUB may read configurations from.
type grubSource struct {
	image   map[string]File
	read    func(File) ([]byte, error)
	memdisk map[string][]byte
	where   string   // the memdisk's place, "/EFI/BOOT/efiboot.img:/EFI/BOOT/BOOTX64.EFI"
	labels  []string // the labels GRUB's iso9660 driver may give the image
}

// grubRun follows configurations from one starting point, collecting
// the kernel and initrd lines they run.
type grubRun struct {
	src     grubSource
	lines   []cfgLine
	configs []string
	stack   []string // configurations being run, to refuse a loop
	entries int      // menu entries run, bounded
	steps   int      // commands run, bounded
	read    int      // bytes of configuration read, bounded
}

// Bounds on what one program or file runs: configurations that source
// each other many times over would otherwise run without end.
const (
	maxGrubEntries = 1024
	maxGrubSteps   = 1 << 16
	maxGrubRead    = 16 << 20
)

// braces refuses "{" and "}" anywhere but where a menu entry has them:
// "{" ending a menuentry line, "}" alone on its line.
func braces(c grubCmd) error {
	for i, w := range c.words {
		if (w == "{" && !(c.words[0] == "menuentry" && i == len(c.words)-1)) || (w == "}" && len(c.words) != 1) {
			return fmt.Errorf("%s: %q where GRUB would read a block", c.where, w)
		}
	}
	return nil
}

// grubCmd is one command line: its words and where it is.
type grubCmd struct {
	where string // "file:line"
	words []string
}

// grubFileName is where a GRUB file name points.
type grubFileName struct {
	dev  grubDev
	path string
}

func (r *grubRun) name(f grubFileName) string {
	if f.dev == devMemdisk {
		return r.src.where + ":(memdisk)" + f.path
	}
	return f.path
}

// runFile reads and runs a configuration file, as normal mode's
// read_config_file (grub-core/normal/main.c) does for "configfile",
// "source" and $prefix/grub.cfg; a file that is not there is false.
func (r *grubRun) runFile(f grubFileName, st *grubState, menu *[]grubEntry) (bool, error) {
	data, ok, err := r.readFile(f)
	if err != nil || !ok {
		return ok, err
	}
	where := r.name(f)
	if slices.Contains(r.stack, where) {
		return true, fmt.Errorf("%s: read again while it runs (a loop of configfile or source)", where)
	}
	if len(r.stack) >= 8 {
		return true, fmt.Errorf("%s: configurations nested more than 8 deep", where)
	}
	r.stack = append(r.stack, where)
	defer func() { r.stack = r.stack[:len(r.stack)-1] }()
	return true, r.runText(where, data, false, st, menu)
}

func (r *grubRun) readFile(f grubFileName) ([]byte, bool, error) {
	if f.dev == devMemdisk {
		data, ok := r.src.memdisk[f.path]
		return data, ok, nil
	}
	file, ok := r.src.image[f.path]
	if !ok {
		return nil, false, nil
	}
	if !file.Mode.IsRegular() {
		return nil, false, fmt.Errorf("%s: not a regular file", f.path)
	}
	data, err := r.src.read(file)
	return data, true, err
}

// grubEntry is a menu entry's body, run once its configuration has ended.
type grubEntry struct{ cmds []grubCmd }

// runText runs one configuration's text. embedded is the configuration
// grub-mkimage -c puts in the program, which grub_load_config hands to
// the rescue parser (grub_parser_execute): there "#" is no comment, only
// an unknown command when it starts the line, and there are no blocks.
// A configuration's menu entries run after it, each from the state it
// ended in (grub_normal_execute shows the menu once the file is read);
// "source" adds its entries to the caller's menu, "configfile" has its
// own.
func (r *grubRun) runText(where string, data []byte, embedded bool, st *grubState, menu *[]grubEntry) error {
	r.configs = appendNew(r.configs, where)
	if r.read += len(data); r.read > maxGrubRead {
		return fmt.Errorf("%s: more than %d bytes of configuration read", where, maxGrubRead)
	}
	cmds, err := lexGrub(where, data, embedded)
	if err != nil {
		return err
	}
	own := menu == nil
	if own {
		menu = &[]grubEntry{}
	}
	for i := 0; i < len(cmds); i++ {
		c := cmds[i]
		if err := braces(c); err != nil {
			return err
		}
		if c.words[0] == "menuentry" {
			if embedded {
				return fmt.Errorf("%s: a menu entry in an embedded configuration, which GRUB's rescue parser does not read as one", c.where)
			}
			if len(c.words) < 3 || c.words[len(c.words)-1] != "{" {
				return fmt.Errorf("%s: menuentry without a title and \"{\" on its line", c.where)
			}
			j := i + 1
			for j < len(cmds) && cmds[j].words[0] != "}" {
				if err := braces(cmds[j]); err != nil {
					return err
				}
				if cmds[j].words[0] == "menuentry" || cmds[j].words[0] == "submenu" {
					return fmt.Errorf("%s: a menu entry inside a menu entry", cmds[j].where)
				}
				j++
			}
			if j < len(cmds) && len(cmds[j].words) != 1 {
				return fmt.Errorf("%s: \"}\" not alone on its line", cmds[j].where)
			}
			if j == len(cmds) {
				return fmt.Errorf("%s: menuentry without its \"}\"", c.where)
			}
			*menu = append(*menu, grubEntry{cmds: cmds[i+1 : j]})
			i = j
			continue
		}
		if err := r.exec(c, st, menu); err != nil {
			return err
		}
	}
	if own {
		// Index, not range: an entry's "source" may add entries.
		for k := 0; k < len(*menu); k++ {
			if r.entries++; r.entries > maxGrubEntries {
				return fmt.Errorf("%s: more than %d menu entries run", where, maxGrubEntries)
			}
			est := *st
			for _, c := range (*menu)[k].cmds {
				if err := r.exec(c, &est, menu); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// rootIn refuses "($root)" except at the start of a file name: a
// linux line's kernel, an initrd, configfile or source file, the value
// of "set prefix=".
func rootIn(c grubCmd) error {
	for i, w := range c.words {
		at := strings.Index(w, rootWord)
		if at < 0 {
			continue
		}
		var ok bool
		switch c.words[0] {
		case "linux", "linux16", "linuxefi":
			ok = i == 1 && at == 0
		case "initrd", "initrd16", "initrdefi", "configfile", "source":
			ok = i >= 1 && at == 0
		case "set":
			ok = i == 1 && strings.HasPrefix(w, "prefix="+rootWord)
		}
		if !ok || strings.Count(w, rootWord) != 1 {
			return fmt.Errorf("%s: %s: ($root) where rootfs-trim does not follow it", c.where, printable(w))
		}
	}
	return nil
}

// grubModules are the modules "insmod" may load: filesystems, partition
// tables and search, which change no file GRUB reads.
var grubModules = map[string]bool{
	"iso9660": true, "udf": true, "fat": true, "exfat": true, "ext2": true, "part_msdos": true,
	"part_gpt": true, "search": true, "search_label": true, "search_fs_file": true, "search_fs_uuid": true,
}

// exec runs one command outside a menu entry's braces.
func (r *grubRun) exec(c grubCmd, st *grubState, menu *[]grubEntry) error {
	kw, args := c.words[0], c.words[1:]
	if r.steps++; r.steps > maxGrubSteps {
		return fmt.Errorf("%s: more than %d commands run", c.where, maxGrubSteps)
	}
	if err := rootIn(c); err != nil {
		return err
	}
	switch kw {
	case "set":
		return r.set(c, st)
	case "search":
		if err := r.search(c); err != nil {
			return err
		}
		st.root = devImage
		return nil
	case "insmod":
		if len(args) != 1 || !grubModules[args[0]] {
			return fmt.Errorf("%s: insmod %s: only filesystem, partition and search modules are followed", c.where, strings.Join(args, " "))
		}
		return nil
	case "linux", "linux16", "linuxefi":
		if len(args) == 0 {
			return fmt.Errorf("%s: %s without a kernel", c.where, kw)
		}
		f, err := r.imageFile(c, args[0], st)
		if err != nil {
			return err
		}
		r.lines = append(r.lines, cfgLine{where: c.where, kernel: true, files: []string{f}})
		return nil
	case "initrd", "initrd16", "initrdefi":
		l := cfgLine{where: c.where}
		for _, a := range args {
			if strings.HasPrefix(a, "newc:") {
				// grub_initrd_init (grub-core/loader/linux.c) makes
				// FILE an initrd entry named NAME: refused rather
				// than judged, see docs/security.md.
				return fmt.Errorf("%s: initrd %s: GRUB's newc:NAME:FILE (a file of the image added to the initrd under another name) is not read by rootfs-trim", c.where, a)
			}
			f, err := r.imageFile(c, a, st)
			if err != nil {
				return err
			}
			l.files = append(l.files, f)
		}
		if len(l.files) == 0 {
			return fmt.Errorf("%s: %s without a file", c.where, kw)
		}
		r.lines = append(r.lines, l)
		return nil
	case "configfile", "source":
		if len(args) != 1 {
			return fmt.Errorf("%s: %s takes one file", c.where, kw)
		}
		f, err := r.fileName(c, args[0], st)
		if err != nil {
			return err
		}
		sub := st // source runs in the caller's context
		subMenu := menu
		if kw == "configfile" {
			cp := *st // grub_cmd_source with a new context and menu
			sub, subMenu = &cp, nil
		}
		ok, err := r.runFile(f, sub, subMenu)
		if err == nil && !ok {
			err = fmt.Errorf("%s: %s %s: no such file", c.where, kw, args[0])
		}
		return err
	}
	return fmt.Errorf("%s: GRUB command %q: not followed by rootfs-trim (only set, menuentry, search, insmod, linux, initrd, configfile and source)", c.where, kw)
}

func (r *grubRun) set(c grubCmd, st *grubState) error {
	if len(c.words) != 2 {
		return fmt.Errorf("%s: set takes one NAME=VALUE", c.where)
	}
	name, val, _ := strings.Cut(c.words[1], "=")
	switch name {
	case "default", "timeout", "timeout_style":
		return nil
	case "prefix":
		f, err := r.fileName(c, val, st)
		if err != nil {
			return err
		}
		st.prefixDev, st.prefix = f.dev, f.path
		return nil
	}
	return fmt.Errorf("%s: set %s: only default, timeout, timeout_style and prefix are followed", c.where, name)
}

// search follows grub_cmd_search (grub-core/commands/search_wrap.c) for
// a label, which grub_search_label compares with strcmp to the label
// grub_iso9660_label reads (the Joliet volume name where there is one).
// It must name the image: another disk's label is beyond what
// rootfs-trim sees.
func (r *grubRun) search(c grubCmd) error {
	set, byLabel := false, false
	var pos []string
	for _, a := range c.words[1:] {
		switch a {
		case "--no-floppy", "-n":
		case "--label", "-l":
			byLabel = true
		case "--set", "-s", "--set=root":
			set = true
		default:
			if strings.HasPrefix(a, "-") {
				return fmt.Errorf("%s: search %s: option not followed", c.where, a)
			}
			pos = append(pos, a)
		}
	}
	// "--set root": GRUB takes root as the variable or as a second
	// argument, both of which set root.
	if len(pos) == 2 && pos[1] == "root" {
		pos = pos[:1]
	}
	if !byLabel || !set || len(pos) != 1 {
		return fmt.Errorf("%s: search: only \"search --label LABEL --set root\" is followed", c.where)
	}
	for _, l := range r.src.labels {
		if l != pos[0] {
			return fmt.Errorf("%s: search --label %q: the image's label is %q", c.where, pos[0], l)
		}
	}
	return nil
}

// imageFile is a file of the image a linux or initrd line names.
func (r *grubRun) imageFile(c grubCmd, w string, st *grubState) (string, error) {
	f, err := r.fileName(c, w, st)
	if err != nil {
		return "", err
	}
	if f.dev != devImage {
		return "", fmt.Errorf("%s: %s is in GRUB's memdisk, not on the image", c.where, printable(w))
	}
	return f.path, nil
}

// fileName resolves a file name as grub_file_open does: "(device)/path",
// or "/path" on the root device; the path must be absolute
// (grub_fshelp_find_file refuses others).
func (r *grubRun) fileName(c grubCmd, w string, st *grubState) (grubFileName, error) {
	f := grubFileName{dev: st.root}
	p := w
	switch {
	case strings.HasPrefix(w, rootWord):
		p = w[len(rootWord):]
	case strings.HasPrefix(w, "("):
		dev, rest, ok := strings.Cut(w[1:], ")")
		if !ok || dev != "memdisk" {
			return f, fmt.Errorf("%s: %s: a device other than the image's (rootfs-trim reads files on the root device, ($root) or (memdisk))", c.where, printable(w))
		}
		f.dev, p = devMemdisk, rest
	}
	if !strings.HasPrefix(p, "/") {
		return f, fmt.Errorf("%s: %s: not an absolute path", c.where, printable(w))
	}
	f.path = path.Clean(p)
	return f, nil
}

func printable(w string) string {
	return strings.ReplaceAll(w, rootWord, "($root)")
}

// lexGrub splits a configuration into command lines as GRUB's lexer
// (grub-core/script/yylex.l) and the rescue parser
// (grub_parser_split_cmdline) both would, refusing what makes them
// differ from a list of literal words: a variable other than a leading
// "($root)", an escape, an unclosed quote, ; | & < > and globbing
// characters, braces inside a word, control characters. In an embedded
// configuration "#" must start a line, and no brace is read.
func lexGrub(where string, data []byte, embedded bool) ([]grubCmd, error) {
	var out []grubCmd
	for i, line := range strings.Split(string(data), "\n") {
		at := fmt.Sprintf("%s:%d", where, i+1)
		words, err := lexLine(line, embedded)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if len(words) > 0 {
			out = append(out, grubCmd{where: at, words: words})
		}
	}
	return out, nil
}

func lexLine(line string, embedded bool) ([]string, error) {
	var words []string
	for i := 0; i < len(line); {
		c := line[i]
		if c == ' ' || c == '\t' {
			i++
			continue
		}
		if c == '#' {
			if embedded && len(words) > 0 {
				return nil, fmt.Errorf("\"#\" after a command, which the rescue parser passes to it as words")
			}
			break
		}
		if c == '{' || c == '}' {
			if embedded {
				return nil, fmt.Errorf("%q in an embedded configuration", c)
			}
			if i+1 < len(line) && line[i+1] != ' ' && line[i+1] != '\t' {
				return nil, fmt.Errorf("%q inside a word", c)
			}
			words = append(words, string(c))
			i++
			continue
		}
		w, n, err := lexWord(line[i:])
		if err != nil {
			return nil, err
		}
		words = append(words, w)
		i += n
	}
	return words, nil
}

// lexWord reads one word from the start of s, returning it and the bytes
// it took.
func lexWord(s string) (string, int, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case strings.HasPrefix(s[i:], "($root)"):
			// Where it may stand is the command's to say: rootIn.
			b.WriteString(rootWord)
			i += len("($root)")
		case c == ' ' || c == '\t':
			return b.String(), i, nil
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return "", 0, fmt.Errorf("unclosed %c quote", c)
			}
			q := s[i+1 : i+1+j]
			if c == '"' && strings.ContainsAny(q, "$\\`") {
				return "", 0, fmt.Errorf("%q: a variable or an escape inside quotes", q)
			}
			if strings.ContainsAny(q, "{}") {
				return "", 0, fmt.Errorf("%q: a brace inside quotes", q)
			}
			if bad := strings.IndexFunc(q, isControl); bad >= 0 {
				return "", 0, fmt.Errorf("control character %q", q[bad])
			}
			b.WriteString(q)
			i += j + 2
		case strings.IndexByte("$\\;|&<>`*?[]{}!", c) >= 0:
			return "", 0, fmt.Errorf("%q in a word: rootfs-trim reads only literal words", c)
		case c < 0x20 || c == 0x7f:
			return "", 0, fmt.Errorf("control character %q", c)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), len(s), nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
