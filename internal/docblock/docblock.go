// Package docblock finds the code blocks of the user docs that the tests
// run, so that what a user copies from README.md or docs/recipes.md is what
// a test ran: a fenced block that follows a line <!-- block: NAME -->.
package docblock

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Doc is a markdown file whose marked blocks tests run.
type Doc struct {
	Path string // relative to the top of the tree
	// AllMarked: every fenced block of the file is marked, so every one
	// is run (recipes); README.md also has set-up commands no test runs,
	// and ```console examples TestREADMEExamples runs.
	AllMarked bool
}

// Docs are the markdown files whose marked blocks tests run. A block's
// name is unique across them all, so a test names a block and not the
// file that holds it.
var Docs = []Doc{
	{Path: "README.md"},
	{Path: "docs/recipes.md", AllMarked: true},
}

const marker = "<!-- block: "

var markerRE = regexp.MustCompile(`(?m)^<!-- block: (\S+) -->$`)

// Block returns the body of the block named name, from whichever of Docs
// under root holds it.
func Block(root, name string) (string, error) {
	names, err := Names(root)
	if err != nil {
		return "", err
	}
	doc, ok := names[name]
	if !ok {
		var paths []string
		for _, d := range Docs {
			paths = append(paths, d.Path)
		}
		return "", fmt.Errorf("no block %q in %s", name, strings.Join(paths, ", "))
	}
	data, err := os.ReadFile(filepath.Join(root, doc))
	if err != nil {
		return "", err
	}
	return body(doc, string(data), name)
}

// Names maps every block name of Docs under root to the doc that holds
// it; a name used twice is an error, naming both places.
func Names(root string) (map[string]string, error) {
	names := map[string]string{}
	for _, d := range Docs {
		doc := d.Path
		data, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			return nil, err
		}
		for _, m := range markerRE.FindAllStringSubmatch(string(data), -1) {
			if prev, ok := names[m[1]]; ok {
				return nil, fmt.Errorf("block %q is both in %s and in %s", m[1], prev, doc)
			}
			names[m[1]] = doc
		}
	}
	return names, nil
}

// body is the code of the fenced block after the marker of name: the
// lines between the fence with its info string and the closing fence.
func body(doc, text, name string) (string, error) {
	_, after, ok := strings.Cut(text, marker+name+" -->")
	if !ok {
		return "", fmt.Errorf("%s: no block %q", doc, name)
	}
	_, code, ok := strings.Cut(after, "```")
	if !ok {
		return "", fmt.Errorf("%s: block %q has no code", doc, name)
	}
	_, code, _ = strings.Cut(code, "\n") // the info string
	code, _, ok = strings.Cut(code, "```")
	if !ok {
		return "", fmt.Errorf("%s: block %q is not closed", doc, name)
	}
	return code, nil
}

// Unmarked returns the line numbers of the fenced blocks of the doc at
// path under root that no marker line comes right before.
func Unmarked(root, path string) ([]int, error) {
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, err
	}
	var lines []int
	inBlock, prev := false, ""
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "```") {
			if !inBlock && !markerRE.MatchString(prev) {
				lines = append(lines, i+1)
			}
			inBlock = !inBlock
		}
		prev = l
	}
	return lines, nil
}
