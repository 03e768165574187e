package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// benchState is a flow state of about the size the engine benchmarks use.
var benchState = json.RawMessage(`{"step":"render","attempt":1,"notes":"a value of about three hundred bytes once encoded with its envelope"}`)

// openEngine opens a store in dir and an engine over it.
func openEngine(dir string) (*store.Bolt, *engine.Engine, error) {
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{Owner: "flowgate bench"})
	if err != nil {
		return nil, nil, err
	}
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, eng, nil
}

// updates measures the raw fsync rate of the scratch directory and, in
// the same rounds, guarded flow updates (UpdateFlow with the expected
// revision) by 1 writer and by Sizes.Writers writers, each on its own
// flow, as the engine's BenchmarkGuardedFlowUpdate does. A store run
// (Config.Store) measures etcd's figures in the same rounds too (see
// storeRounds).
func (r *run) updates(ctx context.Context) ([]Figure, error) {
	dir := filepath.Join(r.tmp, "update")
	st, eng, err := openEngine(mkdir(dir))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ids, revs, err := updateFlows(eng, r.sz.Writers)
	if err != nil {
		return nil, err
	}
	var etcd *storeRounds
	if r.etcd != nil {
		if etcd, err = newStoreRounds(ctx, r.etcd, r.etcdStore, eng, r.sz); err != nil {
			return nil, err
		}
	}
	var fsync, one, many []float64
	for range r.sz.Rounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fs, err := store.ProbeFsync(dir, r.sz.Probe)
		if err != nil {
			return nil, err
		}
		u1, err := guarded(eng, ids[:1], revs[:1], r.sz.Updates)
		if err != nil {
			return nil, err
		}
		un, err := guarded(eng, ids, revs, r.sz.Updates)
		if err != nil {
			return nil, err
		}
		fsync, one, many = append(fsync, fs), append(one, u1), append(many, un)
		if etcd != nil {
			if err := etcd.measure(ctx); err != nil {
				return nil, err
			}
		}
	}
	// The guard must have held while it was measured: a stale write fails.
	if _, err := eng.UpdateFlow(ids[0], revs[0]-1, engine.FlowPatch{State: benchState}); !errors.Is(err, sdk.ErrRevisionConflict) {
		return nil, fmt.Errorf("a stale expected revision was not refused (err %v)", err)
	}
	raw := median(fsync)
	r.guardedMany = median(many)
	figs := []Figure{
		{Name: FigFsync, Title: "raw fsync (4 KiB overwrite + fdatasync)", Value: raw, Unit: "fsync/s", Rounds: fsync},
		updateFigure(FigUpdate1, "guarded flow update, 1 writer", one, raw, 0.3),
		updateFigure(FigUpdateN, fmt.Sprintf("guarded flow update, %d writers", r.sz.Writers), many, raw, 3),
	}
	if etcd != nil {
		figs = append(figs, etcd.figures(raw)...)
	}
	return figs, nil
}

// guarded runs one writer per id for about d, each updating its flow with
// the revision it last wrote, and returns the updates per second.
func guarded(eng *engine.Engine, ids []string, revs []int64, d time.Duration) (float64, error) {
	return store.WritersRate(len(ids), d, func(w int) error {
		f, err := eng.UpdateFlow(ids[w], revs[w], engine.FlowPatch{State: benchState})
		if err == nil {
			revs[w] = f.Revision
		}
		return err
	})
}

// updateFigure is a guarded-update figure over rounds against the raw
// fsync rate raw, whose ratio to it should be at least limit.
func updateFigure(name, title string, rounds []float64, raw, limit float64) Figure {
	return Figure{Name: name, Title: title, Value: median(rounds), Unit: "updates/s", Rounds: rounds,
		Baseline: raw, BaselineTitle: "raw fsync", BaselineUnit: "fsync/s",
		Target: &Target{Of: "ratio", Op: ">=", Limit: limit}}
}
