package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A go test -json stream as Go 1.26 writes it (trimmed to the events that
// matter): a pass, a skip with its reason, a failed subtest, a package that
// does not build, a long test (said as it starts: make test was once
// silent for minutes), and a package whose TestMain fails outside any test.
const stream = `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestOK"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"m/a","Test":"TestOK","Elapsed":0}
{"Action":"run","Package":"m/a","Test":"TestBoot"}
{"Action":"output","Package":"m/a","Test":"TestBoot","Output":"=== RUN   TestBoot\n"}
{"Action":"output","Package":"m/a","Test":"TestBoot","Output":"    boot_test.go:234: no readable kernel in /boot\n"}
{"Action":"output","Package":"m/a","Test":"TestBoot","Output":"--- SKIP: TestBoot (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestBoot","Elapsed":0}
{"Action":"run","Package":"m/a","Test":"TestT"}
{"Action":"run","Package":"m/a","Test":"TestT/sub"}
{"Action":"output","Package":"m/a","Test":"TestT/sub","Output":"    x_test.go:9: got 1, want 2\n"}
{"Action":"output","Package":"m/a","Test":"TestT/sub","Output":"    --- FAIL: TestT/sub (0.00s)\n"}
{"Action":"fail","Package":"m/a","Test":"TestT/sub","Elapsed":0}
{"Action":"output","Package":"m/a","Test":"TestT","Output":"--- FAIL: TestT (0.00s)\n"}
{"Action":"fail","Package":"m/a","Test":"TestT","Elapsed":0}
{"Action":"output","Package":"m/a","Output":"FAIL\n"}
{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t0.01s\n"}
{"Action":"fail","Package":"m/a","Elapsed":0.01}
{"ImportPath":"m/b [m/b.test]","Action":"build-output","Output":"# m/b [m/b.test]\n"}
{"ImportPath":"m/b [m/b.test]","Action":"build-output","Output":"b/x_test.go:3:1: syntax error\n"}
{"ImportPath":"m/b [m/b.test]","Action":"build-fail"}
{"Action":"start","Package":"m/b"}
{"Action":"output","Package":"m/b","Output":"FAIL\tm/b [build failed]\n"}
{"Action":"fail","Package":"m/b","Elapsed":0,"FailedBuild":"m/b [m/b.test]"}
{"Action":"start","Package":"m/test/boot"}
{"Action":"run","Package":"m/test/boot","Test":"TestBootMinikube"}
{"Action":"run","Package":"m/test/boot","Test":"TestBootMinikube/patched"}
{"Action":"skip","Package":"m/test/boot","Test":"TestBootMinikube/patched","Elapsed":0}
{"Action":"pass","Package":"m/test/boot","Test":"TestBootMinikube","Elapsed":0}
{"Action":"start","Package":"m/c"}
{"Action":"output","Package":"m/c","Output":"setup: no fixture\n"}
{"Action":"output","Package":"m/c","Output":"FAIL\tm/c\t0.00s\n"}
{"Action":"fail","Package":"m/c","Elapsed":0}
`

func TestSummary(t *testing.T) {
	var b strings.Builder
	s := newSummary(&b, "m/")
	if err := s.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	s.print()
	want := `    x_test.go:9: got 1, want 2
    --- FAIL: TestT/sub (0.00s)
--- FAIL: TestT (0.00s)
FAIL	m/a	0.01s
# m/b [m/b.test]
b/x_test.go:3:1: syntax error
FAIL	m/b [build failed]
... test/boot TestBootMinikube: two minikube VMs under QEMU (unchanged and patched), each through two boots and every runtime: about 5 min of CPU each
setup: no fixture
FAIL	m/c	0.00s

Skipped (2):
  a TestBoot: boot_test.go:234: no readable kernel in /boot
  test/boot TestBootMinikube/patched: (no reason given)

Failed packages: a, b (build failed), c

2 passed, 4 failed, 2 skipped
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// The program keeps go test's exit status and ends with the counts line.
func TestExitStatus(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	if err := os.WriteFile(events, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		script   string
		wantCode int
		wantEnd  string
	}{
		{"cat " + events + "; exit 1", 1, "\n2 passed, 4 failed, 2 skipped\n"},
		{"cat " + events + "; exit 3", 3, "\n2 passed, 4 failed, 2 skipped\n"},
		// A failure in the stream fails the run even if go test said 0.
		{"cat " + events, 1, "\n2 passed, 4 failed, 2 skipped\n"},
		{`echo '{"Action":"pass","Package":"m/a","Test":"TestOK"}'`, 0, "\n1 passed, 0 failed, 0 skipped\n"},
	} {
		var stdout, stderr strings.Builder
		code := run([]string{"sh", "-c", tc.script}, &stdout, &stderr)
		if code != tc.wantCode {
			t.Errorf("%s: exit %d, want %d; stderr: %s", tc.script, code, tc.wantCode, stderr.String())
		}
		if !strings.HasSuffix(stdout.String(), tc.wantEnd) {
			t.Errorf("%s: output does not end with %q:\n%s", tc.script, tc.wantEnd, stdout.String())
		}
	}
}
