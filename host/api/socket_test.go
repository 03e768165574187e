package api_test

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
)

// staleSocket leaves a socket file at path that nothing listens on, as a
// gateway killed with -9 does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	require.NoError(t, l.Close())
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.Equal(t, fs.ModeSocket, fi.Mode().Type())
}

func TestListenMakesPrivateSocket(t *testing.T) {
	t.Parallel()
	sock := socketPath(t)
	l, err := api.Listen(sock)
	require.NoError(t, err)
	fi, err := os.Lstat(sock)
	require.NoError(t, err)
	require.Equal(t, fs.ModeSocket, fi.Mode().Type())
	require.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
	require.NoError(t, l.Close())
	_, err = os.Lstat(sock)
	require.ErrorIs(t, err, fs.ErrNotExist, "closing the listener removes the socket")
}

func TestListenReplacesStaleSocket(t *testing.T) {
	t.Parallel()
	sock := socketPath(t)
	staleSocket(t, sock)
	l, err := api.Listen(sock)
	require.NoError(t, err)
	defer l.Close()
	go func() {
		conn, err := l.Accept()
		if err == nil {
			conn.Close()
		}
	}()
	conn, err := net.Dial("unix", sock)
	require.NoError(t, err, "the new socket answers")
	conn.Close()
}

func TestListenRefusesLiveGateway(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	_, err := api.Listen(g.sock)
	require.Error(t, err)
	require.Contains(t, err.Error(), g.sock)
	require.Contains(t, err.Error(), "already listens")
	_, err = g.remote.Status(t.Context())
	require.NoError(t, err, "the live gateway keeps its socket")
}

func TestListenRefusesNonSocket(t *testing.T) {
	t.Parallel()
	sock := socketPath(t)
	require.NoError(t, os.WriteFile(sock, []byte("keep me"), 0o600))
	_, err := api.Listen(sock)
	require.Error(t, err)
	require.Contains(t, err.Error(), sock)
	b, err := os.ReadFile(sock)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(b))
}

func TestSocketPathTooLong(t *testing.T) {
	t.Parallel()
	long := filepath.Join(os.TempDir(), strings.Repeat("d", 200), "gateway.sock")
	_, err := api.Listen(long)
	require.ErrorContains(t, err, "use a shorter home directory")
	_, err = api.DialRemote(long)
	require.ErrorIs(t, err, api.ErrNoGateway)
}

func TestDialRemoteWithoutGateway(t *testing.T) {
	t.Parallel()
	missing := socketPath(t)
	stale := socketPath(t)
	staleSocket(t, stale)
	notDir := filepath.Join(socketPath(t)+".file", "gateway.sock")
	require.NoError(t, os.WriteFile(filepath.Dir(notDir), nil, 0o600))

	for _, sock := range []string{missing, stale, notDir} {
		start := time.Now()
		c, err := api.DialRemote(sock)
		require.ErrorIs(t, err, api.ErrNoGateway, sock)
		require.Nil(t, c)
		require.Contains(t, err.Error(), sock)
		require.Less(t, time.Since(start), 500*time.Millisecond, sock)
	}
}

// TestDialRemoteStuckGateway: something accepts on the socket but never
// answers. That is not "no gateway" (falling back to the store would only
// wait on its lock); DialRemote fails within its probe timeout.
func TestDialRemoteStuckGateway(t *testing.T) {
	t.Parallel()
	sock := socketPath(t)
	l, err := api.Listen(sock)
	require.NoError(t, err)
	defer l.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, conn)
		}
	}()
	start := time.Now()
	_, err = api.DialRemote(sock)
	require.Error(t, err)
	require.NotErrorIs(t, err, api.ErrNoGateway)
	require.Contains(t, err.Error(), "did not answer a health check")
	require.Less(t, time.Since(start), 3*time.Second)
}

func TestDialRemoteNotAGateway(t *testing.T) {
	t.Parallel()
	sock, _ := serve(t, api.NewHandler(&fakeClient{}, hclog.NewNullLogger()))
	c, err := api.DialRemote(sock)
	require.NoError(t, err, "the fake answers status")
	c.Close()

	other, _ := serve(t, nil) // http.DefaultServeMux: 404 to everything
	_, err = api.DialRemote(other)
	require.Error(t, err)
	require.NotErrorIs(t, err, api.ErrNoGateway)
	require.Contains(t, err.Error(), "404")
}
