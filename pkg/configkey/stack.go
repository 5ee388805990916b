package configkey

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
)

// Stack is how a consumer reads its config from several files: which files,
// in which order, and which of them decides a key. A later file decides
// over an earlier one.
type Stack interface {
	// Order is the files the consumer reads, main first, in the order it
	// merges them; files holds the image's candidates by path (no leading
	// slash).
	Order(main string, files map[string][]byte) ([]File, error)
	// decides reports whether a file whose decoded values are root
	// decides key when read after the earlier ones: by its value, or by
	// taking it back to the default.
	decides(root map[string]any, key Path) bool
	// cniKeys are the keys that name a CNI config directory, read in the
	// merged files (main's values first), with the default of each.
	cniKeys(s *stackRead) []Setting
}

// File is one config file of a stack.
type File struct {
	Name string
	Data []byte
}

// Setting is a key's value as the consumer reads it from a stack: the
// file that decides it ("" when none does, and Value is the default).
type Setting struct {
	Key   Path
	File  string
	Value any
	Found bool
}

// stackRead is a stack's files, decoded.
type stackRead struct {
	stack Stack
	files []File
	roots []map[string]any
}

func readStack(s Stack, files []File) (*stackRead, error) {
	r := &stackRead{stack: s, files: files}
	for _, f := range files {
		var m map[string]any
		if err := toml.Unmarshal(f.Data, &m); err != nil {
			return nil, fmt.Errorf("%s: toml: %w", f.Name, err)
		}
		r.roots = append(r.roots, m)
	}
	return r, nil
}

// effective is key as the consumer reads it: from the last file that
// decides it.
func (r *stackRead) effective(key Path) Setting {
	for i := len(r.files) - 1; i >= 0; i-- {
		if r.stack.decides(r.roots[i], key) {
			v, ok := (&doc{root: r.roots[i]}).lookup(key)
			return Setting{Key: key, File: r.files[i].Name, Value: v, Found: ok}
		}
	}
	return Setting{Key: key}
}

// CNIDirs are the CNI config directories the stack's consumer reads, each
// with the key and file that set it (File "" for a default).
func CNIDirs(s Stack, files []File) ([]Setting, error) {
	r, err := readStack(s, files)
	if err != nil {
		return nil, err
	}
	return s.cniKeys(r), nil
}

// Override is a key the site's file sets that a later file decides.
type Override struct {
	Key        Path
	Site, File string
	Value      any
	Found      bool // false: File takes the key back to its default
}

// Overrides are the keys among managed that a file read after site
// decides, each by the file that decides it last. Whether site sets the
// key now does not matter: the site writes its keys there when it starts
// (minikube's 02-crio.conf ships them commented out).
func Overrides(s Stack, files []File, site string, managed []Path) ([]Override, error) {
	r, err := readStack(s, files)
	if err != nil {
		return nil, err
	}
	at := slices.IndexFunc(files, func(f File) bool { return f.Name == site })
	if at < 0 {
		return nil, nil
	}
	var out []Override
	for _, key := range managed {
		if e := r.effective(key); slices.IndexFunc(files, func(f File) bool { return f.Name == e.File }) > at {
			out = append(out, Override{Key: key, Site: site, File: e.File, Value: e.Value, Found: e.Found})
		}
	}
	return out, nil
}

// Crio is cri-o's config: crio.conf, then every file beneath its drop-in
// directory, in the order filepath.Walk gives (cri-o's Config.UpdateFromPath,
// pkg/config/config.go). Each file is decoded onto what the earlier ones
// gave (Config.UpdateFromDropInFile), so a file decides the keys it sets.
type Crio struct{ DropIns string }

// crioNetworkDir is cri-o's default network_dir (cniConfigDir,
// pkg/config/config_unix.go).
const crioNetworkDir = "/etc/cni/net.d/"

func (c Crio) Order(main string, files map[string][]byte) ([]File, error) {
	var out []File
	if b, ok := files[main]; ok {
		out = append(out, File{main, b})
	}
	// filepath.Walk reads each directory in lexical order and descends
	// where it meets a directory: "a/b" comes before "a.conf".
	walkOrder := func(a, b string) int { return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) }
	for _, name := range slices.SortedFunc(maps.Keys(files), walkOrder) {
		if strings.HasPrefix(name, c.DropIns+"/") {
			out = append(out, File{name, files[name]})
		}
	}
	return out, nil
}

func (Crio) decides(root map[string]any, key Path) bool {
	_, ok := (&doc{root: root}).lookup(key)
	return ok
}

func (Crio) cniKeys(r *stackRead) []Setting {
	s := r.effective(Path{"crio", "network", "network_dir"})
	if !s.Found {
		s.Value = crioNetworkDir
	}
	return []Setting{s}
}

// ContainerdStack is containerd's config: config.toml, then its imports,
// breadth first, each file once (LoadConfig, services/server/config in
// 1.x, cmd/containerd/server/config in 2.x). An import is a glob, or a path
// relative to the file that names it (resolveImports). A later file
// replaces a plugin's whole table and decides every other key it sets
// (mergeConfig).
type ContainerdStack struct{}

// containerdConfDir is the CRI's default conf_dir (DefaultConfig,
// pkg/cri/config/config_unix.go in 1.x; DefaultRuntimeConfig,
// internal/cri/config/config_unix.go in 2.x).
const containerdConfDir = "/etc/cni/net.d"

func (ContainerdStack) Order(main string, files map[string][]byte) ([]File, error) {
	if _, ok := files[main]; !ok {
		return nil, nil // containerd runs on its defaults
	}
	var out []File
	loaded := map[string]bool{}
	for pending := []string{main}; len(pending) > 0; pending = pending[1:] {
		name := pending[0]
		if loaded[name] {
			continue
		}
		b, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("%s: imported, not in the image", name)
		}
		var f struct{ Imports []string }
		if err := toml.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: toml: %w", name, err)
		}
		loaded[name] = true
		out = append(out, File{name, b})
		for _, imp := range f.Imports {
			// A glob is matched as written: a relative one from
			// containerd's working directory, / under systemd.
			if !path.IsAbs(imp) && !strings.Contains(imp, "*") {
				imp = path.Join("/", path.Dir(name), imp)
			}
			imp = strings.TrimPrefix(path.Join("/", imp), "/")
			if !strings.Contains(imp, "*") {
				pending = append(pending, imp)
				continue
			}
			for _, n := range slices.Sorted(maps.Keys(files)) { // filepath.Glob's order
				if ok, _ := path.Match(imp, n); ok {
					pending = append(pending, n)
				}
			}
		}
	}
	return out, nil
}

func (ContainerdStack) decides(root map[string]any, key Path) bool {
	if len(key) > 2 && key[0] == "plugins" {
		key = key[:2] // the file's table replaces the plugin's
	}
	_, ok := (&doc{root: root}).lookup(key)
	return ok
}

// criPlugin is the plugin that reads the CNI settings, by config version:
// version 1 names plugins by their short ID.
var criPlugin = map[int64]string{1: "cri", 2: "io.containerd.grpc.v1.cri", 3: "io.containerd.cri.v1.runtime"}

// cniKeys: the CRI's conf_dir, and each runtime's cni_conf_dir, which
// takes the place of conf_dir for that runtime's pods when set.
func (ContainerdStack) cniKeys(r *stackRead) []Setting {
	cri := Path{"plugins", criPlugin[Containerd{}.version(&doc{root: r.roots[0]})]}
	s := r.effective(append(cri.clone(), "cni", "conf_dir"))
	if !s.Found {
		s.Value = containerdConfDir
	}
	out := []Setting{s}
	runtimes := r.effective(append(cri.clone(), "containerd", "runtimes"))
	m, _ := runtimes.Value.(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if s := r.effective(append(runtimes.Key.clone(), name, "cni_conf_dir")); s.Found && s.Value != "" {
			out = append(out, s)
		}
	}
	return out
}
