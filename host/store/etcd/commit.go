package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"go.etcd.io/etcd/api/v3/mvccpb"
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
// caller runs its function again (or checks the fence). Either way the
// Store's cache learns the outcome: the keys written as of the Txn's
// revision, or the keys compared as they are now.
func (s *Store) commit(ctx context.Context, r *reader, writes []store.Write, f *store.Fence) (bool, error) {
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
	cmps, compared, ok := r.seen.compares(maxCmps)
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
	compared, gets := s.refreshOps(compared, size)

	rctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Txn(rctx).If(cmps...).Then(ops...).Else(gets...).Commit()
	switch {
	case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrRequestTooLarge):
		return false, fmt.Errorf("%w: etcd refused the change (%v): its limits are lower than this store's Options say; nothing was written: set MaxTxnOps and MaxRequestBytes to the cluster's --max-txn-ops and --max-request-bytes",
			store.ErrTxnTooLarge, err)
	case err != nil:
		return false, fmt.Errorf("%w: etcd store: commit %d writes: %w (the change may or may not have been applied; read it back before repeating it)",
			store.ErrWriteFailed, len(ops), requestFailed(s, ctx, err))
	}
	if !resp.Succeeded {
		s.refresh(r, compared, resp)
		return false, nil
	}
	s.committed(r, ranges, writes, resp.Header.Revision)
	return true, nil
}

// refreshOps returns Gets of keys for a failed Txn's Else, as many as fit
// beside a request of size bytes, and the keys they get.
func (s *Store) refreshOps(keys []string, size int) ([]string, []clientv3.Op) {
	gets := make([]clientv3.Op, 0, len(keys))
	for i, k := range keys {
		if size += len(k) + opOverhead; size > s.opts.MaxRequestBytes {
			return keys[:i], gets
		}
		gets = append(gets, clientv3.OpGet(k))
	}
	return keys, gets
}

// refresh puts in the cache what the Gets of keys in a failed Txn's Else
// found, and drops the other keys r read: one of them may be what failed
// it.
func (s *Store) refresh(r *reader, keys []string, resp *clientv3.TxnResponse) {
	for i, k := range keys {
		var kv *mvccpb.KeyValue
		if kvs := resp.Responses[i].GetResponseRange().GetKvs(); len(kvs) > 0 {
			kv = kvs[0]
		}
		s.cache.put(k, kv, resp.Header.Revision)
	}
	for k := range r.seen.keys {
		if !slices.Contains(keys, k) {
			s.cache.drop(k)
		}
	}
}

// committed puts in the cache what a Txn that applied writes and deleted
// ranges left at revision rev. A key written over one r read and compared
// takes the next version; another is dropped, as its version is not known.
func (s *Store) committed(r *reader, ranges []keyRange, writes []store.Write, rev int64) {
	for _, rg := range ranges {
		s.cache.emptied(rg.start, rg.end, rev)
	}
	for _, w := range writes {
		key := s.prefix + w.Key
		seen, ok := r.seen.keys[key]
		switch {
		case w.Delete:
			s.cache.put(key, nil, rev)
		case !ok || seen.kind == scanned:
			s.cache.drop(key)
		default:
			kv := &mvccpb.KeyValue{Key: []byte(key), Value: bytes.Clone(w.Value), CreateRevision: rev, ModRevision: rev, Version: seen.version + 1}
			if old := r.known[w.Key].kv; old != nil {
				kv.CreateRevision = old.CreateRevision
			}
			s.cache.put(key, kv, rev)
		}
	}
}

// confirm checks, for an Update that wrote nothing, that what it read
// (serializably) is still current, so that what its function concluded
// (a refusal, say) holds at a linearizable point. It reports false when
// the snapshot was stale and the function must run again. A read set too
// large for one check is read again at a linearizable revision instead.
func (s *Store) confirm(ctx context.Context, r *reader) (bool, error) {
	if r.seen.empty() {
		return true, nil
	}
	cmps, compared, ok := r.seen.compares(s.opts.MaxTxnOps)
	rctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	if !ok {
		// The current revision, read linearizably, is that of every read
		// if nothing was written since the oldest.
		resp, err := s.cli.Get(rctx, s.prefix, clientv3.WithCountOnly())
		if err != nil {
			return false, fmt.Errorf("etcd store: confirm a read: %w", requestFailed(s, ctx, err))
		}
		return resp.Header.Revision == r.seen.oldest(), nil
	}
	compared, gets := s.refreshOps(compared, 0)
	resp, err := s.cli.Txn(rctx).If(cmps...).Else(gets...).Commit()
	if err != nil {
		return false, fmt.Errorf("etcd store: confirm a read: %w", requestFailed(s, ctx, err))
	}
	if !resp.Succeeded {
		s.refresh(r, compared, resp)
	}
	return resp.Succeeded, nil
}

// checkFence returns an error wrapping store.ErrFenced when f no longer
// holds, and nil when it does (a Txn that failed then met a conflict).
func (s *Store) checkFence(ctx context.Context, f store.Fence) error {
	rctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Get(rctx, f.Key, clientv3.WithKeysOnly())
	if err != nil {
		return fmt.Errorf("etcd store: check the fence %s: %w", f.Key, requestFailed(s, ctx, err))
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

// requestFailed is unavailable for a request made under the caller's
// ctx: when ctx ended first, the request did not fail on etcd's side, and
// the error says so, wrapping ctx's error.
func requestFailed(s *Store, ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (etcd: %v)", callerGone(cerr), err)
	}
	return unavailable(s, err)
}

// callerGone is the error of a call whose caller's context ended (err is
// ctx.Err()) before the store had done its work.
func callerGone(err error) error {
	return fmt.Errorf("etcd store: the caller stopped waiting: %w", err)
}
