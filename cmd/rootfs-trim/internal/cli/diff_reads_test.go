package cli

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

// TestDiffReadsEachInputOnce (issue 29, "one read of the input for every
// command"): diff of two archives whose owners come from their own dpkg
// databases reads each input once, the database gathered in the pass
// that hashes the entries (trim.Recording); it read each twice (owners.Load,
// then the diff). The inputs are cri-o's two debs as raw cpio archives,
// each with 8 MiB of incompressible data beside the package, so that
// what the command reads of them dwarfs the rest (the rules, the test).
func TestDiffReadsEachInputOnce(t *testing.T) {
	dir := t.TempDir()
	toCpio := container.Want{Format: "newc"}
	toTree := container.Want{Format: "dir"}
	var inputs []string
	var total int64
	for i, name := range []string{"cri-o-kubic-deb-v1.28.0", "cri-o-deb-v1.35.0"} {
		tree := filepath.Join(dir, name)
		if _, err := container.Rewrite(filepath.Join("../../../../testdata/packages/upstream", name, "root"), tree, container.RewriteOptions{Want: toTree}); err != nil {
			t.Fatal(err)
		}
		big := make([]byte, 8<<20)
		r := rand.NewChaCha8([32]byte{byte(i)})
		r.Read(big)
		if err := os.WriteFile(filepath.Join(tree, "bulk"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		file := tree + ".cpio"
		if _, err := container.Rewrite(tree, file, container.RewriteOptions{Want: toCpio}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		inputs, total = append(inputs, file), total+fi.Size()
	}
	before := bytesRead(t)
	code, stdout, stderr := run(t, nil, "diff", "--rules", "../../../../rules", inputs[0], inputs[1])
	read := bytesRead(t) - before
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFindings, stderr)
	}
	for _, want := range []string{
		"owners: from the dpkg database in " + inputs[0] + " (1 package)\n",
		"owners: from the dpkg database in " + inputs[1] + " (1 package)\n",
		"\n  new      [offender] etc/cni/net.d/10-crio-bridge.conflist.disabled",
		"offenders 1 new, 2 gone; 3 deferred and 0 forbidden changed: the rules care\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !bytes.Contains([]byte(stdout), []byte("bulk")) {
		t.Errorf("the bulk file is not in the diff: the inputs are not what the test made\n%s", stdout)
	}
	t.Logf("diff read %d bytes of inputs of %d bytes (%.2f times)", read, total, float64(read)/float64(total))
	// Once is the inputs' size and a little: the rules, a few headers
	// sniffed again. Twice is twice.
	if read > total+total/4 {
		t.Errorf("diff read %d bytes of inputs of %d bytes: %.2f times them, want once", read, total, float64(read)/float64(total))
	}
}
