package canon

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
)

// JSON writes v to w.
func JSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(names.JSON(buf.Bytes()))
	return err
}
