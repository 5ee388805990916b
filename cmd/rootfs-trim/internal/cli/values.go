package cli

import (
	"slices"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
	"github.com/rootfs-trim/rootfs-trim/pkg/render"
)

// Values of the flags that take one of a few words, for the checks below.
var (
	reportFormats   = []string{"text", "json", "github", "sarif"}
	recompressModes = []string{"auto", "full"}
)

// flagValues are the words each such flag takes, by flag name, taken from
// the tables its check reads: completions offer exactly these, and
// TestFlagValuesAccepted runs each through its flag's check, so the two
// cannot drift. --cni also takes a manifest path, beyond its words.
var flagValues = map[string][]string{
	"runtime":        contract.Runtimes,
	"cni":            render.CNIValues,
	"report":         reportFormats,
	"archive-format": archiveFormats(),
	"compress":       writableCodecs(),
	"recompress":     recompressModes,
}

// pathValued are the flags of flagValues that take a file name as well:
// --cni a manifest path. The completions offer both.
var pathValued = map[string]bool{"cni": true}

// archiveFormats are --archive-format's values: the archive kinds, then
// the image formats (outputFormat).
func archiveFormats() []string {
	var out []string
	for _, k := range archive.Kinds {
		out = append(out, k.String())
	}
	return append(out, ociimage.LayoutName, ociimage.ArchiveName)
}

// writableCodecs are --compress's values: the codecs a writer exists for.
func writableCodecs() []string {
	var out []string
	for _, c := range compress.Codecs {
		if c.CanWrite() {
			out = append(out, c.String())
		}
	}
	return out
}

// wantOneOf says which words a flag takes, for its error message: "text,
// json, github or sarif".
func wantOneOf(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// checkWord refuses a value of --flag that is not one of words.
func checkWord(flag, v string, words []string) error {
	if !slices.Contains(words, v) {
		return usagef("--%s %q: want %s", flag, v, wantOneOf(words))
	}
	return nil
}

func checkReportFormat(f string) error { return checkWord("report", f, reportFormats) }

func checkRecompress(mode string) error { return checkWord("recompress", mode, recompressModes) }
