package api

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
)

// pageProblem reports page damage, which only a restore repairs.
func pageProblem(detail string) apitype.CheckProblem {
	return apitype.CheckProblem{IndexProblem: apitype.IndexProblem{Kind: apitype.ProblemPage, Detail: detail}, Repair: apitype.RepairRestore}
}

// Check verifies the store: the page check, then the indexes if the pages
// are sound.
func (l *Local) Check(ctx context.Context) (apitype.CheckReport, error) {
	f, err := l.file()
	if err != nil {
		return apitype.CheckReport{}, err
	}
	rep := apitype.CheckReport{Path: f.Path(), Problems: []apitype.CheckProblem{}, Quarantine: []apitype.Quarantined{}}
	pages, err := f.PageProblems()
	if err != nil {
		return apitype.CheckReport{}, err
	}
	rep.PagesChecked = true
	for _, p := range pages {
		rep.Problems = append(rep.Problems, pageProblem(p))
	}
	if len(pages) > 0 || ctx.Err() != nil {
		return rep, ctx.Err()
	}
	idx, err := l.engine(ctx).CheckIndexes()
	if err != nil {
		return apitype.CheckReport{}, err
	}
	rep.IndexesChecked = true
	for _, p := range idx {
		rep.Problems = append(rep.Problems, apitype.CheckProblem{IndexProblem: indexProblemOf(p), Repairable: true, Repair: apitype.RepairMaintenance})
	}
	q, err := l.engine(ctx).ListQuarantine()
	if err != nil {
		return apitype.CheckReport{}, err
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
func CheckHome(ctx context.Context, dir string) (apitype.CheckReport, error) {
	if err := RequireHome(dir); err != nil {
		return apitype.CheckReport{}, err
	}
	l, err := OpenLocalReadOnly(dir)
	if errors.Is(err, store.ErrCorrupt) {
		return apitype.CheckReport{Path: filepath.Join(dir, home.DBFile), Problems: []apitype.CheckProblem{pageProblem(err.Error())},
			Quarantine: []apitype.Quarantined{}}, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return apitype.CheckReport{}, fmt.Errorf("no store at %s yet: nothing to check (flowgate creates it on first use): %w", filepath.Join(dir, home.DBFile), err)
	}
	if err != nil {
		return apitype.CheckReport{}, err
	}
	defer l.Close()
	return l.Check(ctx)
}
