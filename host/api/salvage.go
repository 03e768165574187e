package api

import (
	"fmt"
	"path/filepath"

	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
)

// SalvageHome copies every record that can still be read from the store
// of home dir into a new store file at out (store.Salvage), and reports
// what was lost. The store is read under a shared lock, so it waits for a
// writer and fails with an error wrapping store.ErrLocked naming a
// gateway that holds it: stop the gateway first. It changes nothing in
// dir. A missing home fails with an error wrapping ErrNoHome; an existing
// out with one wrapping fs.ErrExist.
func SalvageHome(dir, out string) (store.SalvageReport, error) {
	if err := RequireHome(dir); err != nil {
		return store.SalvageReport{}, err
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return store.SalvageReport{}, fmt.Errorf("salvage: resolve %s: %w", out, err)
	}
	return store.Salvage(filepath.Join(dir, home.DBFile), out, store.Options{})
}
