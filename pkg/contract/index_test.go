package contract

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Owners in the index go to chown(2) at boot, whose uid_t is 32 bits: a
// larger number once wrapped to 0:0 (root), and 4294967295 is (uid_t)-1,
// which chown takes as "leave as is". Both ways in, they are refused.
func TestIndexOwnerRange(t *testing.T) {
	index := func(uid, gid string) string {
		return `{"version": 1, "rules_digest": "", "policy": [], "files": [{"kind": "deferred", "name": "r",
			"source": "usr/share/minikube/deferred/x", "dest": "etc/x", "when": {}, "mode": "0644",
			"uid": ` + uid + `, "gid": ` + gid + `, "sha256": ""}]}`
	}
	tests := []struct {
		uid, gid string
		want     string // "" for accepted
	}{
		{"0", "0", ""},
		{"4294967294", "4294967294", ""},
		{"4294967296", "0", "uid 4294967296"},
		{"0", "4294967296", "gid 4294967296"},
		{"4294967295", "0", "uid 4294967295"},
		{"-1", "0", "uid -1"},
		{"0", "-5", "gid -5"},
	}
	for _, tc := range tests {
		t.Run(tc.uid+":"+tc.gid, func(t *testing.T) {
			ix, err := DecodeIndex(strings.NewReader(index(tc.uid, tc.gid)))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := ix.Encode(&buf); err != nil {
					t.Fatalf("encode: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "etc/x") {
				t.Fatalf("decode: err = %v, want one naming %s and etc/x", err, tc.want)
			}
			// What apply would write is refused as well, before the image.
			bad := &Index{Version: IndexVersion, Files: []IndexFile{{Kind: Deferred, Source: "s", Dest: "etc/x"}}}
			if strings.HasPrefix(tc.want, "uid") {
				bad.Files[0].UID = mustAtoi(t, tc.uid)
			} else {
				bad.Files[0].GID = mustAtoi(t, tc.gid)
			}
			if err := bad.Encode(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("encode: err = %v, want one naming %s", err, tc.want)
			}
		})
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// render reads the index the previous release wrote: no schema field.
// testdata/index-0.1.0.json is what rootfs-trim 0.1.0 (f29323b) wrote for
// examples/minikube; written again, it gains only the schema line.
func TestIndexOfThePreviousRelease(t *testing.T) {
	old, err := os.ReadFile("testdata/index-0.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := DecodeIndex(bytes.NewReader(old))
	if err != nil {
		t.Fatalf("the previous release's index is refused: %v", err)
	}
	var buf bytes.Buffer
	if err := ix.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(old), "{\n", "{\n  \"schema\": \""+IndexSchema+"\",\n", 1)
	want = strings.Replace(want, "\"version\": 1,", fmt.Sprintf("\"version\": %d,", IndexVersion), 1)
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("re-encoded (-want +got):\n%s", diff)
	}
	if _, err := DecodeIndex(&buf); err != nil {
		t.Errorf("this release's index is refused: %v", err)
	}
}

// An index of another schema is refused, naming both: a newer apply's
// index in an image with this render.
func TestIndexOfAnotherSchema(t *testing.T) {
	_, err := DecodeIndex(strings.NewReader(`{"schema": "rootfs-trim/index/v3", "version": 1, "rules_digest": "", "files": [], "policy": []}`))
	if err == nil || !strings.Contains(err.Error(), `"rootfs-trim/index/v3"`) || !strings.Contains(err.Error(), IndexSchema) {
		t.Fatalf("err = %v, want one naming both schemas", err)
	}
}
