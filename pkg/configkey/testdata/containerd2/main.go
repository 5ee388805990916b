// Command containerd-config reads a containerd config file as containerd
// 2.3 reads it, and prints as JSON what the CRI makes of it: which CRI
// plugins the file disables, the CNI directories the runtime plugin reads,
// and the whole config as `containerd config dump` prints it.
//
// It is containerd's own code, not a copy: cmd/containerd/command/config.go
// (dumpConfig, outputConfig, platformAgnosticDefaultConfig) loads the file
// with cmd/containerd/server/config/config.go LoadConfigWithPlugins, which
// migrates a file older than version.ConfigVersion one version at a time
// (Config.MigrateConfigTo: v1Migrate turns version 1's "cri" into
// io.containerd.grpc.v1.cri, serviceMigrate moves grpc and friends into
// plugins for version 4) and runs each registered plugin's ConfigMigration
// (plugins/cri/runtime/plugin.go and plugins/cri/images/plugin.go
// configMigration move io.containerd.grpc.v1.cri's settings into
// io.containerd.cri.v1.runtime and .images); server.LoadPlugins drops the
// disabled plugins (config.V2DisabledFilter: the URI, exactly), and
// Config.Decode gives each plugin its settings. The builtins are
// containerd's, so every plugin's migration runs.
//
// It is built by pkg/configkey's tests from its own module (this directory:
// it is no part of rootfs-trim's build).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"slices"

	_ "github.com/containerd/containerd/v2/cmd/containerd/builtins"
	"github.com/containerd/containerd/v2/cmd/containerd/server"
	srvconfig "github.com/containerd/containerd/v2/cmd/containerd/server/config"
	"github.com/containerd/containerd/v2/defaults"
	"github.com/containerd/containerd/v2/version"
	"github.com/containerd/plugin"
	"github.com/containerd/plugin/registry"
	"github.com/pelletier/go-toml/v2"
)

// criPlugins are the plugins the kubelet needs: the CRI gRPC service and
// the runtime and images services it requires.
var criPlugins = []string{"io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"}

type report struct {
	Version     int               `json:"version"`  // the file's, before migration
	Disabled    map[string]bool   `json:"disabled"` // by CRI plugin ID
	ConfDir     string            `json:"conf_dir"` // the runtime plugin's cni.conf_dir
	CNIConfDirs map[string]string `json:"cni_conf_dirs"`
	Dump        map[string]any    `json:"dump"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: containerd-config FILE")
		os.Exit(2)
	}
	r, err := load(context.Background(), os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "containerd-config: %v\n", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		fmt.Fprintf(os.Stderr, "containerd-config: %v\n", err)
		os.Exit(1)
	}
}

func load(ctx context.Context, path string) (*report, error) {
	var raw struct {
		Version int `toml:"version"`
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := toml.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	// dumpConfig: defaults, then the file (with its imports) migrated by
	// every registered plugin.
	config := defaultConfig()
	all := registry.Graph(func(*plugin.Registration) bool { return false })
	plugins := func() iter.Seq[plugin.Registration] { return slices.Values(all) }
	if err := srvconfig.LoadConfigWithPlugins(ctx, path, plugins, config); err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	// outputConfig: the plugins containerd would load, with their settings.
	loaded, err := server.LoadPlugins(ctx, config)
	if err != nil {
		return nil, err
	}
	r := &report{Version: raw.Version, Disabled: map[string]bool{}, CNIConfDirs: map[string]string{}}
	for _, id := range criPlugins {
		if !slices.ContainsFunc(all, func(p plugin.Registration) bool { return p.URI() == id }) {
			return nil, fmt.Errorf("containerd %s registers no plugin %s", version.Version, id)
		}
		r.Disabled[id] = !slices.ContainsFunc(loaded, func(p plugin.Registration) bool { return p.URI() == id })
	}
	for _, p := range loaded {
		if p.Config == nil {
			continue
		}
		pc, err := config.Decode(ctx, p.URI(), p.Config)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", p.URI(), err)
		}
		config.Plugins[p.URI()] = pc
	}
	config.Version = version.ConfigVersion
	out, err := toml.Marshal(config)
	if err != nil {
		return nil, err
	}
	if err := toml.Unmarshal(out, &r.Dump); err != nil {
		return nil, err
	}
	r.cniDirs()
	return r, nil
}

// cniDirs reads the runtime plugin's CNI directories out of the dump: what
// the plugin was given, defaults included.
func (r *report) cniDirs() {
	plugins, _ := r.Dump["plugins"].(map[string]any)
	rt, _ := plugins["io.containerd.cri.v1.runtime"].(map[string]any)
	cni, _ := rt["cni"].(map[string]any)
	r.ConfDir, _ = cni["conf_dir"].(string)
	ctr, _ := rt["containerd"].(map[string]any)
	runtimes, _ := ctr["runtimes"].(map[string]any)
	for name, v := range runtimes {
		m, _ := v.(map[string]any)
		if dir, _ := m["cni_conf_dir"].(string); dir != "" {
			r.CNIConfDirs[name] = dir
		}
	}
}

// defaultConfig is cmd/containerd/command's platformAgnosticDefaultConfig
// (unexported there), less the stream processors, which no CRI setting
// touches, and less the default imports (/etc/containerd/conf.d/*.toml):
// the file alone is read, not this machine's drop-ins.
func defaultConfig() *srvconfig.Config {
	return &srvconfig.Config{
		Version:         version.ConfigVersion,
		Root:            defaults.DefaultRootDir,
		State:           defaults.DefaultStateDir,
		DisabledPlugins: []string{},
		RequiredPlugins: []string{},
		Plugins: map[string]any{
			"io.containerd.server.v1.grpc": map[string]any{
				"address":               defaults.DefaultAddress,
				"max_recv_message_size": defaults.DefaultMaxRecvMsgSize,
				"max_send_message_size": defaults.DefaultMaxSendMsgSize,
			},
		},
	}
}
