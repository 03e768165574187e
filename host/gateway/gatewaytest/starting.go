// Package gatewaytest holds test helpers for code that talks to a gateway:
// a gateway caught while it starts.
package gatewaytest

import (
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
)

// Starting is a gateway caught between opening the store and serving its
// socket, as every gateway is for a while at start: it holds the store's
// lock, and nothing answers until Listen.
type Starting struct {
	t   *testing.T
	dir string
	l   *api.Local
}

// Hold opens the store of home dir the way a starting gateway does; the
// test's cleanup releases it.
func Hold(t *testing.T, dir string) *Starting {
	t.Helper()
	l, err := api.OpenLocal(dir, "flowgate gateway")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return &Starting{t: t, dir: dir, l: l}
}

// AwaitProbe returns once a process looking for the gateway found the
// store held and no gateway answering: such a process reads the holder
// record to name the holder. To see that moment, the record is swapped
// for a fifo whose reader blocks until this writer comes; the writer gives
// it the record back, and puts a plain file in the fifo's place for later
// readers. Listening only after AwaitProbe makes the window between
// holding the store and listening certain, not a race the test may lose.
func (s *Starting) AwaitProbe() {
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

// Listen serves the API on the home's socket: the gateway has started.
func (s *Starting) Listen() {
	ln, err := api.Listen(gateway.SocketPath(s.dir))
	require.NoError(s.t, err)
	srv := &http.Server{Handler: api.NewHandler(s.l, nil), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.t.Cleanup(func() { srv.Close() })
}
