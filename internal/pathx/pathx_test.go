package pathx

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name, want string
		unsafe     bool
	}{
		{name: ".", want: "."},
		{name: "./etc/x", want: "etc/x"},
		{name: "etc//x/", want: "etc/x"},
		{name: "etc/./x", want: "etc/x"},
		{name: "..a/b..", want: "..a/b.."},
		{name: "a/...", want: "a/..."},
		{name: "a..b/c", want: "a..b/c"},
		{name: "..", unsafe: true},
		{name: "../x", unsafe: true},
		{name: "a/..", unsafe: true},
		{name: "a/../b", unsafe: true},
		{name: "a/b/..", unsafe: true},
		{name: "...//../x", unsafe: true},
		{name: "/etc", unsafe: true},
		{name: "", unsafe: true},
		{name: "a\x00b", unsafe: true},
	}
	for _, tt := range tests {
		got, err := Clean(tt.name)
		if tt.unsafe {
			if !errors.Is(err, ErrUnsafePath) {
				t.Errorf("Clean(%q) = %q, %v; want ErrUnsafePath", tt.name, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Clean(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

// FuzzHasDotDot checks the allocation-free scan against the plain
// definition: some component is "..".
func FuzzHasDotDot(f *testing.F) {
	for _, s := range []string{"..", "a/..", "../a", "a..", "..a/..b", "a/.../b", "x/../", ".../..", "./.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		want := slices.Contains(strings.Split(name, "/"), "..")
		if got := hasDotDot(name); got != want {
			t.Errorf("hasDotDot(%q) = %v, want %v", name, got, want)
		}
	})
}

// FuzzClean holds the one-pass isClean to its definition: a name is clean
// when Clean accepts it and returns it unchanged.
func FuzzClean(f *testing.F) {
	for _, s := range []string{".", "./a", "a/", "a//b", "a/./b", "a/../b", "..", "/a", "a\x00", "a/b.c/...", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		var want bool
		if !strings.HasPrefix(name, "/") && !strings.Contains(name, "\x00") && name != "" && !hasDotDot(name) {
			want = path.Clean(name) == name
		}
		if got := isClean(name); got != want {
			t.Errorf("isClean(%q) = %v, want %v", name, got, want)
		}
	})
}

func TestResolveLink(t *testing.T) {
	tests := []struct{ name, target, want string }{
		{"etc/systemd/system/docker.service", "/usr/lib/systemd/system/docker.service", "usr/lib/systemd/system/docker.service"},
		{"etc/systemd/system/docker.service", "../../../usr/lib/systemd/system/docker.service", "usr/lib/systemd/system/docker.service"},
		{"etc/systemd/system/docker.service", "../../../../../opt/docker.service", "opt/docker.service"},
		{"etc/systemd/system/docker.service", "/usr/lib/systemd/system/../../../../opt/x", "opt/x"},
		{"etc/systemd/system/a.service", "b.service", "etc/systemd/system/b.service"},
		{"etc/systemd/system/a.service", "//dev/./null", "dev/null"},
		{"x", "..", "."},
		{"x", "/", "."},
	}
	for _, tc := range tests {
		if got := ResolveLink(tc.name, tc.target); got != tc.want {
			t.Errorf("ResolveLink(%q, %q) = %q, want %q", tc.name, tc.target, got, tc.want)
		}
	}
}
