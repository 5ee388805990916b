package canon

import (
	"bytes"
	"testing"
)

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, map[string]any{"z": []int{1}, "a": "<&>"}); err != nil {
		t.Fatal(err)
	}
	const want = "{\n  \"a\": \"<&>\",\n  \"z\": [\n    1\n  ]\n}\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
