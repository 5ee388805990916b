package enablement

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// UnitDirs are the system unit directories systemd loads units from, the
// first that has a unit's name winning: /usr/local/lib/systemd/system is
// where kicbase puts buildkit and nerdctl.
var UnitDirs = []string{
	"etc/systemd/system",
	"run/systemd/system",
	"usr/local/lib/systemd/system",
	"usr/lib/systemd/system",
}

// Enabler is one thing that starts a unit at boot.
type Enabler struct {
	Unit string
	File string // the unit's file (Unit.File)
	// Link is a symlink in a .wants or .requires directory that pulls
	// the unit in; empty for a preset.
	Link string
	// Preset is the rule by which preset-all enables the unit (File
	// empty: no rule matched, and preset-all enables what no rule names).
	Preset *PresetRule
}

func (e Enabler) String() string {
	switch {
	case e.Link != "":
		return "link " + e.Link
	case e.Preset.File == "":
		return "preset-all (no preset line names it)"
	}
	return "preset " + e.Preset.String()
}

// Unit is what the image says of one unit.
type Unit struct {
	Name   string
	File   string // where it loads from; empty: the image has no such unit
	Masked bool   // its name in /etc or /run links to /dev/null
	// Installs reports whether its [Install] section gives systemctl
	// something to link (WantedBy=, RequiredBy=, UpheldBy=, Alias=):
	// preset-all enables nothing else.
	Installs bool
	// Template is, for an instance (getty@tty2.service) that has no file
	// of its own, the template it loads from (getty@.service).
	Template string
	// Links are the .wants/.requires links to it, in UnitDirs order.
	Links []string
}

// FindUnit reads what the image says of the unit called name.
func FindUnit(fsys fs.FS, name string) (Unit, error) {
	u := Unit{Name: name}
	if err := u.load(fsys, name); err != nil || u.File != "" || u.Masked {
		return u, err
	}
	if template, _, ok := instanceOf(name); ok {
		if err := u.load(fsys, template); err != nil {
			return u, err
		}
		if u.File != "" {
			u.Template = template
		}
	}
	return u, nil
}

// load finds the file of the unit called name, links to it included.
func (u *Unit) load(fsys fs.FS, name string) error {
	for _, dir := range UnitDirs {
		p := path.Join(dir, name)
		if target, err := fs.ReadLink(fsys, p); err == nil && target == "/dev/null" {
			u.Masked = true
			return nil
		}
		data, err := readInImage(fsys, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading unit %s: %w", p, err)
		}
		u.File, u.Installs = p, installs(data)
		break
	}
	links, err := linksTo(fsys, u.Name)
	u.Links = links
	return err
}

// instanceOf splits an instance's name (getty@tty2.service) into its
// template's (getty@.service) and its instance (tty2).
func instanceOf(name string) (template, instance string, ok bool) {
	at := strings.IndexByte(name, '@')
	dot := strings.LastIndexByte(name, '.')
	if at <= 0 || dot <= at+1 {
		return "", "", false
	}
	return name[:at+1] + name[dot:], name[at+1 : dot], true
}

// installs reports whether a unit file's [Install] section has a key
// unit_file_install_info_has_rules counts.
func installs(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	section := ""
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			section = l
			continue
		}
		key, value, ok := strings.Cut(l, "=")
		if section == "[Install]" && ok && strings.TrimSpace(value) != "" &&
			slices.Contains([]string{"WantedBy", "RequiredBy", "UpheldBy", "Alias"}, strings.TrimSpace(key)) {
			return true
		}
	}
	return false
}

// linksTo lists the links named name in any unit directory's .wants or
// .requires directory: systemd adds the dependency whatever the link
// points at.
func linksTo(fsys fs.FS, name string) ([]string, error) {
	var links []string
	for _, dir := range UnitDirs {
		entries, err := fs.ReadDir(fsys, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", dir, err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".wants") && !strings.HasSuffix(e.Name(), ".requires") {
				continue
			}
			p := path.Join(dir, e.Name(), name)
			if _, err := fs.Lstat(fsys, p); err == nil {
				links = append(links, p)
			}
		}
	}
	return links, nil
}

// Enablers lists what starts the unit at boot once preset-all has run:
// its links, except those in /etc and /run a disable line takes away, and
// the preset that enables it.
func Enablers(u Unit, ps Presets) []Enabler {
	if u.Masked || u.File == "" {
		return nil
	}
	rule, matched := ps.Query(u.Name)
	presetOn := !matched || rule.Action == Enable
	if u.Template != "" {
		// preset-all goes through unit files: it enables an instance
		// only where an enable line of its template names it
		// (DefaultInstance= aside, which minikube's runtimes lack).
		_, instance, _ := instanceOf(u.Name)
		rule, matched = ps.Query(u.Template)
		presetOn = matched && rule.Action == Enable && slices.Contains(rule.Instances, instance)
	}
	var es []Enabler
	for _, l := range u.Links {
		if matched && rule.Action == Disable && isConfig(l) {
			continue
		}
		es = append(es, Enabler{Unit: u.Name, File: u.File, Link: l})
	}
	if presetOn && u.Installs {
		es = append(es, Enabler{Unit: u.Name, File: u.File, Preset: &rule})
	}
	return es
}

// isConfig reports whether a link is in a directory preset-all changes
// (the persistent and runtime config: /etc and /run), not a vendor's.
func isConfig(link string) bool {
	return strings.HasPrefix(link, "etc/") || strings.HasPrefix(link, "run/")
}
