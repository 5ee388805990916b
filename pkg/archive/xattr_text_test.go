package archive

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestXattrText: capabilities as getcap prints them (the values are what
// setcap wrote, read back with getfattr), text as it is, the rest base64.
func TestXattrText(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{CapabilityXattr, "\x01\x00\x00\x02\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "cap_net_raw=ep"},
		{CapabilityXattr, "\x01\x00\x00\x02\x00\x20\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "cap_net_raw,cap_sys_admin=ep"},
		{CapabilityXattr, "\x00\x00\x00\x02\x00\x04\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "cap_net_bind_service=ip"},
		{CapabilityXattr, "\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "="},
		{CapabilityXattr, "\x01\x00\x00\x03\x00\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xe8\x03\x00\x00", "cap_net_raw=ep [rootid=1000]"},
		{CapabilityXattr, "\x01\x00\x00\x02\x00", "base64:AQAAAgA="},
		{"user.note", "plain text", "plain text"},
		{"user.bin", "a\x00b", "base64:YQBi"},
	}
	for _, tc := range tests {
		if got := XattrText(tc.name, tc.value); got != tc.want {
			t.Errorf("XattrText(%q, %q) = %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
	got := XattrsLine(map[string]string{"user.b": "2", "user.a": "1"})
	if diff := cmp.Diff("user.a=1, user.b=2", got); diff != "" {
		t.Errorf("XattrsLine (-want +got):\n%s", diff)
	}
}
