package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/check"
	"github.com/rootfs-trim/rootfs-trim/pkg/iso9660"
	"github.com/rootfs-trim/rootfs-trim/pkg/ociimage"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// TestMessageBuilders: each builder of a message or a report line, given
// a string an input chose, shows it so that no line of what it writes is
// a workflow command (names.Command); where the builder quotes (want),
// the string is in the message quoted whole, on one line.
func TestMessageBuilders(t *testing.T) {
	hostile := append([]string{
		"linux\n::error::from a config's os",
		"0123\n##[error]a layer name/layer.tar",
		"  ::warning::indented",
		"x\r::add-mask::y",
	}, hostileNames...)
	tests := []struct {
		name  string
		build func(h string) string
		quote bool // the builder shows h as names.Quote does
	}{
		{"iso9660.Error", func(h string) string {
			return shownError(&iso9660.Error{Path: h, Msg: "directories nested deeper than 64"})
		}, true},
		{"a raw message, line by line", func(h string) string {
			return shownError(errors.New("rootfs-trim's own line\n" + h + "\nanother"))
		}, false},
		{"wrapped iso9660.Error", func(h string) string {
			return shownError(fmt.Errorf("initrd: %w", &iso9660.Error{Path: h, Msg: "x"}))
		}, true},
		{"note", func(h string) string {
			var buf bytes.Buffer
			noteTo(&Env{Stderr: &buf}, "apply")(h)
			return buf.String()
		}, false},
		{"layer note", func(h string) string {
			return placeNote(trim.Finding{Layer: &ociimage.Layer{Index: 1, Digest: "sha256:0", CreatedBy: h}})
		}, false},
		{"finding message", func(h string) string {
			return findingMessage(trim.Finding{Path: h, Package: "p", Input: "in", Rule: "r", Action: "defer", Reason: h})
		}, true},
		{"check text with a diff", func(h string) string {
			var buf bytes.Buffer
			res := &check.Result{Findings: []check.Finding{{
				Finding: trim.Finding{Path: h, Package: "p", Severity: rules.Error, Check: check.CheckContentChanged, Reason: "changed"},
				Diff:    "--- locked/x\n+++ input/x\n@@ -1,2 +1,2 @@\n " + strings.ReplaceAll(h, "\n", "\n ") + "\n-a\n+b\n",
			}}}
			if err := printCheck(&buf, "text", &rules.Set{}, res); err != nil {
				t.Fatal(err)
			}
			return buf.String()
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, h := range hostile {
				out := tc.build(h)
				for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
					if names.Command(line) {
						t.Errorf("%q: a workflow command in %q", h, line)
					}
				}
				if tc.quote && !strings.Contains(out, names.Quote(h)) {
					t.Errorf("%q: not shown quoted (%s) in %q", h, names.Quote(h), out)
				}
			}
		})
	}
}

// TestRuntimeNoteWithoutPolicy: a runtime note of rules with no
// boot_runtime policy has no rule to name; audit's text and github lines
// say so instead of an empty rule, and a policy's note keeps its rule.
func TestRuntimeNoteWithoutPolicy(t *testing.T) {
	for _, tc := range []struct {
		rule, text, github string
	}{
		{"", "no boot_runtime policy", "): no boot_runtime policy: crio.service"},
		{"one-cri-endpoint", "rule one-cri-endpoint (allowed) -> crio.service", "): rule one-cri-endpoint: crio.service"},
	} {
		f := trim.Finding{Path: "usr/lib/systemd/system/crio.service", Package: "cri-o", Input: "in", Rule: tc.rule, Policy: tc.rule,
			Action: "allowed", Target: "crio.service", Check: trim.CheckRuntimeAllowed, Severity: rules.Note, Reason: "crio.service (crio) starts at boot"}
		var buf bytes.Buffer
		if err := printFindings(&buf, "text", &rules.Set{}, &trim.AuditResult{Findings: []trim.Finding{f}}, nil, 1); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), tc.text) || strings.Contains(buf.String(), "new offender") {
			t.Errorf("rule %q: text report lacks %q:\n%s", tc.rule, tc.text, buf.String())
		}
		if msg := findingMessage(f); !strings.Contains(msg, tc.github) {
			t.Errorf("rule %q: message %q lacks %q", tc.rule, msg, tc.github)
		}
	}
}
