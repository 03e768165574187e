package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// ErrHeld is returned by Hold when another process holds the name.
var ErrHeld = errors.New("etcd store: held by another process")

// Held is a name this process holds on the installation (see Hold). Its
// zero value is not usable.
type Held struct {
	session *concurrency.Session
	key     string
	once    sync.Once
	err     error
}

// Hold claims name for this process on the installation, recording
// holder (who and where, for the error another claimant gets), bound to a
// lease of ttl seconds that the client keeps alive: a process that dies
// lets go within ttl. The key sits beside the prefix, not under it, so it
// is no record of the store. It fails with an error wrapping ErrHeld that
// quotes the holder's record when the name is taken.
//
// It is exclusion, not fencing: a holder cut off from etcd past its ttl
// loses the name (Done closes) while it may still be writing.
func (s *Store) Hold(ctx context.Context, name, holder string, ttl int) (*Held, error) {
	session, err := concurrency.NewSession(s.cli, concurrency.WithTTL(ttl), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, fmt.Errorf("etcd store: take a lease for %s: %w", name, unavailable(s, err))
	}
	key := strings.TrimSuffix(s.prefix, "/") + "." + name
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, holder, clientv3.WithLease(session.Lease()))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		session.Close()
		return nil, fmt.Errorf("etcd store: claim %s: %w", name, unavailable(s, err))
	}
	if !resp.Succeeded {
		session.Close()
		current := "someone"
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			current = string(kvs[0].Value)
		}
		return nil, fmt.Errorf("%w: %s of %s is held by %s", ErrHeld, name, strings.TrimSuffix(s.prefix, "/"), current)
	}
	return &Held{session: session, key: key}, nil
}

// Done is closed when the hold is lost: Release, or a lease etcd let
// expire.
func (h *Held) Done() <-chan struct{} { return h.session.Done() }

// Release lets go of the name at once (revoking the lease deletes the
// key). It is idempotent.
func (h *Held) Release() error {
	h.once.Do(func() {
		if err := h.session.Close(); err != nil && !errors.Is(err, context.Canceled) {
			h.err = fmt.Errorf("etcd store: release %s: %w", h.key, err)
		}
	})
	return h.err
}
