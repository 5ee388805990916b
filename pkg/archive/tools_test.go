package archive

import (
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// requireTool skips t when an external tool is missing, or fails it under CI.
func requireTool(t testing.TB, name string) {
	t.Helper()
	archivetest.RequireTool(t, name)
}
