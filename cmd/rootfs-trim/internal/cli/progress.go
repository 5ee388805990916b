package cli

import (
	"github.com/rootfs-trim/rootfs-trim/internal/progress"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

// showProgress reports whether to draw progress: on a terminal, unless
// --quiet; ROOTFS_TRIM_PROGRESS=always forces it (logs, tests), =never
// silences it.
func showProgress(env *Env, quiet bool) bool {
	switch env.Getenv("ROOTFS_TRIM_PROGRESS") {
	case "always":
		return true
	case "never":
		return false
	}
	return env.IsTerminal && !quiet
}

// withProgress counts entries of in's reader and draws the meter on stderr
// until stop is called.
func withProgress(env *Env, quiet bool, label string, in *container.Input, r archive.Reader) (archive.Reader, func()) {
	if !showProgress(env, quiet) || in.Format.Kind == archive.KindDir {
		return r, func() {}
	}
	m := progress.New(env.Stderr, label, in.Size, in.Consumed)
	m.Start()
	return &countingEntries{Reader: r, m: m}, m.Stop
}

type countingEntries struct {
	archive.Reader
	m *progress.Meter
}

func (c *countingEntries) Next() (*archive.Entry, error) {
	e, err := c.Reader.Next()
	if err == nil {
		c.m.Entry()
	}
	return e, err
}
