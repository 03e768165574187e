package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// TestSIGKILLedGatewayLeavesItsSeal kills a real gateway with SIGKILL
// once its commits have settled, with a task running under it, and starts
// the next one: that start finds the seal the killed gateway wrote while
// it ran, reads only the store's meta pages (the log says sealed=true),
// and reattaches the task. A restart after a crash is the one the seal is
// for.
func TestSIGKILLedGatewayLeavesItsSeal(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary killed with SIGKILL")
	}
	bin := buildFlowgate(t)
	dir, work, logf := e2eDirs(t)
	ctx := context.Background()
	// A writer seals only a file its open verified: the first open of a
	// home creates the file, the next verifies it.
	startGateway(t, bin, dir, logf).stop(t)
	g := startGateway(t, bin, dir, logf)
	t.Cleanup(func() { g.reap() })
	c, err := api.DialRemote(gateway.SocketPath(dir))
	require.NoError(t, err)
	task, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "seal", Spec: sdk.TaskSpec{Shell: "exec sleep 120", Cwd: work}})
	require.NoError(t, err)
	polltest.Until(t, "the task's processes to be recorded", func() bool {
		got, err := c.ResolveTask(ctx, task.ID)
		return err == nil && got.PID != 0
	}, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))
	c.Close()
	db := filepath.Join(dir, home.DBFile)
	polltest.Until(t, "the seal to be written after the store's last change", func() bool {
		return sealedAfterLastChange(db)
	}, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))

	g.kill(t)
	before, err := os.Stat(logf.Name())
	require.NoError(t, err)
	g = startGateway(t, bin, dir, logf)
	b, err := os.ReadFile(logf.Name())
	require.NoError(t, err)
	opened := lineWith(string(b[before.Size():]), "opened store")
	require.Contains(t, opened, "sealed=true", "the start after the kill read every page: %q", opened)

	c, err = api.DialRemote(gateway.SocketPath(dir))
	require.NoError(t, err)
	defer c.Close()
	got, err := c.ResolveTask(ctx, task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status)
	_, err = c.CancelTask(ctx, task.ID)
	require.NoError(t, err)
	polltest.Until(t, "the task to end once cancelled", func() bool {
		got, err := c.ResolveTask(ctx, task.ID)
		return err == nil && got.Status.Terminal()
	}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	g.stop(t)
}

// sealedAfterLastChange reports whether the seal beside the store file
// db was written after the file last changed: a writer seals the file
// only once its last change has settled, so a seal written since
// describes the file as it is.
func sealedAfterLastChange(db string) bool {
	var file, seal syscall.Stat_t
	if syscall.Stat(db, &file) != nil || syscall.Stat(db+".seal", &seal) != nil {
		return false
	}
	return seal.Mtim.Nano() > file.Ctim.Nano()
}

// lineWith returns the first line of s that contains what, or a note that
// none does.
func lineWith(s, what string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, what) {
			return line
		}
	}
	return fmt.Sprintf("(no line with %q)", what)
}
