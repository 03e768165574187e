// Package migrate copies a whole store into another, empty one, keeping
// every key's value and revision, and verifies the copy: how an
// installation moves from its bbolt file to etcd and back (flowgate store
// migrate).
//
// # Revisions
//
// A key's revision counts its writes (store.Item), and no backend lets a
// writer set it: etcd's Version only grows by Puts. So Copy writes in
// rounds: round r puts every key whose revision is at least r, until each
// key has been put as many times as its revision says. Every put writes
// the key's final value, so a copy cut short holds right values at
// lower revisions, never wrong values. A store whose keys are at
// revision 1 to 10 takes ten rounds; the writes of a round go in batches
// within etcd's limits.
//
// # Quiet source
//
// The source must not change during the copy: stop every gateway and
// command that writes it first. Verify, run at the end, catches a change
// that slipped in.
package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowgate/flowgate/host/store"
)

// Defaults for Options.
const (
	// DefaultBatchKeys stays under etcd's 128 operations per transaction.
	DefaultBatchKeys = 100
	// DefaultBatchBytes stays under etcd's 1.5 MiB request. A single value
	// larger than it (up to store.MaxValueSize) goes in a batch alone.
	DefaultBatchBytes = 1 << 20
)

// Options tunes Copy. The zero value is ready to use.
type Options struct {
	// BatchKeys is the most keys one transaction writes. Zero means
	// DefaultBatchKeys.
	BatchKeys int
	// BatchBytes is the most value bytes one transaction writes. Zero
	// means DefaultBatchBytes.
	BatchBytes int
	// Progress, if set, hears after every round how many rounds of how
	// many are done.
	Progress func(round, rounds int)
}

// Report is what a copy did.
type Report struct {
	// Keys is how many keys were copied.
	Keys int `json:"keys"`
	// Writes is how many Puts it took (the sum of the revisions).
	Writes int64 `json:"writes"`
	// MaxRevision is the highest revision copied, the number of rounds.
	MaxRevision int64 `json:"max_revision"`
}

// ErrNotEmpty is returned by Copy for a target that holds any key.
var ErrNotEmpty = errors.New("migrate: the target store is not empty")

// entry is a key of the source with its revision and value size.
type entry struct {
	key  string
	rev  int64
	size int
}

// Copy copies every key of src into dst, which must hold no key (else it
// fails with an error wrapping ErrNotEmpty and writes nothing), so that
// each has the same value and revision in dst; then it runs Verify. A
// failure part way leaves dst partly written: empty it before trying
// again. Every read and write is bounded by ctx; the end of ctx stops the
// copy between two batches, as a failure does.
func Copy(ctx context.Context, dst, src store.Store, opts Options) (Report, error) {
	if opts.BatchKeys <= 0 {
		opts.BatchKeys = DefaultBatchKeys
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = DefaultBatchBytes
	}
	if first, err := firstKey(ctx, dst); err != nil {
		return Report{}, fmt.Errorf("migrate: read the target: %w", err)
	} else if first != "" {
		return Report{}, fmt.Errorf("%w: it holds %q among others; copy only into an empty store (a new file, or an etcd prefix no one uses)", ErrNotEmpty, first)
	}
	var entries []entry
	var rep Report
	if err := src.View(ctx, func(tx store.ReadTx) error {
		return tx.Scan("", store.ScanOptions{}, func(it store.Item) bool {
			entries = append(entries, entry{it.Key, it.Revision, len(it.Value)})
			rep.Writes += it.Revision
			rep.MaxRevision = max(rep.MaxRevision, it.Revision)
			return true
		})
	}); err != nil {
		return Report{}, fmt.Errorf("migrate: read the source: %w", err)
	}
	rep.Keys = len(entries)
	for round := int64(1); round <= rep.MaxRevision; round++ {
		var batch []entry
		bytes := 0
		for _, e := range entries {
			if e.rev < round {
				continue
			}
			if len(batch) > 0 && (len(batch) == opts.BatchKeys || bytes+e.size > opts.BatchBytes) {
				if err := write(ctx, dst, src, batch, round); err != nil {
					return rep, err
				}
				batch, bytes = batch[:0], 0
			}
			batch = append(batch, e)
			bytes += e.size
		}
		if err := write(ctx, dst, src, batch, round); err != nil {
			return rep, err
		}
		if opts.Progress != nil {
			opts.Progress(int(round), int(rep.MaxRevision))
		}
	}
	return rep, Verify(ctx, dst, src)
}

// write puts the source's value of every key in batch into dst, which
// must bring each to revision round.
func write(ctx context.Context, dst, src store.Store, batch []entry, round int64) error {
	values := make([][]byte, len(batch))
	if err := src.View(ctx, func(tx store.ReadTx) error {
		for i, e := range batch {
			it, err := tx.Get(e.key)
			if err != nil {
				return err
			}
			if it.Revision != e.rev {
				return fmt.Errorf("key %q moved from revision %d to %d during the copy: stop every writer of the source and start again into an empty target", e.key, e.rev, it.Revision)
			}
			values[i] = it.Value
		}
		return nil
	}); err != nil {
		return fmt.Errorf("migrate: read the source: %w", err)
	}
	err := dst.Update(ctx, func(tx store.Tx) error {
		for i, e := range batch {
			rev, err := tx.Put(e.key, values[i])
			if err != nil {
				return err
			}
			if rev != round {
				return fmt.Errorf("key %q reached revision %d in the target, not %d: something else writes the target; stop it, empty the target and start again", e.key, rev, round)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate: write round %d: %w", round, err)
	}
	return nil
}

// firstKey returns the first key of s, or "" when it has none.
func firstKey(ctx context.Context, s store.Store) (string, error) {
	var first string
	err := s.View(ctx, func(tx store.ReadTx) error {
		return tx.Scan("", store.ScanOptions{Limit: 1}, func(it store.Item) bool {
			first = it.Key
			return false
		})
	})
	return first, err
}
