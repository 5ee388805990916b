package check

import (
	"fmt"
	"strings"
)

// diffContext is the lines of context around a change, diff -u's default.
const diffContext = 3

// maxDiffCells bounds the longest-common-subsequence table (4 bytes a
// cell, 16 MiB): two 64 KiB files of one-character lines would otherwise
// need 4 G cells. Beyond it, what lies between the common start and end
// is shown as removed and added whole.
const maxDiffCells = 1 << 22

type opKind byte

const (
	opKeep opKind = ' '
	opDel  opKind = '-'
	opIns  opKind = '+'
)

type diffOp struct {
	kind opKind
	line string // with its "\n", unless it is a last line without one
}

// unifiedDiff is the unified diff of a and b as GNU diff -u and git print
// it: hunks of changes with diffContext lines of context, two hunks that
// close merged, each change's removed lines before its added ones, and
// "\ No newline at end of file" after a last line without one. The
// headers carry names, no dates. Equal texts give "".
func unifiedDiff(aName, bName, a, b string) string {
	ops := editScript(splitLines(a), splitLines(b))
	var out strings.Builder
	aLine, bLine := 0, 0 // lines of a and b before ops[i]
	for i := 0; i < len(ops); {
		if ops[i].kind == opKeep {
			aLine, bLine, i = aLine+1, bLine+1, i+1
			continue
		}
		start := max(0, i-diffContext)
		end := hunkEnd(ops, i)
		if out.Len() == 0 {
			fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
		}
		aFirst, bFirst := aLine-(i-start), bLine-(i-start)
		aLen, bLen := 0, 0
		for _, op := range ops[start:end] {
			if op.kind != opIns {
				aLen++
			}
			if op.kind != opDel {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aFirst, aLen), hunkRange(bFirst, bLen))
		for _, op := range ops[start:end] {
			out.WriteByte(byte(op.kind))
			out.WriteString(strings.TrimSuffix(op.line, "\n"))
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\n\\ No newline at end of file")
			}
			out.WriteByte('\n')
		}
		for _, op := range ops[i:end] {
			if op.kind != opIns {
				aLine++
			}
			if op.kind != opDel {
				bLine++
			}
		}
		i = end
	}
	return out.String()
}

// hunkEnd returns where the hunk whose first change is ops[i] ends: after
// the context of its last change, taking in every later change that
// begins within twice the context (the two hunks' contexts would meet).
func hunkEnd(ops []diffOp, i int) int {
	last := i // the last change of the hunk
	for j := i; j < len(ops); j++ {
		if ops[j].kind != opKeep {
			last = j
			continue
		}
		if j-last > 2*diffContext {
			break
		}
	}
	return min(len(ops), last+1+diffContext)
}

// hunkRange is diff -u's "start,length": the length left out when it is
// 1, and an empty range starting at the line before it.
func hunkRange(first, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", first)
	case 1:
		return fmt.Sprint(first + 1)
	}
	return fmt.Sprintf("%d,%d", first+1, n)
}

// editScript is a shortest edit script from a to b: the common start and
// end kept, a longest common subsequence of the rest, and within each run
// of changes the removals first, as diff prints them.
func editScript(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []diffOp
	for _, l := range a[:pre] {
		ops = append(ops, diffOp{opKeep, l})
	}
	ops = append(ops, middleScript(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, diffOp{opKeep, l})
	}
	return removalsFirst(ops)
}

// middleScript is the LCS walk of a and b, which share no first or last
// line, preferring a removal where removing and adding are as good.
func middleScript(a, b []string) []diffOp {
	n, m := len(a), len(b)
	var ops []diffOp
	if n*m > maxDiffCells {
		for _, l := range a {
			ops = append(ops, diffOp{opDel, l})
		}
		for _, l := range b {
			ops = append(ops, diffOp{opIns, l})
		}
		return ops
	}
	// lcs[i*(m+1)+j]: the longest common subsequence of a[i:] and b[j:].
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return lcs[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := max(at(i+1, j), at(i, j+1))
			if a[i] == b[j] {
				v = at(i+1, j+1) + 1
			}
			lcs[i*(m+1)+j] = v
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{opKeep, a[i]})
			i, j = i+1, j+1
		case i < n && (j == m || at(i+1, j) >= at(i, j+1)):
			ops = append(ops, diffOp{opDel, a[i]})
			i++
		default:
			ops = append(ops, diffOp{opIns, b[j]})
			j++
		}
	}
	return ops
}

// removalsFirst reorders each run of changes: its removals, then its
// additions.
func removalsFirst(ops []diffOp) []diffOp {
	out := make([]diffOp, 0, len(ops))
	for i := 0; i < len(ops); {
		if ops[i].kind == opKeep {
			out = append(out, ops[i])
			i++
			continue
		}
		j := i
		for j < len(ops) && ops[j].kind != opKeep {
			j++
		}
		for _, op := range ops[i:j] {
			if op.kind == opDel {
				out = append(out, op)
			}
		}
		for _, op := range ops[i:j] {
			if op.kind == opIns {
				out = append(out, op)
			}
		}
		i = j
	}
	return out
}

// splitLines splits s after each "\n"; a last line without one is kept
// as it is, so that it differs from the same text with one.
func splitLines(s string) []string {
	var lines []string
	for s != "" {
		n := strings.IndexByte(s, '\n') + 1
		if n == 0 {
			n = len(s)
		}
		lines = append(lines, s[:n])
		s = s[n:]
	}
	return lines
}
