package container

import (
	"os"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// The tests run GNU cpio, bsdtar and the compressors: they see the same
// locale and time zone whatever the caller's.
func TestMain(m *testing.M) {
	archivetest.SetToolEnv()
	os.Exit(m.Run())
}
