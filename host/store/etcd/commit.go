package etcd

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/store"
)

// opOverhead is what one operation or compare adds to a request beyond
// its key and value (field tags, lengths, the compare's target): a
// generous bound, so the size check refuses before etcd does.
const opOverhead = 32

// commit sends writes as one Txn guarded by what r read, and by fence f
// when it is not nil. It reports whether the Txn applied; false means
// another writer changed something r read (or the fence fell), and the
// caller runs its function again (or checks the fence).
func (s *Store) commit(r *reader, writes []store.Write, f *store.Fence) (bool, error) {
	ops := make([]clientv3.Op, 0, len(writes))
	size := 0
	ranges, writes := r.seen.emptied(s.prefix, writes)
	for _, rg := range ranges {
		size += len(rg.start) + len(rg.end) + opOverhead
		ops = append(ops, clientv3.OpDelete(rg.start, clientv3.WithRange(rg.end)))
	}
	for _, w := range writes {
		key := s.prefix + w.Key
		size += len(key) + len(w.Value) + opOverhead
		if w.Delete {
			ops = append(ops, clientv3.OpDelete(key))
			continue
		}
		ops = append(ops, clientv3.OpPut(key, string(w.Value)))
	}
	if len(ops) > s.opts.MaxTxnOps {
		return false, fmt.Errorf("%w: this change writes %d keys and etcd takes at most %d operations in one transaction (--max-txn-ops); nothing was written: make the change in smaller steps",
			store.ErrTxnTooLarge, len(ops), s.opts.MaxTxnOps)
	}
	maxCmps := s.opts.MaxTxnOps
	if f != nil {
		maxCmps-- // the fence's compare
	}
	cmps, ok := r.seen.compares(r.rev, maxCmps)
	if !ok {
		return false, fmt.Errorf("%w: this change read more keys and ranges than the %d checks etcd takes in one transaction (--max-txn-ops); nothing was written: read less in one change",
			store.ErrTxnTooLarge, s.opts.MaxTxnOps)
	}
	if f != nil {
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(f.Key), "=", f.Revision))
	}
	for _, c := range cmps {
		size += len(c.GetCompare().GetKey()) + len(c.GetCompare().GetRangeEnd()) + opOverhead
	}
	if size > s.opts.MaxRequestBytes {
		return false, fmt.Errorf("%w: this change needs a request of about %d bytes and etcd takes at most %d (--max-request-bytes); nothing was written: make the change in smaller steps",
			store.ErrTxnTooLarge, size, s.opts.MaxRequestBytes)
	}

	ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Txn(ctx).If(cmps...).Then(ops...).Commit()
	switch {
	case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrRequestTooLarge):
		return false, fmt.Errorf("%w: etcd refused the change (%v): its limits are lower than this store's Options say; nothing was written: set MaxTxnOps and MaxRequestBytes to the cluster's --max-txn-ops and --max-request-bytes",
			store.ErrTxnTooLarge, err)
	case err != nil:
		return false, fmt.Errorf("%w: etcd store: commit %d writes: %w (the change may or may not have been applied; read it back before repeating it)",
			store.ErrWriteFailed, len(ops), unavailable(s, err))
	}
	return resp.Succeeded, nil
}

// confirm checks, for an Update that wrote nothing, that what it read
// (serializably) is still current, so that what its function concluded
// (a refusal, say) holds at a linearizable point. It reports false when
// the snapshot was stale and the function must run again. A read set too
// large for one check is read again at a linearizable revision instead.
func (s *Store) confirm(r *reader) (bool, error) {
	if r.rev == 0 {
		return true, nil // nothing was read
	}
	cmps, ok := r.seen.compares(r.rev, s.opts.MaxTxnOps)
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
	defer cancel()
	if !ok {
		// The current revision, read linearizably, is the snapshot's if
		// nothing was written since.
		resp, err := s.cli.Get(ctx, s.prefix, clientv3.WithCountOnly())
		if err != nil {
			return false, fmt.Errorf("etcd store: confirm a read: %w", unavailable(s, err))
		}
		return resp.Header.Revision == r.rev, nil
	}
	resp, err := s.cli.Txn(ctx).If(cmps...).Commit()
	if err != nil {
		return false, fmt.Errorf("etcd store: confirm a read: %w", unavailable(s, err))
	}
	return resp.Succeeded, nil
}

// checkFence returns an error wrapping store.ErrFenced when f no longer
// holds, and nil when it does (a Txn that failed then met a conflict).
func (s *Store) checkFence(f store.Fence) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Get(ctx, f.Key, clientv3.WithKeysOnly())
	if err != nil {
		return fmt.Errorf("etcd store: check the fence %s: %w", f.Key, unavailable(s, err))
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != f.Revision {
		return fmt.Errorf("%w: %s is no longer the one created at revision %d (its holder lost it); nothing was written", store.ErrFenced, f.Key, f.Revision)
	}
	return nil
}

// unavailable adds what to do to an error from a request to etcd.
func unavailable(s *Store, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("etcd at %v did not answer within %s (%w): check that it is running and reachable", s.cli.Endpoints(), s.opts.RequestTimeout, err)
	}
	return err
}
