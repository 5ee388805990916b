package configkey

import (
	"bytes"
	"os"
	"testing"
)

// FuzzCheck: on any file, a rule's check returns an error or a result;
// never a panic. A changed file reads back, and checking it again
// changes nothing more (Check verifies it), and starts as data does
// before the first changed byte.
func FuzzCheck(f *testing.F) {
	if b, err := os.ReadFile("testdata/containerd.io-config.toml"); err == nil {
		f.Add(b, uint8(0))
	}
	for _, s := range []string{
		"version = 2\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\", 'x',]\n[a]\nb = { c = 1, d = [1, 2] }\n",
		"version = 3\n[[x]]\na = 1\n[plugins.\"a\".b]\nc = \"\"\"x\"\"\"\n",
		`{"cniVersion": "1.0.0", "plugins": [{"type": "bridge"}, "x"], "a": {"b": "\"x\\"}}`,
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(7))
	}
	keys := []Path{{"disabled_plugins"}, {"a", "b", "c"}, {"plugins"}, {"a", "b"}, {"x"}, {"version"}}
	changes := []Change{Remove{Values: []string{"cri", "x"}}, Set{Value: "v"}, Unset{}}
	formats := []Format{Containerd{}, JSON{}}
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		r := Rule{Format: formats[int(pick)%len(formats)], Key: keys[int(pick/2)%len(keys)], Change: changes[int(pick/16)%len(changes)]}
		res, err := r.Check(data)
		if err != nil || res.Out == nil {
			return
		}
		again, err := r.Check(res.Out)
		if err != nil || again.Out != nil {
			t.Fatalf("%s: checked again: %v, changes %q", r, err, again.Out)
		}
		if bytes.Equal(res.Out, data) {
			t.Fatalf("%s: Out is the input", r)
		}
	})
}
