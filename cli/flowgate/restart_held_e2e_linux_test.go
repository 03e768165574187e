package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// TestSubmitWaitsOutAHeldStore submits a task while a real process (util-
// linux flock) holds the store's lock with no gateway serving the socket,
// as a gateway does while it stops and while the next one starts, for
// longer than a starting gateway is waited for (gateway.StartWait). The
// submission must not give up with "store is in use": once the lock is
// free it hosts a gateway itself, and exits 0 with the task created once.
func TestSubmitWaitsOutAHeldStore(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real binary waiting out a held store")
	}
	flockBin, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("util-linux flock is not installed")
	}
	bin := buildFlowgate(t)
	dir, _, logf := e2eDirs(t)
	startGateway(t, bin, dir, logf).stop(t)
	db := filepath.Join(dir, home.DBFile)

	holder := exec.Command(flockBin, "--exclusive", db, "cat")
	release, err := holder.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start())
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	waitUntil(t, "the stand-in to hold the store", 10*time.Second, func() bool {
		return errors.Is(store.Held(db), store.ErrLocked)
	})

	submit := exec.Command(bin, "--home", dir, "tasks", "run", "--detach", "--owner", "held", "--label", "held", "--", "true")
	var out bytes.Buffer
	submit.Stdout, submit.Stderr = &out, &out
	require.NoError(t, submit.Start())
	done := make(chan error, 1)
	go func() { done <- submit.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("tasks run gave up while the store was held (%v): %s", err, out.String())
	case <-time.After(gateway.StartWait + 2*time.Second): // hold past the wait a starting gateway gets
	}
	require.NoError(t, release.Close())
	require.NoError(t, holder.Wait())
	select {
	case err := <-done:
		require.NoError(t, err, "tasks run once the store was free: %s", out.String())
	case <-time.After(time.Minute):
		t.Fatalf("tasks run did not end within a minute of the store coming free: %s", out.String())
	}

	var list struct{ Tasks []*sdk.Task }
	require.NoError(t, json.Unmarshal([]byte(flowgate(t, bin, "--home", dir, "tasks", "list", "--json")), &list))
	require.Len(t, list.Tasks, 1, "the submission created its task once")
	require.Equal(t, "held", list.Tasks[0].Label)
}
