package api

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
)

// ProblemPage is the kind of a CheckProblem for damage bbolt's page check
// found (or a file too damaged to open). The other kinds are the engine's
// index problem kinds: engine.IndexMissing, engine.IndexOrphan and
// engine.RecordDamaged.
const ProblemPage = "page"

// Repairs a CheckProblem can name.
const (
	// RepairMaintenance: `flowgate tasks maintenance --apply` rewrites
	// the index entry (engine.RepairIndexes), or moves the damaged record
	// to the quarantine (engine.Quarantine).
	RepairMaintenance = "flowgate tasks maintenance --apply"
	// RepairRestore: nothing in flowgate repairs it; restore the store
	// from a backup (flowgate backup) while no gateway runs.
	RepairRestore = "restore from a backup"
)

// CheckReport is what `flowgate check` prints.
type CheckReport struct {
	// Path is the store file checked.
	Path string `json:"path"`
	// PagesChecked is true when bbolt's page check ran over the whole
	// file; false when the file was too damaged to open.
	PagesChecked bool `json:"pages_checked"`
	// IndexesChecked is true when the indexes were compared with the
	// records; false when page damage stopped the check first (reading
	// damaged pages could fail or mislead).
	IndexesChecked bool `json:"indexes_checked"`
	// Problems is what the check found, page damage first; [] for a sound
	// store.
	Problems []CheckProblem `json:"problems"`
	// Quarantine lists the damaged records maintenance moved out of the
	// way (apitype.Quarantined, oldest key first; [] when none). They are
	// kept for a person to look at, not problems: a store with only
	// these is clean.
	Quarantine []apitype.Quarantined `json:"quarantine"`
}

// Clean reports whether the check ran in full and found nothing.
func (r CheckReport) Clean() bool {
	return r.PagesChecked && r.IndexesChecked && len(r.Problems) == 0
}

// Repairable counts the problems `flowgate tasks maintenance --apply`
// repairs.
func (r CheckReport) Repairable() int {
	n := 0
	for _, p := range r.Problems {
		if p.Repairable {
			n++
		}
	}
	return n
}

// CheckProblem is one problem a check found: an engine index problem
// (Kind engine.IndexMissing, IndexOrphan or RecordDamaged), or page
// damage (Kind ProblemPage, with no Key or Record), and what repairs it.
type CheckProblem struct {
	engine.IndexProblem
	// Repairable is true when `flowgate tasks maintenance --apply` repairs
	// the problem; Repair says how to repair it either way.
	Repairable bool   `json:"repairable"`
	Repair     string `json:"repair"`
}

// pageProblem reports page damage, which only a restore repairs.
func pageProblem(detail string) CheckProblem {
	return CheckProblem{IndexProblem: engine.IndexProblem{Kind: ProblemPage, Detail: detail}, Repair: RepairRestore}
}

// Check verifies the store: the page check, then the indexes if the pages
// are sound.
func (l *Local) Check(ctx context.Context) (CheckReport, error) {
	f, err := l.file()
	if err != nil {
		return CheckReport{}, err
	}
	rep := CheckReport{Path: f.Path(), Problems: []CheckProblem{}, Quarantine: []apitype.Quarantined{}}
	pages, err := f.PageProblems()
	if err != nil {
		return CheckReport{}, err
	}
	rep.PagesChecked = true
	for _, p := range pages {
		rep.Problems = append(rep.Problems, pageProblem(p))
	}
	if len(pages) > 0 || ctx.Err() != nil {
		return rep, ctx.Err()
	}
	idx, err := l.eng.WithContext(ctx).CheckIndexes()
	if err != nil {
		return CheckReport{}, err
	}
	rep.IndexesChecked = true
	for _, p := range idx {
		rep.Problems = append(rep.Problems, CheckProblem{IndexProblem: p, Repairable: true, Repair: RepairMaintenance})
	}
	q, err := l.eng.WithContext(ctx).ListQuarantine()
	if err != nil {
		return CheckReport{}, err
	}
	if q != nil {
		rep.Quarantine = quarantinedOf(q)
	}
	return rep, nil
}

// CheckHome checks the store of home dir with no gateway running: it opens
// the file read-only (OpenLocalReadOnly), so that a damaged file is never
// written to, and runs Local.Check. A file too damaged to open is reported
// as page damage, not as an error; a missing home is an error wrapping
// ErrNoHome, and a home without a store one wrapping fs.ErrNotExist.
func CheckHome(ctx context.Context, dir string) (CheckReport, error) {
	if err := RequireHome(dir); err != nil {
		return CheckReport{}, err
	}
	l, err := OpenLocalReadOnly(dir)
	if errors.Is(err, store.ErrCorrupt) {
		return CheckReport{Path: filepath.Join(dir, home.DBFile), Problems: []CheckProblem{pageProblem(err.Error())},
			Quarantine: []apitype.Quarantined{}}, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return CheckReport{}, fmt.Errorf("no store at %s yet: nothing to check (flowgate creates it on first use): %w", filepath.Join(dir, home.DBFile), err)
	}
	if err != nil {
		return CheckReport{}, err
	}
	defer l.Close()
	return l.Check(ctx)
}
