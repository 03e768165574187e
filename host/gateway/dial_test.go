package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
)

// startingGateway is a gateway caught between opening the store and
// serving its socket, as every gateway is for a while at start: it holds
// the store's lock, and nothing answers until listen.
type startingGateway struct {
	t   *testing.T
	dir string
	l   *api.Local
}

// holdStore opens the store of a new home the way a starting gateway
// does.
func holdStore(t *testing.T) *startingGateway {
	t.Helper()
	dir, err := os.MkdirTemp("", "fgdial") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := api.OpenLocal(dir, "flowgate gateway")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return &startingGateway{t: t, dir: dir, l: l}
}

// awaitProbe returns once a process looking for the gateway found the
// store held and no gateway answering: such a process reads the holder
// record to name the holder. To see that moment, the record is swapped
// for a fifo whose reader blocks until this writer comes; the writer gives
// it the record back, and puts a plain file in the fifo's place for later
// readers. Listening only after awaitProbe makes the window between
// holding the store and listening certain, not a race the test may lose.
func (s *startingGateway) awaitProbe() {
	t := s.t
	holder := filepath.Join(s.dir, home.DBFile+".holder")
	record, err := os.ReadFile(holder)
	require.NoError(t, err)
	require.NoError(t, os.Remove(holder))
	require.NoError(t, syscall.Mkfifo(holder, 0o600))
	deadline := time.Now().Add(30 * time.Second)
	var fifo *os.File
	for {
		// O_NONBLOCK: the open fails (ENXIO) until a reader has the fifo open.
		if fifo, err = os.OpenFile(holder, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			break
		}
		require.ErrorIs(t, err, syscall.ENXIO)
		require.True(t, time.Now().Before(deadline), "nobody looked for the gateway in 30s")
		time.Sleep(5 * time.Millisecond)
	}
	plain := holder + ".plain"
	require.NoError(t, os.WriteFile(plain, record, 0o600))
	require.NoError(t, os.Rename(plain, holder))
	_, err = fifo.Write(record)
	require.NoError(t, err)
	require.NoError(t, fifo.Close())
}

// listen serves the API on the home's socket: the gateway has started.
func (s *startingGateway) listen() {
	ln, err := api.Listen(gateway.SocketPath(s.dir))
	require.NoError(s.t, err)
	srv := &http.Server{Handler: api.NewHandler(s.l, nil), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.t.Cleanup(func() { srv.Close() })
}

// While a gateway holds the store and does not listen yet, Dial waits for
// it (bounded), and connects as soon as it answers; a home whose store no
// one holds has no gateway at once; a store held past the wait fails
// naming its holder.
func TestDialWaitsForAStartingGateway(t *testing.T) {
	t.Parallel()
	s := holdStore(t)

	_, err := gateway.Dial(s.dir, 100*time.Millisecond)
	require.ErrorIs(t, err, store.ErrLocked)
	require.False(t, errors.Is(err, api.ErrNoGateway), "the store is held: no command may open it")
	require.ErrorContains(t, err, "flowgate gateway")

	dialed := make(chan error, 1)
	go func() {
		c, err := gateway.Dial(s.dir, 30*time.Second)
		if err == nil {
			c.Close()
		}
		dialed <- err
	}()
	s.awaitProbe()
	s.listen()
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
	s := holdStore(t)
	started := make(chan error, 1)
	go func() {
		g, err := gateway.New(gateway.Config{Home: s.dir, Launch: testLaunch})
		if err == nil {
			err = g.Start(context.Background())
		}
		started <- err
	}()
	s.awaitProbe()
	s.listen()
	err := <-started
	require.ErrorIs(t, err, gateway.ErrAlreadyRunning)
	require.ErrorContains(t, err, "stop it first")
}
