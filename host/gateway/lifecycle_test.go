package gateway_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// A part that cannot start (here the runner: its task log directory is
// a file) keeps the whole gateway from starting, with an error that names
// the part; nothing is left serving or holding the store, so the same
// gateway starts once the fault is gone.
func TestAPartThatCannotStartStopsTheGateway(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fgpart") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	logs := filepath.Join(dir, home.LogsDir)
	require.NoError(t, os.WriteFile(logs, []byte("not a directory"), 0o600))

	g, err := gateway.New(gateway.Config{Home: dir, Launch: testLaunch})
	require.NoError(t, err)
	err = g.Start(ctx)
	require.ErrorContains(t, err, "gateway: runner: start: ")
	require.Equal(t, 1, strings.Count(err.Error(), "runner"), "the error names the part once: %v", err)
	require.ErrorContains(t, err, "create task log directory")
	require.NoFileExists(t, gateway.SocketPath(dir), "a gateway that did not start serves nothing")
	require.NoError(t, g.Stop(ctx), "stopping a gateway that never started does nothing")

	require.NoError(t, os.Remove(logs))
	require.NoError(t, g.Start(ctx), "the store was released: the gateway starts once the fault is gone")
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	c, err := api.DialRemote(gateway.SocketPath(dir))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	st, err := c.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, os.Getpid(), st.PID)
}

// The socket starts last: when it cannot, every part started before it
// is stopped again, in reverse. The web listener's port is free at once,
// the store can be opened at once by another process's lock, and the
// gateway starts on both once the fault is gone.
func TestASocketThatCannotStartUndoesEveryEarlierPart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fgsock") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := gateway.SocketPath(dir)
	require.NoError(t, os.WriteFile(sock, []byte("not a socket"), 0o600))
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := free.Addr().String()
	require.NoError(t, free.Close())

	var fc gateway.FileConfig
	fc.HTTP.Addr = addr
	g, err := gateway.New(gateway.Config{Home: dir, File: fc, Launch: testLaunch})
	require.NoError(t, err)
	err = g.Start(ctx)
	require.ErrorContains(t, err, "gateway: socket: start: ")
	require.ErrorContains(t, err, "is not a socket; move it away")
	require.Empty(t, g.HTTPAddr(), "the web listener stopped")

	taken, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the web listener's port is free")
	require.NoError(t, taken.Close())
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{LockTimeout: 50 * time.Millisecond})
	require.NoError(t, err, "the store is closed")
	require.NoError(t, st.Close())

	require.NoError(t, os.Remove(sock))
	require.NoError(t, g.Start(ctx), "the gateway starts once the fault is gone")
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	require.Equal(t, addr, g.HTTPAddr())
	c, err := api.DialRemote(sock)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	status, err := c.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, addr, status.HTTPAddr, "the first status read names the web listener")
}

// A part that cannot be built over the open store (here the plugin
// supervisor: its plugins_dir does not exist) takes the same way back as
// one that cannot start: the store is closed at once, nothing serves, and
// the gateway starts once the fault is gone.
func TestAPartThatCannotBeBuiltClosesTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fgbuild") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	var fc gateway.FileConfig
	fc.PluginsDir = filepath.Join(dir, "plugins")
	g, err := gateway.New(gateway.Config{Home: dir, File: fc, Launch: testLaunch})
	require.NoError(t, err)
	err = g.Start(ctx)
	require.ErrorContains(t, err, "the plugin directory "+fc.PluginsDir+" does not exist")
	require.NoFileExists(t, gateway.SocketPath(dir), "a gateway that did not start serves nothing")
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{LockTimeout: 50 * time.Millisecond})
	require.NoError(t, err, "the store is closed")
	require.NoError(t, st.Close())

	require.NoError(t, os.Mkdir(fc.PluginsDir, 0o700))
	require.NoError(t, g.Start(ctx), "the gateway starts once the fault is gone")
	require.NoError(t, g.Stop(ctx))
}

// Stopping undoes starting: the socket file is removed, the web
// listener's port and the store are free, in that order reversed from
// the start.
func TestStopFreesTheSocketThePortAndTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fgstop") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	var fc gateway.FileConfig
	fc.HTTP.Addr = "127.0.0.1:0"
	g, err := gateway.New(gateway.Config{Home: dir, File: fc, Launch: testLaunch})
	require.NoError(t, err)
	require.NoError(t, g.Start(ctx))
	addr := g.HTTPAddr()
	require.FileExists(t, gateway.SocketPath(dir))
	require.NoError(t, g.Stop(ctx))

	require.NoFileExists(t, gateway.SocketPath(dir))
	require.Empty(t, g.HTTPAddr())
	taken, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the web listener's port is free")
	require.NoError(t, taken.Close())
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{LockTimeout: 50 * time.Millisecond})
	require.NoError(t, err, "the store is closed")
	require.NoError(t, st.Close())
}

// A gateway that stops with tasks running says how many it leaves to
// their shims. It counted after its runner had forgotten them, and said 0.
func TestStopSaysHowManyTasksItLeavesRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fgleft") // short: the socket path is bounded
	require.NoError(t, err)
	logFile := filepath.Join(t.TempDir(), "gateway.log")
	out, err := os.Create(logFile)
	require.NoError(t, err)
	t.Cleanup(func() { out.Close() })
	g, err := gateway.New(gateway.Config{Home: dir, Launch: testLaunch,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: out})})
	require.NoError(t, err)
	require.NoError(t, g.Start(ctx))
	c := g.Client()
	task, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "t", Spec: sdk.TaskSpec{Argv: []string{"sleep", "30"}}})
	require.NoError(t, err)
	var running *stored.Task
	polltest.Until(t, "the task to run", func() bool {
		running, err = c.ResolveTask(ctx, task.ID)
		return err == nil && running.PID != 0
	})
	require.NoError(t, g.Stop(ctx))
	t.Cleanup(func() {
		// The task's child leads its own process group, the shim another.
		_ = syscall.Kill(-running.PID, syscall.SIGKILL)
		_ = syscall.Kill(-running.ShimPID, syscall.SIGKILL)
		os.RemoveAll(dir)
	})
	b, err := os.ReadFile(logFile)
	require.NoError(t, err)
	require.Contains(t, string(b), "running_tasks_left_to_shims=1")
}
