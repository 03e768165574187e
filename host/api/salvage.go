package api

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
)

// SalvageHome copies every record that can still be read from the store
// of home dir into a new store file at out (store.Salvage), and reports
// what was lost, naming the lost records the copied indexes point at. The
// store is read under a shared lock, so it waits for a writer and fails
// with an error wrapping store.ErrLocked naming a gateway that holds it:
// stop the gateway first. It changes nothing in dir. A missing home fails
// with an error wrapping ErrNoHome; an existing out with one wrapping
// fs.ErrExist. ctx bounds the reads of the new store.
func SalvageHome(ctx context.Context, dir, out string) (apitype.SalvageResult, error) {
	if err := RequireHome(dir); err != nil {
		return apitype.SalvageResult{}, err
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return apitype.SalvageResult{}, fmt.Errorf("salvage: resolve %s: %w", out, err)
	}
	rep, err := store.Salvage(filepath.Join(dir, home.DBFile), out, store.SalvageOptions{Valid: engine.CheckRecord})
	if err != nil {
		return apitype.SalvageResult{}, err
	}
	missing, err := missingRecords(ctx, rep.Path)
	if err != nil {
		return apitype.SalvageResult{}, fmt.Errorf("salvage: %s is written, but its indexes could not be checked: %w", rep.Path, err)
	}
	return apitype.SalvageResult{SalvageReport: salvageReportOf(rep), Missing: missing}, nil
}

// missingRecords returns the records that index entries of the store at
// path name but that it does not hold.
func missingRecords(ctx context.Context, path string) ([]string, error) {
	st, err := store.OpenReadOnly(path, store.Options{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		return nil, err
	}
	problems, err := eng.WithContext(ctx).CheckIndexes()
	if err != nil {
		return nil, err
	}
	missing := []string{}
	err = st.View(ctx, func(tx store.ReadTx) error {
		for _, p := range problems {
			if p.Kind != engine.IndexOrphan || p.Record == "" {
				continue
			}
			// An entry the page scan brought back from an older page can
			// name a record that is here, with another status.
			switch _, err := tx.Get(p.Record); {
			case errors.Is(err, store.ErrKeyNotFound):
				missing = append(missing, p.Record)
			case err != nil && !errors.Is(err, store.ErrCorrupt): // a damaged record is here
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(missing)
	return slices.Compact(missing), nil
}
