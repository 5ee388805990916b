package configkey

// Containerd is containerd's config.toml, read as containerd reads it: a
// file with no version key is version 1; version 2 (containerd 1.x) and 3
// (containerd 2.x, which migrates older files) name plugins by their full
// ID. A rule names a plugin as version 1 does (disabled_plugins = ["cri"])
// and is read in the file's version, so one rule says "the CRI must not be
// disabled" for them all.
type Containerd struct{ TOML }

// pluginLists are the keys whose items are plugin IDs.
var pluginLists = map[string]bool{"disabled_plugins": true, "required_plugins": true}

// pluginIDs are the full IDs of a version-1 plugin ID, by config version:
// containerd 2.x splits the CRI into its runtime and images plugins, both
// of which the CRI service needs.
var pluginIDs = map[string]map[int64][]string{
	"cri": {
		2: {"io.containerd.grpc.v1.cri"},
		3: {"io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"},
	},
}

// Version is the config version of d: its version key, 1 without.
func (Containerd) version(d *doc) int64 {
	if v, ok := d.root["version"].(int64); ok {
		return v
	}
	return 1
}

func (c Containerd) spell(d *doc, key Path, vals []string) []string {
	v := c.version(d)
	if len(key) != 1 || !pluginLists[key[0]] || v == 1 {
		return vals
	}
	var out []string
	for _, id := range vals {
		if ids, ok := pluginIDs[id][v]; ok {
			out = append(out, ids...)
		} else {
			out = append(out, id)
		}
	}
	return out
}
