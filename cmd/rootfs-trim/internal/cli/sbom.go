package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/rootfs-trim/rootfs-trim/pkg/manifest"
	"github.com/rootfs-trim/rootfs-trim/pkg/owners"
	"github.com/rootfs-trim/rootfs-trim/pkg/sbom"
)

// sbomFlags are --sbom and --sbom-in, of apply and audit.
type sbomFlags struct {
	out, in string
}

func (s *sbomFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.out, "sbom", "", "write a CycloneDX 1.6 JSON SBOM of the output to `FILE`")
	fs.StringVar(&s.in, "sbom-in", "", "enrich the CycloneDX 1.6 JSON SBOM in `FILE` (the build's) instead of writing one of its own")
}

// start reads --sbom-in, before anything is written, so that a bad one
// stops the run; nil when no --sbom is asked for.
func (s *sbomFlags) start() (*sbom.Doc, error) {
	if s.out == "" {
		if s.in != "" {
			return nil, usagef("--sbom-in needs --sbom")
		}
		return nil, nil
	}
	if s.out == "-" {
		return nil, usagef("--sbom -: the SBOM is written to a temporary file renamed into place once whole; name a file")
	}
	if s.in == "" {
		return sbom.New(), nil
	}
	f, err := os.Open(s.in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := sbom.Enrich(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.in, err)
	}
	return doc, nil
}

// sbomRun is what one run puts into its SBOM.
type sbomRun struct {
	subject string // the output's path
	table   *owners.Table
	db      *owners.DB // the versions and Go modules, when the input's records gave the table
	changes []manifest.Change
}

// write adds what the run knows to doc and writes it to --sbom, through
// a temporary file renamed into place.
func (s *sbomFlags) write(env *Env, doc *sbom.Doc, run sbomRun) error {
	if doc == nil {
		return nil
	}
	doc.AddPackages(packagesOf(run.table, run.db)...)
	doc.AddChanges(run.changes)
	epoch, err := sourceDateEpoch(env)
	if err != nil {
		return err
	}
	t := time.Now()
	if epoch != nil {
		t = *epoch
	}
	opt := sbom.Options{Tool: Version, Time: t, Subject: filepath.Base(run.subject)}
	return writeFileAtomic(s.out, func(w io.Writer) error { return doc.Encode(w, opt) })
}

// packagesOf lists the packages of table, sorted, with the versions db
// records; a Go module (db.Modules) is a Go module's component, with the
// files it owns.
func packagesOf(table *owners.Table, db *owners.DB) []sbom.Package {
	if table == nil {
		return nil
	}
	if db == nil {
		db = &owners.DB{}
	}
	names := table.Packages()
	sort.Strings(names)
	var pkgs []sbom.Package
	for _, n := range names {
		if v, ok := db.Modules[n]; ok {
			pkgs = append(pkgs, sbom.GoModule(n, v, db.ModuleFiles[n]...))
			continue
		}
		pkgs = append(pkgs, sbom.Package{Name: n, Version: db.Versions[n]})
	}
	return pkgs
}
