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

// Docs are the markdown files whose marked blocks tests run, relative to
// the top of the tree. A block's name is unique across them all, so a
// test names a block and not the file that holds it.
var Docs = []string{"README.md", "docs/recipes.md"}

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
		return "", fmt.Errorf("no block %q in %s", name, strings.Join(Docs, ", "))
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
	for _, doc := range Docs {
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
