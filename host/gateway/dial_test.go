package gateway_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/gateway/gatewaytest"
	"github.com/flowgate/flowgate/host/store"
)

// holdStore opens the store of a new home the way a starting gateway
// does.
func holdStore(t *testing.T) (string, *gatewaytest.Starting) {
	t.Helper()
	dir, err := os.MkdirTemp("", "fgdial") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir, gatewaytest.Hold(t, dir)
}

// While a gateway holds the store and does not listen yet, Dial waits for
// it (bounded), and connects as soon as it answers; a home whose store no
// one holds has no gateway at once; a store held past the wait fails
// naming its holder.
func TestDialWaitsForAStartingGateway(t *testing.T) {
	t.Parallel()
	dir, s := holdStore(t)

	_, err := gateway.Dial(dir, 100*time.Millisecond)
	require.ErrorIs(t, err, store.ErrLocked)
	require.False(t, errors.Is(err, api.ErrNoGateway), "the store is held: no command may open it")
	require.ErrorContains(t, err, "flowgate gateway")

	dialed := make(chan error, 1)
	go func() {
		c, err := gateway.Dial(dir, 30*time.Second)
		if err == nil {
			c.Close()
		}
		dialed <- err
	}()
	s.AwaitProbe()
	s.Listen()
	require.NoError(t, <-dialed)

	free, err := os.MkdirTemp("", "fgdial")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(free) })
	_, err = gateway.Dial(free, 30*time.Second)
	require.ErrorIs(t, err, api.ErrNoGateway)
}

// A second gateway started while the first is still starting waits for
// it and says a gateway runs (ErrAlreadyRunning), where it used to fail on
// the store's lock; a command that tries to host one uses the first.
func TestSecondGatewayWaitsForAStartingOne(t *testing.T) {
	t.Parallel()
	dir, s := holdStore(t)
	started := make(chan error, 1)
	go func() {
		g, err := gateway.New(gateway.Config{Home: dir, Launch: testLaunch})
		if err == nil {
			err = g.Start(context.Background())
		}
		started <- err
	}()
	s.AwaitProbe()
	s.Listen()
	err := <-started
	require.ErrorIs(t, err, gateway.ErrAlreadyRunning)
	require.ErrorContains(t, err, "stop it first")
}
