package gateway

import (
	"context"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/store"
)

// The work commands do on a home's store with no gateway serving it,
// kept here so that what opens, copies and compacts the store file is
// the gateway's code, not the command's.

// BackupHome writes a consistent copy of the store of home dir, which s
// serves (a running gateway, or the file opened read-only), to path
// (api.BackupFile); the store file itself is never overwritten. With
// force false an existing path is refused (an error wrapping
// fs.ErrExist).
func BackupHome(ctx context.Context, s api.Storage, dir, path string, force bool) (api.BackupResult, error) {
	return api.BackupFile(ctx, s, path, store.BackupOptions{Force: force, Live: StorePath(dir)})
}

// CompactIfRequested compacts the store file of home dir when an applying
// maintenance pass asked for it, and reports whether it did, with the
// file's sizes before and after (maintenance.CompactIfRequested). Call it
// only where nothing holds the store: owner describes the caller to
// anyone who finds it locked.
func CompactIfRequested(dir, owner string) (done bool, before, after int64, err error) {
	return maintenance.CompactIfRequested(dir, StorePath(dir), store.Options{Owner: owner})
}
