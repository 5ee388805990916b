package check

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// check reads the lock the previous release wrote (no schema field), so
// that a repository's reviewed lock keeps working; --update-lock adds the
// field. testdata/lock-0.1.0.json is examples/minikube/check.lock as
// rootfs-trim 0.1.0 (f29323b) left it.
func TestLockOfThePreviousRelease(t *testing.T) {
	old, err := os.ReadFile("testdata/lock-0.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ReadLock("testdata/lock-0.1.0.json")
	if err != nil {
		t.Fatalf("the previous release's lock is refused: %v", err)
	}
	var buf bytes.Buffer
	if err := l.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(old), "{\n", "{\n  \"schema\": \""+LockSchema+"\",\n", 1)
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("re-encoded (-want +got):\n%s", diff)
	}
	again := filepath.Join(t.TempDir(), "check.lock")
	if err := os.WriteFile(again, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLock(again); err != nil {
		t.Errorf("this release's lock is refused: %v", err)
	}
}

func TestLockOfAnotherSchema(t *testing.T) {
	p := filepath.Join(t.TempDir(), "check.lock")
	if err := os.WriteFile(p, []byte(`{"schema": "rootfs-trim/lock/v2", "version": 1, "packages": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadLock(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), `"rootfs-trim/lock/v2"`) || !strings.Contains(err.Error(), LockSchema) {
		t.Fatalf("err = %v, want one naming the file and both schemas", err)
	}
}
