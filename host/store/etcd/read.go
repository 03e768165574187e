package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/store"
)

// reader reads one snapshot of the store: the first read fixes the etcd
// revision every later read of the transaction is made at. In a View the
// first read is linearizable. In an Update every read is serializable
// (the member's own copy, no round of the cluster, no wait for writes in
// flight): the reader records what it read, and the commit's compares, or
// a check when nothing was written (Store.confirm), turn a stale snapshot
// into a conflict and another run. An Update's point reads may also be
// answered from the Store's cache, as current at an older revision: the
// same compares catch a stale one.
type reader struct {
	s *Store
	// ctx is the context of the View or Update the reader serves: it
	// bounds every read.
	ctx context.Context
	rev int64 // the snapshot's etcd revision; 0 until the first read
	// seen is nil in a View. In an Update it collects the reads, and reads
	// are serializable.
	seen *readSet
	// cached says that point reads may be answered from s.cache (only in
	// an Update).
	cached bool
	// failed says that a read failed (etcd unreachable, a compacted
	// revision): the function's error is then not a conclusion drawn from
	// what it read.
	failed bool
	// known holds the keys read so far by key (without the prefix), with
	// a nil kv for one that does not exist (see point).
	known map[string]cached
}

var _ store.ReadTx = (*reader)(nil)

// Get implements store.ReadTx.
func (r *reader) Get(key string) (store.Item, error) {
	if key == "" {
		return store.Item{}, store.ErrEmptyKey
	}
	kv, at, err := r.point(key)
	if err != nil {
		return store.Item{}, err
	}
	r.seen.saw(r.s.prefix+key, kv, at, got)
	if kv == nil {
		return store.Item{}, store.ErrKeyNotFound
	}
	return r.item(kv), nil
}

// Revision implements store.RevisionReader: the revision a Put of key
// starts from, recorded as read only for that (see readSet.compares).
func (r *reader) Revision(key string) (int64, error) {
	kv, at, err := r.point(key)
	if err != nil {
		return 0, err
	}
	r.seen.saw(r.s.prefix+key, kv, at, numbered)
	if kv == nil {
		return 0, nil
	}
	return kv.Version, nil
}

// point returns key as the snapshot holds it, nil when it does not exist,
// and the revision at which that was current. A key read once (by Get,
// Revision, or a Scan in an Update) is answered again without asking
// etcd, and so is one a scan of the Update found absent, or one in the
// Store's cache when r.cached.
func (r *reader) point(key string) (*mvccpb.KeyValue, int64, error) {
	if k, ok := r.recall(key); ok {
		return k.kv, k.at, nil
	}
	resp, err := r.get(r.s.prefix+key, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("etcd store: read %q: %w", key, err)
	}
	var kv *mvccpb.KeyValue
	if len(resp.Kvs) > 0 {
		kv = resp.Kvs[0]
	}
	r.remember(key, kv, r.rev)
	if r.seen != nil {
		r.s.cache.put(r.s.prefix+key, kv, r.rev)
	}
	return kv, r.rev, nil
}

// recall returns what the Update knows of key without asking etcd:
// what it read of it, a scan of a range holding key that did not see it,
// or, when r.cached, the Store's cache.
func (r *reader) recall(key string) (cached, bool) {
	if k, ok := r.known[key]; ok {
		return k, true
	}
	if at, ok := r.seen.scannedAt(r.s.prefix + key); ok {
		// A scan saw every key of a range holding key, and not key.
		r.remember(key, nil, at)
		return r.known[key], true
	}
	if r.cached {
		if k, ok := r.s.cache.get(r.s.prefix + key); ok {
			r.remember(key, k.kv, k.at)
			return k, true
		}
	}
	return cached{}, false
}

// AssumeAbsent implements store.AbsenceAssumer: a key the Update knows
// (see recall) is answered from that; another is taken to be absent,
// with no read, and the commit compares that it is (readSet.assume). The
// Update's third run and later ones, which read etcd only, read it.
func (r *reader) AssumeAbsent(key string) (bool, error) {
	if key == "" {
		return false, store.ErrEmptyKey
	}
	if _, ok := r.recall(key); !ok && r.cached && r.seen != nil {
		r.remember(key, nil, r.rev)
		r.seen.assume(r.s.prefix + key)
		return false, nil
	}
	_, err := r.Get(key)
	if errors.Is(err, store.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// remember keeps what the snapshot holds at key (nil: nothing), as
// current at revision at.
func (r *reader) remember(key string, kv *mvccpb.KeyValue, at int64) {
	if r.known == nil {
		r.known = map[string]cached{}
	}
	r.known[key] = cached{kv: kv, at: at}
}

// Scan implements store.ReadTx. It reads a page of keys at a time, so a
// scan of any length costs bounded memory.
func (r *reader) Scan(prefix string, opts store.ScanOptions, fn func(store.Item) bool) error {
	if opts.Limit < 0 {
		return errors.New("store: ScanOptions.Limit must not be negative")
	}
	lo, hi := scanRange(r.s.prefix+prefix, r.s.prefix+opts.After, opts)
	order := clientv3.SortAscend
	if opts.Reverse {
		order = clientv3.SortDescend
	}
	from, to := lo, hi // what is still to read
	n := 0
	for from < to {
		page := int64(r.s.opts.PageSize)
		if opts.Limit > 0 {
			page = min(page, int64(opts.Limit-n))
		}
		resp, err := r.get(from, []clientv3.OpOption{clientv3.WithRange(to), clientv3.WithLimit(page), clientv3.WithSort(clientv3.SortByKey, order)})
		if err != nil {
			return fmt.Errorf("etcd store: scan %q: %w", prefix, err)
		}
		for _, kv := range resp.Kvs {
			// The range this scan has seen grows to cover kv.
			if opts.Reverse {
				to = string(kv.Key)
			} else {
				from = string(kv.Key) + "\x00"
			}
			if r.seen != nil {
				// Only an Update keeps what it scanned: its Puts and
				// Deletes of those keys read their revisions. A View
				// scanning the whole store (a migration's source) would
				// otherwise hold every value until it ends.
				r.seen.saw(string(kv.Key), kv, r.rev, scanned)
				r.remember(string(kv.Key[len(r.s.prefix):]), kv, r.rev)
				r.s.cache.update(string(kv.Key), kv, r.rev)
			}
			n++
			if !fn(r.item(kv)) || n == opts.Limit {
				if opts.Reverse {
					r.seen.covered(to, hi, r.rev)
				} else {
					r.seen.covered(lo, from, r.rev)
				}
				return nil
			}
		}
		if !resp.More {
			break
		}
	}
	r.seen.covered(lo, hi, r.rev)
	return nil
}

// scanRange returns the etcd key range [lo, hi) a scan of prefix reads,
// with after (the installation prefix added) as its cursor.
func scanRange(prefix, after string, opts store.ScanOptions) (lo, hi string) {
	lo, hi = prefix, prefixEnd(prefix)
	if opts.After == "" {
		return lo, hi
	}
	if !opts.Reverse && after >= lo {
		lo = after + "\x00"
	}
	if opts.Reverse && after < hi {
		hi = after
	}
	return lo, hi
}

// prefixEnd returns the smallest key greater than every key that starts
// with prefix. The installation prefix starts with "/", so there is one.
func prefixEnd(prefix string) string {
	end := []byte(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return string(end[:i+1])
		}
	}
	panic("etcd store: a key prefix made of 0xff bytes only")
}

// get reads key (with opts) at the snapshot, fixing the snapshot on the
// first read.
func (r *reader) get(key string, opts []clientv3.OpOption) (*clientv3.GetResponse, error) {
	if r.rev > 0 {
		opts = append(opts, clientv3.WithRev(r.rev))
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.s.opts.RequestTimeout)
	defer cancel()
	var (
		resp *clientv3.GetResponse
		err  error
	)
	if r.seen != nil {
		resp, err = r.s.cli.Get(ctx, key, append(opts, clientv3.WithSerializable())...)
	}
	if r.seen == nil || errors.Is(err, rpctypes.ErrFutureRev) {
		// A View, or a member behind the snapshot (the client moved to
		// another one): a linearizable read waits for it to catch up.
		resp, err = r.s.cli.Get(ctx, key, opts...)
	}
	r.failed = r.failed || err != nil
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return nil, fmt.Errorf("etcd compacted revision %d while this transaction read at it; retry the command (%w)", r.rev, err)
	case err != nil:
		return nil, requestFailed(r.s, r.ctx, err)
	}
	if r.rev == 0 {
		r.rev = resp.Header.Revision
	}
	return resp, nil
}

// item turns an etcd key-value into an Item: the key without the
// installation prefix, a copy of the value, and etcd's Version as the
// revision.
func (r *reader) item(kv *mvccpb.KeyValue) store.Item {
	return store.Item{
		Key:      string(kv.Key[len(r.s.prefix):]),
		Value:    bytes.Clone(kv.Value),
		Revision: kv.Version,
	}
}
