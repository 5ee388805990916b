package trim

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/rootfs-trim/rootfs-trim/internal/digest"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/configkey"
	"github.com/rootfs-trim/rootfs-trim/pkg/contract"
	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
)

// maxJudged bounds what audit and check read of a file an edit rule
// matches: config files are kilobytes; a larger one is judged on its
// start, which then fails to decode and is reported.
const maxJudged = 4 << 20

func judgeEdit(r *rules.Rule, data []byte) (configkey.Result, error) { return r.Edit.Check(data) }

// judged reads the data of an entry whose rule judges it with judge
// (ActionSpec.Judge).
func judged(judge func(*rules.Rule, []byte) (configkey.Result, error), r *rules.Rule, data io.Reader) (configkey.Result, error) {
	b, err := io.ReadAll(io.LimitReader(data, maxJudged))
	if err != nil {
		return configkey.Result{}, err
	}
	return judge(r, b)
}

// editedChange says what an edit rule changed: the key, its value before
// and after.
func editedChange(r *rules.Rule, res configkey.Result) string {
	after, _ := r.Edit.Check(res.Out)
	return fmt.Sprintf("%s: %s -> %s", r.Edit.Key, cmp.Or(res.Show(), "(absent)"), cmp.Or(after.Show(), "(absent)"))
}

// placeEdited writes an edited file back at its path with the rule's key
// changed, or as it came when the key is already what the rule makes of
// it (an applied image, or a package that got it right).
func placeEdited(p *planner, c *captured, e *archive.Entry, change manifest.Change) {
	r, at := c.verdict.Rule, c.verdict.Path
	var res configkey.Result
	rd, err := c.data.Reader()
	if err == nil {
		res, err = judged(judgeEdit, r, rd)
	}
	if err == nil && e.Type != archive.TypeRegular {
		err = fmt.Errorf("a %s, not a file", e.Type)
	}
	if err != nil {
		p.problems = append(p.problems, fmt.Sprintf("rule %s (%s): %s: %v", r.Name, r.Pos, names.Quote(at), err))
		return
	}
	if !p.claim(at, "rule "+r.Name) {
		return
	}
	if res.Out == nil {
		p.inject(c, e, change, at)
		p.inj[len(p.inj)-1].unchanged = true
		// Still the earlier apply's work, as its index says.
		if p.old != nil {
			for _, f := range p.old.Files {
				if f.Kind == contract.Edited && f.Source == at && f.SHA256 == c.data.sum {
					p.index.Files = append(p.index.Files, f)
				}
			}
		}
		return
	}
	out := res.Out
	sum := digest.Bytes(out)
	e.Size = int64(len(out))
	change.Reason, change.Size, change.SHA256 = editedChange(r, res), e.Size, sum
	// An earlier apply's record of this file (a package bump brought
	// the key back) gives way to this one.
	p.index.Files = slices.DeleteFunc(p.index.Files, func(f contract.IndexFile) bool { return f.Kind == contract.Edited && f.Source == at })
	// As a stream apply records it (removedOf): the file, its new sum.
	p.index.Files = append(p.index.Files, contract.IndexFile{Kind: contract.Edited, Name: r.Name, Source: at,
		Mode: fmt.Sprintf("%04o", e.Mode), SHA256: sum})
	p.inject(c, e, change, at)
	in := p.inj[len(p.inj)-1]
	in.data = func() (io.Reader, error) { return bytes.NewReader(out), nil }
	in.change.To = ""
}

// editInPlace writes e at its place in a stream's output as its rule
// makes it (writeInPlace), and records the change if there is one: the
// entry keeps its place, header and inode, and only the key's bytes
// differ.
func (c *collector) editInPlace(dec Decision, e *archive.Entry, data io.Reader) error {
	r := dec.Verdict.Rule
	if e.Type != archive.TypeRegular || e.Nlink > 1 {
		return fmt.Errorf("%s: rule %s edits a regular file, not a %s of %d name(s); break the link in the package", c.label(e, dec), r.Name, e.Type, e.Nlink)
	}
	b, err := io.ReadAll(data)
	if err != nil {
		return fmt.Errorf("%s: %w", c.label(e, dec), err)
	}
	res, err := judged(dec.Spec.Judge, r, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: rule %s: %w", c.label(e, dec), r.Name, err)
	}
	out := e.Clone()
	if res.Out != nil {
		b = res.Out
		ch := changeFor(e, dec.Verdict, c.opt.Owners)
		ch.Kind, ch.Reason, ch.Size, ch.SHA256 = dec.Spec.Kind, editedChange(r, res), int64(len(b)), digest.Bytes(b)
		c.changes = append(c.changes, ch)
	}
	out.Size = int64(len(b))
	c.out.files[dec.Path] = true
	return c.writeInPlace(out, b)
}
