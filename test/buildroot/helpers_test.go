// Package buildroot tests the br2-external tree in buildroot/: the
// post-build script run the way Buildroot runs it, the package's .mk and
// Config.in files against Buildroot's coding rules, and the build commands
// the package would run.
package buildroot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive/archivetest"
)

// toolBin is rootfs-trim built once for every test: the post-build tests
// install it where host-rootfs-trim and the target package would.
var toolBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "rootfs-trim-buildroot-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	root, err := findRepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	toolBin = filepath.Join(dir, "rootfs-trim")
	// The flags of the package's build (see rootfs-trim.mk), so the tests
	// exercise the binary Buildroot would install.
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", toolBin, "./cmd/rootfs-trim")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building rootfs-trim: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test directory")
		}
		dir = parent
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := findRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, path, data string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	// WriteFile keeps the mode of an existing file and applies the umask.
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies src into dst as rsync -a would; see archivetest.CopyTree.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if err := archivetest.CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies one file with its mode; see archivetest.CopyFile.
func copyFile(src, dst string, mode fs.FileMode) error {
	return archivetest.CopyFile(src, dst, mode)
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// treeListing describes every entry under root, one line each: path,
// type and mode, mtime in nanoseconds, and the sha256 of a file's content
// or a symlink's target. Two equal listings mean nothing observable in
// the tree changed, which is what an image built from it depends on.
func treeListing(t *testing.T, root string) []string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		var what string
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			what = "-> " + link
		case d.Type().IsRegular():
			sum, err := sha256File(path)
			if err != nil {
				return err
			}
			what = fmt.Sprintf("%d sha256:%s", info.Size(), sum)
		}
		lines = append(lines, fmt.Sprintf("%s %s %d %s", rel, info.Mode(), info.ModTime().UnixNano(), what))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return lines
}

// diffListings names the lines only in a and only in b.
func diffListings(a, b []string) string {
	inA := map[string]bool{}
	for _, l := range a {
		inA[l] = true
	}
	inB := map[string]bool{}
	for _, l := range b {
		inB[l] = true
	}
	var out strings.Builder
	for _, l := range a {
		if !inB[l] {
			fmt.Fprintf(&out, "- %s\n", l)
		}
	}
	for _, l := range b {
		if !inA[l] {
			fmt.Fprintf(&out, "+ %s\n", l)
		}
	}
	return out.String()
}
