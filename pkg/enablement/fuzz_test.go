package enablement

import (
	"strings"
	"testing"
)

// FuzzParsePreset: any bytes parse without panic, and every rule kept has
// an action, a line within the file and, when it has instances, a
// template pattern; fnmatch and Query stop on any pattern.
func FuzzParsePreset(f *testing.F) {
	for _, s := range []string{
		"disable containerd.service\n", "enable getty@.service tty1 tty2\n# c\n; c\n",
		"disable [!a-c]*.s?ck?t\nenable *\nignore x\n", "enable\ndisable\n[\n",
	} {
		f.Add(s, "crio.service")
	}
	f.Fuzz(func(t *testing.T, data, unit string) {
		ps := ParsePreset("x.preset", []byte(data))
		lines := strings.Count(data, "\n") + 1
		for _, r := range ps {
			if r.Action < Enable || r.Action > Ignore || r.Line < 1 || r.Line > lines {
				t.Fatalf("rule %+v", r)
			}
			if len(r.Instances) > 0 && !isTemplate(r.Pattern) {
				t.Fatalf("instances on a non-template: %+v", r)
			}
			fnmatch(r.Pattern, unit)
		}
		ps.Query(unit)
	})
}
