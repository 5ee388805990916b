package configkey

// Containerd is containerd's config.toml, read as containerd reads it: a
// file with no version key is version 1; version 2 (containerd 1.x) and 3
// and 4 (containerd 2.x, which migrates older files) name plugins by their
// full ID. A rule names a plugin as version 1 does (disabled_plugins =
// ["cri"]) and is read in the file's version, so one rule says "the CRI
// must not be disabled" for them all.
type Containerd struct{ TOML }

// pluginLists are the keys whose items are plugin IDs.
var pluginLists = map[string]bool{"disabled_plugins": true, "required_plugins": true}

// pluginIDs are the full IDs of a version-1 plugin ID. containerd 2.x
// splits the CRI into its runtime and images plugins, both of which the
// CRI service needs, and matches full IDs in a file of any version: its
// migration (v1Migrate in cmd/containerd/server/config/config.go) renames
// only version 1's short IDs, and no plugin's ConfigMigration touches
// disabled_plugins. So any of the three disables the CRI, whatever the
// version.
var pluginIDs = map[string][]string{
	"cri": {"io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"},
}

// Version is the config version of d: its version key, 1 without
// (containerd migrates 0 as 1).
func (Containerd) version(d *doc) int64 {
	if v, ok := d.root["version"].(int64); ok {
		return v
	}
	return 1
}

func (c Containerd) spell(d *doc, key Path, vals []string) []string {
	if len(key) != 1 || !pluginLists[key[0]] {
		return vals
	}
	var out []string
	for _, id := range vals {
		full, known := pluginIDs[id]
		if !known || c.version(d) <= 1 {
			out = append(out, id) // version 1 also reads the short ID
		}
		out = append(out, full...)
	}
	return out
}
