package trim

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/configkey"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// The checks of a runtime's config read from several files (configs:).
const (
	// CheckOverride: a file read after the site's decides a key the
	// site manages (a package's drop-in that sorts after it).
	CheckOverride = "drop-in-override"
	// CheckCNIDir: the runtime reads CNI configs from a directory other
	// than the one the policy guards.
	CheckCNIDir = "cni-dir"
)

// ConfigFiles are the files of the rule set's configs as an input gives
// them, the last entry at a path winning, as in the tree it unpacks to.
type ConfigFiles struct {
	configs []*rules.Config
	data    map[string][]byte
	kept    int64
}

// maxConfigFiles bounds what ConfigFiles keeps of an input: a config is
// kilobytes; a directory of many large files is refused, not held.
const maxConfigFiles = 64 << 20

// NewConfigFiles collects the files of set's configs.
func NewConfigFiles(set *rules.Set) *ConfigFiles {
	return &ConfigFiles{configs: set.Configs, data: map[string][]byte{}}
}

// wanted says whether a config of the set may read name.
func (c *ConfigFiles) wanted(name string) bool {
	return slices.ContainsFunc(c.configs, func(cf *rules.Config) bool { return cf.Reads(name) })
}

// Note keeps e's data when a config may read it, and returns a reader of
// the same bytes for the rest of the entry's audit.
func (c *ConfigFiles) Note(e *archive.Entry, data io.Reader) (io.Reader, error) {
	name, err := pathx.Clean(e.Name)
	if err != nil || !c.wanted(name) {
		return data, nil
	}
	if e.Type != archive.TypeRegular {
		delete(c.data, name)
		return data, nil
	}
	b, err := io.ReadAll(io.LimitReader(data, maxJudged))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if c.kept += int64(len(b)); c.kept > maxConfigFiles {
		return nil, fmt.Errorf("%s: the runtimes' config files hold more than %d MiB", name, maxConfigFiles>>20)
	}
	c.data[name] = b
	return bytes.NewReader(b), nil
}

// Findings are what the configs make of the files: a managed key a later
// file decides, a CNI directory other than the guarded one. Call it after the input's last entry.
func (c *ConfigFiles) Findings(input string, owners *owners.Table) []Finding {
	var found []Finding
	for _, cf := range c.configs {
		base := Finding{Input: input, Rule: cf.Name, Pos: cf.Pos, Severity: rules.Error, Type: string(rules.TypeFile)}
		// A config its runtime cannot read (a file that does not decode,
		// an import not there) stops the runtime, which says so; an
		// edit rule that matches the file reports it too.
		order, err := cf.Stack.Order(cf.Main, c.data)
		if err != nil || len(order) == 0 {
			continue
		}
		over, err := configOverrides(cf, order, base, owners)
		if err != nil {
			continue
		}
		dirs, _ := configCNIDirs(cf, order, base, owners)
		found = append(append(found, over...), dirs...)
	}
	return found
}

func configOverrides(cf *rules.Config, order []configkey.File, base Finding, owners *owners.Table) ([]Finding, error) {
	over, err := configkey.Overrides(cf.Stack, order, cf.Site, cf.Manages)
	var found []Finding
	for _, o := range over {
		f := base
		f.Path, f.Site, f.Check, f.Key, f.Value = o.File, o.Site, CheckOverride, o.Key.String(), configkey.Show(o.Value, o.Found)
		f.Package = owners.Owner(o.File)
		how := "sets it to " + f.Value
		if !o.Found {
			how = "takes it back to the default (its table replaces the site's)"
		}
		f.Reason = fmt.Sprintf("read after the site's %s, which manages %s, it %s: %s", o.Site, f.Key, how, cf.Reason)
		found = append(found, f)
	}
	return found, err
}

func configCNIDirs(cf *rules.Config, order []configkey.File, base Finding, owners *owners.Table) ([]Finding, error) {
	if cf.CNIDir == "" {
		return nil, nil
	}
	dirs, err := configkey.CNIDirs(cf.Stack, order)
	var found []Finding
	for _, d := range dirs {
		s, _ := d.Value.(string)
		if path.Clean("/"+s) == "/"+cf.CNIDir {
			continue
		}
		f := base
		f.Path, f.Check, f.Key, f.Value = cmp.Or(d.File, cf.Main), CheckCNIDir, d.Key.String(), configkey.Show(d.Value, true)
		f.Package = owners.Owner(f.Path)
		f.Reason = fmt.Sprintf("the runtime reads CNI configs from %s, not from /%s, which the policy guards: guard it, or set %s back", s, cf.CNIDir, f.Key)
		found = append(found, f)
	}
	return found, err
}
