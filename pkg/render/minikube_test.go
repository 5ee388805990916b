package render

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// 1-k8s.conflist is byte for byte what minikube's bridge CNI writes for
// the same CIDR (testdata/minikube-bridge.txtar says where those bytes come
// from), so that minikube's own write after render's is a no-op and
// render's record of it stays true.
func TestBridgeMatchesMinikube(t *testing.T) {
	ar, err := txtar.ParseFile(filepath.Join("testdata", "minikube-bridge.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ar.Files) == 0 {
		t.Fatal("no expected files in testdata/minikube-bridge.txtar")
	}
	for _, f := range ar.Files {
		t.Run(f.Name, func(t *testing.T) {
			root := appliedImage(t)
			if _, err := Render(Options{Root: root, Choice: choice("containerd", "bridge", f.Name)}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(root, "etc/cni/net.d/1-k8s.conflist"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(f.Data), string(got)); d != "" {
				t.Errorf("1-k8s.conflist differs from minikube's (-minikube +render):\n%s", d)
			}
		})
	}
}
