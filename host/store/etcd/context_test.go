package etcd_test

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/store/storetest"
)

// Every call of the etcd store that talks to etcd takes the caller's
// context first; what takes none says why.
func TestEtcdCallsTakeAContext(t *testing.T) {
	t.Parallel()
	exempt := map[string]string{
		"Store.Close": "closes the client; io.Closer", "Store.Prefix": "accessor", "Store.WriteHealth": "accessor",
		"Member.ID": "accessor", "Member.Host": "accessor", "Member.Done": "accessor", "Member.Draining": "accessor",
		"Member.Campaign":   "starts a campaign that runs until the member's session ends, bound to it",
		"Leadership.Fence":  "accessor",
		"Leadership.Resign": "signals the campaign's goroutine; the resign request runs there, bound to the session",
		"Roster.Live":       "answers from the watch; an id it has not seen yet is looked up once, bounded by Options.RequestTimeout (a callback of the runner and the plugin supervisor, which hold no context there)",
	}
	types := []reflect.Type{reflect.TypeFor[*etcd.Store](), reflect.TypeFor[*etcd.Member](), reflect.TypeFor[*etcd.Roster](), reflect.TypeFor[*etcd.Leadership]()}
	checked := storetest.RequireContextFirst(t, types, exempt)
	for _, m := range []string{"Store.View", "Store.Update", "Store.UpdateFenced", "Store.Members"} {
		require.True(t, checked[m], "%s takes a context", m)
	}
}

// A store call stops when its caller's context ends, even while etcd
// does not answer, and fails with the context's error: a View and an
// Update held at their first request are released by the cancel alone
// (the request timeout is an hour), one whose deadline passes fails with
// context.DeadlineExceeded, and a call made with an ended context runs
// nothing.
func TestEtcdCallStopsWithItsContext(t *testing.T) {
	t.Parallel()
	var hold atomic.Bool
	held := make(chan struct{}, 1)
	// stall keeps a request from etcd while hold is set, until its
	// context ends: etcd not answering, made on demand.
	stall := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if hold.Load() {
			held <- struct{}{}
			<-ctx.Done()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{server.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(stall)}})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	s, err := etcd.New(cli, etcd.Options{Prefix: server.Prefix(), RequestTimeout: time.Hour})
	require.NoError(t, err)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("k", []byte("v")); return err }))

	calls := map[string]func(ctx context.Context) error{
		"View": func(ctx context.Context) error {
			return s.View(ctx, func(tx store.ReadTx) error { _, err := tx.Get("k"); return err })
		},
		"Update": func(ctx context.Context) error {
			return s.Update(ctx, func(tx store.Tx) error { _, err := tx.Put("k", []byte("w")); return err })
		},
	}
	for name, call := range calls {
		ctx, cancel := context.WithCancel(t.Context())
		hold.Store(true)
		done := make(chan error, 1)
		go func() { done <- call(ctx) }()
		<-held
		cancel()
		err := waitFor(t, done, name)
		hold.Store(false)
		require.ErrorIs(t, err, context.Canceled, name)
		require.ErrorContains(t, err, "the caller stopped waiting", name)
		if name == "Update" {
			require.ErrorIs(t, err, store.ErrWriteFailed, "the commit was on its way: it may or may not have applied")
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	hold.Store(true)
	done := make(chan error, 1)
	go func() { done <- calls["View"](ctx) }()
	<-held
	err = waitFor(t, done, "View past its deadline")
	hold.Store(false)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	ended, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	err = s.Update(ended, func(store.Tx) error { ran = true; return nil })
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, ran, "an Update with an ended context runs nothing")
	require.False(t, errors.Is(err, store.ErrWriteFailed), "nothing was sent")
	require.True(t, s.WriteHealth().Writable, "a caller that gave up says nothing of etcd's health")
}

// waitFor returns what done yields, failing the test (polltest's bound)
// while the call it waits for stays blocked after its context ended.
func waitFor(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	var err error
	polltest.Until(t, what+" to return once its context ended", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	return err
}
