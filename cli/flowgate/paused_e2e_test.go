package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/stored"
)

// TestDetachedRunToAPausedGateway pauses the real gateway (SIGSTOP) after
// it recorded a tasks run --detach submission and while the command waits
// for the task to start (--on a label no gateway has keeps it queued, so
// the command is still asking). The command must not wait forever: once
// the gateway gives no answer within FLOWGATE_ANSWER_WAIT it exits 5, the
// outcome unknown, and says how to look. When the gateway goes on
// (SIGCONT), the task is there.
func TestDetachedRunToAPausedGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary, paused")
	}
	bin := buildFlowgate(t)
	home, _, logf := e2eDirs(t)
	g := startGateway(t, bin, home, logf)
	t.Cleanup(g.reap)
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()

	run := exec.Command(bin, "--home", home, "tasks", "run", "--detach", "--on", "nowhere", "--owner", "paused", "--", "true")
	run.Env = append(os.Environ(), "FLOWGATE_ANSWER_WAIT=2s")
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	require.NoError(t, run.Start())
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	var task *stored.Task
	polltest.Until(t, "the submission to be recorded", func() bool {
		page, err := c.ListTasks(context.Background(), apitype.TaskFilter{OwnerKey: "paused"})
		require.NoError(t, err)
		if len(page.Tasks) == 0 {
			return false
		}
		task = page.Tasks[0]
		return true
	}, polltest.Within(10*time.Second), polltest.Every(50*time.Millisecond))

	g.signal(t, syscall.SIGSTOP)
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			g.signal(t, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatalf("tasks run --detach still waited for the paused gateway after a minute; stderr: %s", stderr.String())
	}
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "tasks run --detach to a paused gateway: %v; stderr: %s", err, stderr.String())
	require.Equal(t, 5, exit.ExitCode(), "outcome unknown; stderr: %s", stderr.String())
	require.Contains(t, stderr.String(), "unknown")
	require.Contains(t, stderr.String(), "flowgate tasks show "+task.ID, "it says how to look")
	require.Contains(t, stdout.String(), task.ID, "it names the task it submitted")

	resume()
	var shown stored.Task
	require.NoError(t, json.Unmarshal([]byte(flowgate(t, bin, "--home", home, "tasks", "show", task.ID, "--json")), &shown))
	require.Equal(t, task.ID, shown.ID)
	require.Equal(t, "paused", shown.OwnerKey)
}
