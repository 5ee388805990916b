package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
)

// TestRenderBoundsTemplates: a template in the image (from an apply that
// did not check it, or edited with its index) cannot make render write
// without bound: 4 MiB here, 9 GB in the red team's image.
func TestRenderBoundsTemplates(t *testing.T) {
	root := appliedImage(t)
	bomb := []byte(`{{range 4096}}{{printf "%01024d" 0}}{{end}}`)
	ixPath := filepath.Join(root, contract.IndexPath)
	f, err := os.Open(ixPath)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := contract.DecodeIndex(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bomb)
	replaced := false
	for i, x := range ix.Files {
		if x.Kind == contract.Template && x.Dest == "etc/crictl.yaml" {
			if err := os.WriteFile(filepath.Join(root, x.Source), bomb, 0o644); err != nil {
				t.Fatal(err)
			}
			ix.Files[i].SHA256 = hex.EncodeToString(sum[:])
			replaced = true
		}
	}
	if !replaced {
		t.Fatal("no crictl template in the index")
	}
	var buf bytes.Buffer
	if err := ix.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ixPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)
	_, err = Render(Options{Root: root, Choice: choice("crio", "kindnet", "")})
	if err == nil || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if after := snapshot(t, root); after != before {
		t.Errorf("a refused render changed /etc:\n%s", cmp.Diff(before, after))
	}
}
