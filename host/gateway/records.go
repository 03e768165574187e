package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// HoldTTL is the lease, in seconds, by which a gateway holds an etcd
// installation: a gateway that dies lets go of it within this time.
const HoldTTL = 10

// records is the gateway's store with what the gateway asks of it beyond
// store.Store.
type records struct {
	store.Store
	health func() store.WriteHealth
	// space measures the store file; nil for a store that is no local file.
	space func() (store.Space, error)
	// hold is this gateway's claim on an etcd installation; nil on bbolt,
	// whose file lock does that job.
	hold *etcd.Held
	// closing is set once close begins: the hold ending is then no news.
	closing atomic.Bool
}

// close lets go of the installation and closes the store.
func (r *records) close() error {
	r.closing.Store(true)
	var err error
	if r.hold != nil {
		err = r.hold.Release()
	}
	return errors.Join(err, r.Close())
}

// watchHold logs an error if the gateway loses its hold on the etcd
// installation while it runs: its lease ended (etcd unreachable for
// longer than HoldTTL, or the lease revoked), so another gateway may start
// on the same prefix.
func (g *Gateway) watchHold(r *records, url string) {
	<-r.hold.Done()
	if !r.closing.Load() {
		g.log.Error("lost the hold on the etcd installation (its lease ended); another gateway may now start on it: stop this gateway and restart it once etcd is reachable", "store", url)
	}
}

// storeSpec is the store this gateway uses: Config.Store, else the config
// file's store section; an empty URL means the home's bbolt file.
func (g *Gateway) storeSpec() backend.Spec {
	if g.cfg.Store.URL != "" {
		return g.cfg.Store
	}
	return g.cfg.File.Store.Spec()
}

// openRecords opens the store storeSpec names. The home's bbolt file is
// compacted first when a maintenance pass asked for it. An etcd
// installation is held for this gateway (see etcd.Store.Hold): a second
// gateway on the same prefix fails with an error wrapping
// ErrAlreadyRunning that names the first.
func (g *Gateway) openRecords(ctx context.Context, sopts store.Options) (*records, error) {
	spec := g.storeSpec()
	if spec.URL == "" {
		dbPath := filepath.Join(g.cfg.Home, home.DBFile)
		// A maintenance pass asked for a compaction: now, before anything
		// holds the store, is when bbolt can do it.
		if done, before, after, err := maintenance.CompactIfRequested(g.cfg.Home, dbPath, sopts); err != nil {
			g.log.Error("compacting the store failed; starting on it as it is", "error", err)
		} else if done {
			g.log.Info("compacted the store", "before_bytes", before, "after_bytes", after)
		}
		b, err := g.openStore(ctx, dbPath, sopts)
		if err != nil {
			return nil, err
		}
		return &records{Store: b, health: b.WriteHealth, space: b.Space}, nil
	}
	st, err := backend.Open(spec, sopts)
	if err != nil {
		return nil, err
	}
	r := &records{Store: st}
	switch s := st.(type) {
	case *store.Bolt:
		r.health, r.space = s.WriteHealth, s.Space
	case *etcd.Store:
		r.health = s.WriteHealth
		host, _ := os.Hostname()
		who := fmt.Sprintf("%s (pid %d on %s, home %s)", g.cfg.Owner, os.Getpid(), host, g.cfg.Home)
		if r.hold, err = s.Hold(ctx, "gateway", who, HoldTTL); err != nil {
			st.Close()
			if errors.Is(err, etcd.ErrHeld) {
				return nil, fmt.Errorf("%w on %s: %w; stop it first (one gateway per etcd prefix until several gateways are supported)", ErrAlreadyRunning, spec.URL, err)
			}
			return nil, err
		}
		g.log.Info("holding the etcd installation", "store", spec.URL)
		go g.watchHold(r, spec.URL)
	}
	return r, nil
}
