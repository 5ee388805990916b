package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rootfs-trim/rootfs-trim/internal/canon"
	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/rules"
	"github.com/rootfs-trim/rootfs-trim/pkg/trim"
)

// SARIF 2.1.0 (OASIS), the subset rootfs-trim writes: one run, the rules
// and policy items findings name, a result per finding at the rule file's
// line. GitHub code scanning reads it (docs/commands.md#sarif).

const (
	sarifVersion = "2.1.0"
	sarifSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	// sarifToolURI is the project's page (Buildroot's Config.in names it).
	sarifToolURI = "https://github.com/rootfs-trim/rootfs-trim"
	// sarifFingerprint keys the partial fingerprint that tells findings
	// at one rule line apart (two packages, two paths).
	sarifFingerprint = "rootfsTrimFinding/v1"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool struct {
		Driver struct {
			Name            string      `json:"name"`
			InformationURI  string      `json:"informationUri"`
			Version         string      `json:"version"`
			SemanticVersion string      `json:"semanticVersion,omitempty"`
			Rules           []sarifRule `json:"rules"`
		} `json:"driver"`
	} `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
	FullDescription  sarifMessage `json:"fullDescription"`
	HelpURI          string       `json:"helpUri,omitempty"`
	// Help: GitHub code scanning wants it on every rule.
	Help sarifMessage `json:"help"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          sarifProperties   `json:"properties"`
}

// sarifLocation is a finding's rule file and line (no region for line 0),
// and, as a logical location, the offending path in the image: the rule
// file is where to fix it, the image path is what offends.
type sarifLocation struct {
	PhysicalLocation struct {
		ArtifactLocation struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region struct {
			StartLine int `json:"startLine"`
		} `json:"region,omitzero"`
	} `json:"physicalLocation"`
	LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
}

type sarifLogicalLocation struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifProperties are rootfs-trim's own facts about a result.
type sarifProperties struct {
	Check   string `json:"check"`
	Package string `json:"package,omitempty"`
	Input   string `json:"input,omitempty"`
	Path    string `json:"path,omitempty"`
	Action  string `json:"action,omitempty"`
	Target  string `json:"target,omitempty"`
	Key     string `json:"key,omitempty"`
	Value   string `json:"value,omitempty"`
}

// printSARIF writes findings of cmd (audit, check, diff) as a SARIF log;
// message gives each result's text (audit's and check's differ).
func printSARIF(w io.Writer, cmd string, set *rules.Set, findings []trim.Finding, message func(trim.Finding) string) error {
	index := map[string]int{} // a rule's place in the driver's rules, by ID
	for _, f := range findings {
		index[sarifRuleID(cmd, f)] = 0
	}
	run := sarifRun{Results: make([]sarifResult, 0, len(findings))}
	d := &run.Tool.Driver
	d.Name, d.InformationURI, d.Version, d.SemanticVersion = "rootfs-trim", sarifToolURI, Version, Version
	d.Rules = []sarifRule{} // [], not null, when nothing is found
	for i, id := range slices.Sorted(maps.Keys(index)) {
		index[id] = i
		d.Rules = append(d.Rules, describeRule(cmd, set, id))
	}
	for _, f := range findings {
		id := sarifRuleID(cmd, f)
		run.Results = append(run.Results, sarifResult{
			RuleID: id, RuleIndex: index[id], Level: f.Severity.String(),
			Message:             sarifMessage{message(f)},
			Locations:           sarifLocations(f),
			PartialFingerprints: map[string]string{sarifFingerprint: sarifKey(f, id)},
			Properties:          sarifProperties{f.Check, f.Package, f.Input, f.Path, f.Action, f.Target, f.Key, f.Value},
		})
	}
	return canon.JSON(w, sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}})
}

// checkResultMessage is a check finding's SARIF message, as check's text
// line says it (audit's findingMessage fits only audit's kinds).
func checkResultMessage(f trim.Finding) string {
	msg := "[" + f.Check + "] package " + names.Quote(f.Package)
	if f.Rule != "" {
		msg += ", rule " + f.Rule
	}
	if f.Path != "" {
		msg += ": " + names.Quote(f.Path)
	}
	if f.Input != "" {
		msg += " (in " + names.Quote(f.Input) + ")"
	}
	return msg + ": " + oneLine(f.Reason)
}

// sarifRuleID is the rule or policy item a finding names (one namespace:
// rules.Load refuses a name used twice), else CMD/CHECK, for check's
// package-level findings. A joint finding (trim.Finding.Joint: several
// packages' rules, the owner unknown) is its policy item's, which says
// what is true of them all.
func sarifRuleID(cmd string, f trim.Finding) string {
	switch {
	case f.Joint() && f.Policy != "":
		return f.Policy
	case f.Rule != "":
		return f.Rule
	case f.Policy != "":
		return f.Policy
	}
	return cmd + "/" + f.Check
}

// describeRule describes id from the rule set; set is nil where the
// inputs carry no rules (diff of two manifests).
func describeRule(cmd string, set *rules.Set, id string) sarifRule {
	if set == nil {
		full := sarifMessage{"rule " + id + " of the rule set the inputs were trimmed with (rootfs-trim " + cmd + ")"}
		return sarifRule{ID: id, ShortDescription: sarifMessage{"rootfs-trim rule " + id}, FullDescription: full, Help: full}
	}
	for _, r := range set.Rules() {
		if r.Name == id {
			of := "of package " + r.Package
			if r.Package == rules.AnyPackage {
				of = "for any package"
			}
			return ruleDescriptor(id, "rule "+id+" "+of+": "+r.Action.String(), r.Reason, r.Link, r.Pos)
		}
	}
	for _, p := range set.Policy {
		if p.Name == id {
			return ruleDescriptor(id, "policy "+id+": files no package may leave in the image", p.Reason, p.Link, p.Pos)
		}
	}
	check := strings.TrimPrefix(id, cmd+"/")
	full := sarifMessage{"A package-level finding of rootfs-trim " + cmd + " [" + check + "]: see '" + cmd + "' in rootfs-trim's docs/commands.md."}
	return sarifRule{ID: id, ShortDescription: sarifMessage{"rootfs-trim " + cmd + " [" + check + "]"}, FullDescription: full, Help: full}
}

func ruleDescriptor(id, short, reason, link string, pos rules.Pos) sarifRule {
	d := sarifRule{ID: id, ShortDescription: sarifMessage{short}, FullDescription: sarifMessage{short}, HelpURI: helpURI(link)}
	help := "Defined at " + relPath(pos.File) + ":" + strconv.Itoa(pos.Line) + "."
	if r := oneLine(reason); r != "" {
		d.FullDescription = sarifMessage{r}
		help = r + "\n\n" + help
	}
	if d.HelpURI != "" {
		help += "\n\nSee " + d.HelpURI
	}
	d.Help = sarifMessage{help}
	return d
}

// helpURI is a rule's link when it is an absolute URI, as SARIF wants.
func helpURI(link string) string {
	if u, err := url.Parse(link); err == nil && u.IsAbs() {
		return link
	}
	return ""
}

// sarifLocations puts a finding at its rule file's line; one with no
// position (a package missing from the lock, say) has no location.
func sarifLocations(f trim.Finding) []sarifLocation {
	if f.Pos.File == "" {
		return nil
	}
	var loc sarifLocation
	loc.PhysicalLocation.ArtifactLocation.URI = artifactURI(relPath(f.Pos.File))
	loc.PhysicalLocation.Region.StartLine = max(f.Pos.Line, 0)
	if f.Path != "" {
		loc.LogicalLocations = []sarifLogicalLocation{{FullyQualifiedName: f.Path, Kind: "resource"}}
	}
	return []sarifLocation{loc}
}

// artifactURI is a relative URI reference for a path under the working
// directory (GitHub resolves it against the repository's root), a file:
// URI otherwise.
func artifactURI(p string) string {
	u := url.URL{Path: filepath.ToSlash(p)}
	if filepath.IsAbs(p) {
		u.Scheme = "file"
	}
	return u.String()
}

// sarifKey identifies a finding across runs: what offends and what
// handles it, not where the input was read from.
func sarifKey(f trim.Finding, id string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{f.Check, id, f.Package, f.Path, f.Target}, "\x00")))
	return hex.EncodeToString(sum[:16])
}
