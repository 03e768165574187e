package api

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/store"
)

// ErrNoHome is returned by OpenLocalReader for a home that does not exist:
// reading one creates nothing, so a mistyped --home fails instead of
// answering from an empty home it made.
var ErrNoHome = errors.New("no flowgate home")

// OpenLocalReader opens the store in home dir for reading only and returns a
// Local client over it, for the commands that only read when no gateway
// runs. The file is opened read-only under a shared lock, so several of
// them run at once, and nothing in dir is created or changed: it works on
// a home and store no one may write. What it shows is current all the
// same: the runner's reconcile is previewed in memory (see
// runner.Preview), so a task whose shim died shows as lost, and the next
// writer records it. Every call that would change a record fails with an
// error wrapping store.ErrReadOnly.
//
// A home dir that does not exist fails with an error wrapping ErrNoHome;
// an existing one that holds no store yet reads as empty. A store a
// writer holds longer than the lock timeout fails with an error wrapping
// store.ErrLocked.
func OpenLocalReader(dir string) (*Local, error) {
	base, err := store.OpenReadOnly(filepath.Join(dir, home.DBFile), store.Options{})
	var st *store.Overlay
	switch {
	case err == nil:
		st = store.NewOverlay(base)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	default:
		if err := RequireHome(dir); err != nil {
			return nil, err
		}
		st = store.NewOverlay(nil) // a home that holds nothing yet
	}
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		st.Close()
		return nil, err
	}
	// A failure leaves the records as stored: consistent, if stale.
	_ = runner.Preview(context.Background(), eng, dir)
	st.Seal()
	l := NewLocal(st, eng, dir, nil)
	if base != nil {
		l.space = base.Space
	}
	return l, nil
}

// RequireHome returns nil if home dir is a directory, and an error
// wrapping ErrNoHome, saying how to make one, if there is nothing at dir.
// Commands that only read call it rather than create a home.
func RequireHome(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w at %s (create one with `flowgate gateway` or any command that runs work)", ErrNoHome, dir)
	case err != nil:
		return fmt.Errorf("flowgate home %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("flowgate home %s is not a directory; pass another --home", dir)
	}
	return nil
}
