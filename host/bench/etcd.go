package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// The names of the figures of a store run (Config.Store).
const (
	FigEtcdUpdate1 = "guarded_update_1_writer_etcd"
	FigEtcdUpdateN = "guarded_update_many_writers_etcd"
	FigEtcdRecord1 = "guarded_record_update_1_writer_etcd"
	FigEtcdRecordN = "guarded_record_update_many_writers_etcd"
	FigClaims      = "task_claims_3_gateways_etcd"
)

// openEtcd opens three clients (claimers) of the etcd cluster spec
// names, on a scratch prefix beside the URL's (PREFIX.bench-PID-TIME,
// outside the installation), with an engine over each. done deletes the
// scratch prefix and closes the clients. An etcd that does not answer
// fails here, before anything is measured. first is the first client's
// store.
func openEtcd(spec backend.Spec) (engs []*engine.Engine, first store.Store, done func() error, err error) {
	spec.URL = fmt.Sprintf("%s.bench-%d-%d", strings.TrimRight(spec.URL, "/"), os.Getpid(), time.Now().UnixNano())
	var stores []*etcd.Store
	done = func() error {
		var err error
		if len(stores) > 0 {
			if werr := stores[0].DeleteAll(context.Background()); werr != nil {
				err = fmt.Errorf("delete the bench's scratch prefix %s: %w; delete it with etcdctl del --prefix", spec.URL, werr)
			}
		}
		for _, st := range stores {
			err = errors.Join(err, st.Close())
		}
		return err
	}
	for range claimers {
		st, err := backend.Open(spec, store.Options{Owner: "flowgate bench"})
		if err != nil {
			return nil, nil, nil, errors.Join(fmt.Errorf("open the etcd store: %w", err), done())
		}
		stores = append(stores, st.(*etcd.Store))
		eng, err := engine.New(st, engine.Config{})
		if err != nil {
			return nil, nil, nil, errors.Join(err, done())
		}
		engs = append(engs, eng)
	}
	return engs, stores[0], done, nil
}

// storeRounds measures, in each round of a store run's updates phase,
// guarded flow updates on etcd with 1 and Sizes.Writers writers and
// Sizes.ClaimTasks task claims by three gateways (the run's three etcd
// clients) against three claimers on the phase's bbolt file, and
// guarded record updates at the store with 1 and Sizes.Writers writers:
// read a record, check its revision, write the next, which is what
// etcd's own figure measures (one Txn compared on the record's version).
// That figure, on a machine of this class, is about 0.13× raw fsync with
// 1 writer and 0.6× with many: the targets of the record updates, and of
// the flow updates, which are one Txn as well (the flow, its history
// entry and the history's meta; every read a point read the store's
// cache answers).
type storeRounds struct {
	etcd []*engine.Engine
	bolt *engine.Engine
	sz   Sizes
	ids  []string
	revs []int64
	recs *store.GuardedRecords
	// one, many, recOne, recMany, claims and boltClaims hold each
	// round's rate.
	one, many, recOne, recMany, claims, boltClaims []float64
}

// newStoreRounds makes the flows the etcd updates write.
func newStoreRounds(ctx context.Context, etcd []*engine.Engine, st store.Store, bolt *engine.Engine, sz Sizes) (*storeRounds, error) {
	ids, revs, err := updateFlows(etcd[0], sz.Writers)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	recs, err := store.NewGuardedRecords(ctx, st, sz.Writers, benchState)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	return &storeRounds{etcd: etcd, bolt: bolt, sz: sz, ids: ids, revs: revs, recs: recs}, nil
}

// measure takes one round of each figure.
func (s *storeRounds) measure(ctx context.Context) error {
	u1, err := guarded(s.etcd[0], s.ids[:1], s.revs[:1], s.sz.Updates)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	un, err := guarded(s.etcd[0], s.ids, s.revs, s.sz.Updates)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	r1, err := s.recs.Rate(ctx, 1, s.sz.Updates)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	rn, err := s.recs.Rate(ctx, s.sz.Writers, s.sz.Updates)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	ce, err := Claims(s.etcd, s.sz.ClaimTasks)
	if err != nil {
		return fmt.Errorf("claims on etcd: %w", err)
	}
	cb, err := Claims([]*engine.Engine{s.bolt, s.bolt, s.bolt}, s.sz.ClaimTasks)
	if err != nil {
		return fmt.Errorf("claims on bbolt: %w", err)
	}
	s.one, s.many = append(s.one, u1), append(s.many, un)
	s.recOne, s.recMany = append(s.recOne, r1), append(s.recMany, rn)
	s.claims, s.boltClaims = append(s.claims, ce), append(s.boltClaims, cb)
	return nil
}

// figures are the rounds' figures; raw is the rounds' median fsync rate.
func (s *storeRounds) figures(raw float64) []Figure {
	flowNote := "UpdateFlow: one Txn puts the flow, its history entry and the history's meta"
	one := updateFigure(FigEtcdUpdate1, "guarded flow update on etcd, 1 writer", s.one, raw, 0.13)
	many := updateFigure(FigEtcdUpdateN, fmt.Sprintf("guarded flow update on etcd, %d writers", s.sz.Writers), s.many, raw, 0.6)
	one.Note, many.Note = flowNote, flowNote
	return []Figure{
		updateFigure(FigEtcdRecord1, "guarded record update on etcd, 1 writer", s.recOne, raw, 0.13),
		updateFigure(FigEtcdRecordN, fmt.Sprintf("guarded record update on etcd, %d writers", s.sz.Writers), s.recMany, raw, 0.6),
		one, many,
		{Name: FigClaims, Title: fmt.Sprintf("task claims on etcd, %d gateways", claimers), Value: median(s.claims), Unit: "claims/s", Rounds: s.claims,
			Baseline: median(s.boltClaims), BaselineTitle: fmt.Sprintf("bbolt, %d claimers in one gateway", claimers), BaselineUnit: "claims/s",
			Note: fmt.Sprintf("each round queues %d tasks, then %d gateways, each with its own etcd client, look at the queue %d tasks at a time and start what they saw (guarded writes; a lost race is no claim); every task must be taken once", s.sz.ClaimTasks, claimers, claimLook)},
	}
}

// updateFlows creates n flows through eng for guarded updates, returning their
// ids and revisions.
func updateFlows(eng *engine.Engine, n int) ([]string, []int64, error) {
	ids, revs := make([]string, n), make([]int64, n)
	for i := range ids {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "bench", ControllerID: "bench", Goal: "guarded updates", State: benchState})
		if err != nil {
			return nil, nil, err
		}
		ids[i], revs[i] = f.ID, f.Revision
	}
	return ids, revs, nil
}
