package enablement

import "testing"

func TestFnmatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "crio.service", true},
		{"c*.service", "crio.service", true},
		{"c*.service", "docker.service", false},
		{"docker.s?ck?t", "docker.socket", true},
		{"[b-d]*", "docker.socket", true},
		{"[!b-d]*", "docker.socket", false},
		{"[^d]ocker*", "docker.socket", false},
		{"[]x]y", "]y", true},
		{"a\\?", "a?", false},
		{"a\\*", "a\\*", true},
		{"[abc", "[abc", true},
		{"*.service", ".service", true},
		{"", "", true},
		{"", "x", false},
	} {
		if got := fnmatch(tc.pattern, tc.name); got != tc.want {
			t.Errorf("fnmatch(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}
