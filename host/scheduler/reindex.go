package scheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// Reindex rebuilds the due index and the index of jobs with open runs from
// the job and runtime records, in one transaction. Every write keeps them
// in step; Start calls this once so that a store written by an older
// flowgate, or repaired by hand, is read right. It takes time linear in
// the jobs, and writes only the entries that are wrong: an index in step
// is left untouched, which keeps the transaction within etcd's limit on
// writes however many jobs there are.
func (s *Scheduler) Reindex() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		have := map[string]bool{}
		for _, p := range []string{duePrefix, openPrefix} {
			if err := tx.Scan(p, store.ScanOptions{}, func(it store.Item) bool {
				have[it.Key] = true
				return true
			}); err != nil {
				return err
			}
		}
		var (
			due, open []string
			bad       error
		)
		if err := tx.Scan(jobPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var j Job
			if bad = json.Unmarshal(it.Value, &j); bad != nil {
				bad = fmt.Errorf("read %s: %w", it.Key, bad)
				return false
			}
			if k := dueKey(j); k != "" {
				due = append(due, k)
			}
			return true
		}); err != nil || bad != nil {
			return errors.Join(err, bad)
		}
		if err := tx.Scan(schedPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var r schedRecord
			if bad = json.Unmarshal(it.Value, &r); bad != nil {
				bad = fmt.Errorf("read %s: %w", it.Key, bad)
				return false
			}
			if r.open() {
				open = append(open, openKey(it.Key[len(schedPrefix):]))
			}
			return true
		}); err != nil || bad != nil {
			return errors.Join(err, bad)
		}
		for _, k := range append(due, open...) {
			if have[k] {
				delete(have, k)
				continue
			}
			if err := tx.Put(k, []byte{}); err != nil {
				return err
			}
		}
		for _, k := range slices.Sorted(maps.Keys(have)) {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}
