package rules

import (
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/configkey"
)

// Config is a runtime's config as its consumer reads it from several
// files (configs:): the site's own file and the keys it manages, and the
// CNI directory the policy guards.
type Config struct {
	Name string
	// Stack is how the consumer merges the files: cri-o's drop-ins,
	// containerd's imports.
	Stack configkey.Stack
	Main  string
	// Site is the site's own file ("" when it has none); Manages the
	// keys it sets that no file read after it may decide.
	Site    string
	Manages []configkey.Path
	// CNIDir is the directory the policy guards (""): a CNI directory the
	// config names elsewhere is a finding.
	CNIDir string
	Reason string
	Pos    Pos
}

// Reads says whether the consumer may read name as part of c: c's main
// file, or one beneath its directory (containerd's imports are found
// there).
func (c *Config) Reads(name string) bool {
	if crio, ok := c.Stack.(configkey.Crio); ok && strings.HasPrefix(name, crio.DropIns+"/") {
		return true
	}
	dir := c.Main[:strings.LastIndexByte(c.Main, '/')+1]
	return name == c.Main || strings.HasPrefix(name, dir)
}

type rawConfig struct {
	Name     located   `yaml:"name"`
	Consumer located   `yaml:"consumer"`
	Main     located   `yaml:"main"`
	DropIns  located   `yaml:"drop_ins"`
	Site     located   `yaml:"site"`
	Manages  []located `yaml:"manages"`
	CNIDir   located   `yaml:"cni_dir"`
	Reason   located   `yaml:"reason"`
}

// rulePath is a path a rule file gives, cleaned; "" when absent.
func (l *loader) rulePath(pos Pos, what string, v located) string {
	if v.V == "" {
		return ""
	}
	p, err := pathx.CleanRule(v.V)
	if err != nil || strings.ContainsAny(p, "*?[{") {
		l.errorf(Pos{pos.File, max(v.Line, pos.Line)}, "%s: bad path %q", what, v.V)
	}
	return p
}

func (l *loader) config(file string, rc rawConfig) {
	pos := Pos{file, rc.Name.Line}
	c := &Config{Name: rc.Name.V, Reason: rc.Reason.V, Pos: pos}
	if c.Name == "" || c.Reason == "" {
		l.errorf(pos, "config %q: name: and reason: are required", c.Name)
	}
	c.Main = l.rulePath(pos, "config "+c.Name+": main", rc.Main)
	c.Site = l.rulePath(pos, "config "+c.Name+": site", rc.Site)
	c.CNIDir = l.rulePath(pos, "config "+c.Name+": cni_dir", rc.CNIDir)
	dropIns := l.rulePath(pos, "config "+c.Name+": drop_ins", rc.DropIns)
	switch rc.Consumer.V {
	case "crio":
		c.Stack = configkey.Crio{DropIns: dropIns}
	case "containerd":
		c.Stack = configkey.ContainerdStack{}
		if dropIns != "" {
			l.errorf(Pos{file, rc.DropIns.Line}, "config %s: drop_ins: containerd reads the files its imports name", c.Name)
		}
	default:
		l.errorf(Pos{file, max(rc.Consumer.Line, pos.Line)}, "config %s: consumer: %q: want crio or containerd", c.Name, rc.Consumer.V)
	}
	if c.Main == "" || !strings.Contains(c.Main, "/") {
		l.errorf(pos, "config %s: main: the consumer's main file, in a directory", c.Name)
		return
	}
	for _, k := range rc.Manages {
		p, err := configkey.ParsePath(k.V)
		if err != nil {
			l.errorf(Pos{file, k.Line}, "config %s: manages: %v", c.Name, err)
			continue
		}
		c.Manages = append(c.Manages, p)
	}
	if (c.Site == "") != (len(c.Manages) == 0) {
		l.errorf(pos, "config %s: site: and manages: go together", c.Name)
	}
	if c.Site != "" && !c.Reads(c.Site) {
		l.errorf(Pos{file, rc.Site.Line}, "config %s: site: %s is not among the files %s reads", c.Name, c.Site, rc.Consumer.V)
	}
	if slices.ContainsFunc(l.set.Configs, func(o *Config) bool { return o.Name == c.Name }) {
		l.errorf(pos, "config %s: name given twice", c.Name)
	}
	l.set.Configs = append(l.set.Configs, c)
}
