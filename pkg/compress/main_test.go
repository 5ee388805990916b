package compress

import (
	"os"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// The tests run GNU cpio, bsdtar and the compressors: they see the same
// locale and time zone whatever the caller's.
//
// The fuzzer's minimizing is capped (archivetest.CapFuzzMinimizing).
func TestMain(m *testing.M) {
	archivetest.SetToolEnv()
	archivetest.CapFuzzMinimizing()
	os.Exit(m.Run())
}
