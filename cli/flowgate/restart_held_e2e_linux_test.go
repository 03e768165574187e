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
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
)

// TestSubmitWaitsOutAHeldStore submits a task while a real process (util-
// linux flock) holds the store's lock with no gateway serving the socket,
// as a gateway does while it stops and while the next one starts, for
// longer than a starting gateway is waited for (gateway.StartWait). A
// submission, and a command that reads, must not give up with "store is
// in use": once the lock is free the submission hosts a gateway itself
// and exits 0 with the task created once, and the reader reads.
func TestCommandsWaitOutAHeldStore(t *testing.T) {
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
	polltest.Until(t, "the stand-in to hold the store", func() bool {
		return errors.Is(store.Held(db), store.ErrLocked)
	}, polltest.Within(10*time.Second), polltest.Every(50*time.Millisecond))

	// A command that runs work and one that reads, both meeting the
	// held store.
	commands := [][]string{
		{"tasks", "run", "--detach", "--owner", "held", "--label", "held", "--", "true"},
		{"tasks", "list"},
	}
	outs := make([]*bytes.Buffer, len(commands))
	done := make(chan int, len(commands))
	errs := make([]error, len(commands))
	for i, args := range commands {
		cmd := exec.Command(bin, append([]string{"--home", dir}, args...)...)
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		require.NoError(t, cmd.Start())
		go func() { errs[i] = cmd.Wait(); done <- i }()
	}
	select {
	case i := <-done:
		t.Fatalf("flowgate %v gave up while the store was held (%v): %s", commands[i], errs[i], outs[i].String())
	case <-time.After(gateway.StartWait + 2*time.Second): // hold past the wait a starting gateway gets
	}
	require.NoError(t, release.Close())
	require.NoError(t, holder.Wait())
	for range commands {
		select {
		case i := <-done:
			require.NoError(t, errs[i], "flowgate %v once the store was free: %s", commands[i], outs[i].String())
		case <-time.After(time.Minute):
			t.Fatalf("a command did not end within a minute of the store coming free")
		}
	}

	var list struct{ Tasks []*stored.Task }
	require.NoError(t, json.Unmarshal([]byte(flowgate(t, bin, "--home", dir, "tasks", "list", "--json")), &list))
	require.Len(t, list.Tasks, 1, "the submission created its task once")
	require.Equal(t, "held", list.Tasks[0].Label)
}
