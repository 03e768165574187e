package gateway

import (
	"context"
	"fmt"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/migrate"
)

// StoreSpec names a store by URL (bolt://PATH, etcd://HOSTS/PREFIX) with
// the connection settings of an etcd one (backend.Spec); the zero value
// is the home's bbolt file. Config.Store is one.
type StoreSpec = backend.Spec

// MigrateReport is what MigrateStore copied (migrate.Report).
type MigrateReport = migrate.Report

// MigrateStore copies every record of the store from names into the
// empty store to names, each key with its revision, and verifies the
// copy (migrate.Copy). owner describes the caller to anyone who finds
// the target locked. Nothing may write the source meanwhile: stop every
// gateway first. A target that holds any key is refused, unwritten.
func MigrateStore(ctx context.Context, from, to StoreSpec, owner string) (MigrateReport, error) {
	src, err := backend.OpenReadOnly(from)
	if err != nil {
		return MigrateReport{}, fmt.Errorf("open the source %s: %w", from.URL, err)
	}
	defer src.Close()
	dst, err := backend.Open(to, store.Options{Owner: owner})
	if err != nil {
		return MigrateReport{}, fmt.Errorf("open the target %s: %w", to.URL, err)
	}
	defer dst.Close()
	return migrate.Copy(ctx, dst, src, migrate.Options{})
}
