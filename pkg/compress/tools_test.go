package compress

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// requireToolsEnv makes a missing CLI a failure instead of a skip. CI sets
// it, so that an interoperability test cannot pass by not running.
const requireToolsEnv = "ROOTFS_TRIM_REQUIRE_TOOLS"

// requireTool returns the path of the command name, skipping the test when
// it is not installed, or failing it when ROOTFS_TRIM_REQUIRE_TOOLS=1.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv(requireToolsEnv) == "1" {
		t.Fatalf("%s not found and %s=1: %v", name, requireToolsEnv, err)
	}
	t.Skipf("%s not found: %v (install it, e.g. apt-get install xz-utils lz4 zstd gzip bzip2 pigz)", name, err)
	return ""
}

// runTool runs name with args, feeding it stdin, and returns its stdout.
// A non-zero exit is returned as an error carrying stderr.
func runTool(t testing.TB, stdin []byte, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(requireTool(t, name), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &toolError{cmd: name + " " + strings.Join(args, " "), err: err, stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

type toolError struct {
	cmd    string
	err    error
	stderr string
}

func (e *toolError) Error() string {
	return e.cmd + ": " + e.err.Error() + ": " + strings.TrimSpace(e.stderr)
}

// mustRunTool is runTool failing the test on error.
func mustRunTool(t testing.TB, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	out, err := runTool(t, stdin, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
