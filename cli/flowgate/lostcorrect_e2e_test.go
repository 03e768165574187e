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
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// heldShell is a task's command that waits until the file release is
// made in its working directory, then prints done: it ends when the test
// says, not after a guessed time.
const heldShell = "while [ ! -e release ]; do sleep 0.05; done; echo done"

// TestRestartCorrectsALostTaskThatSucceeded: on one gateway with its
// bbolt store, a task is marked lost while its shim goes on (the gateway
// was SIGKILLed, and a previous run recorded the attempt as lost); the
// shim then records that the command succeeded. The gateway started
// again on that home corrects the task to succeeded, with its one-task
// flow, and says so in the history. Before, lost was for ever.
func TestRestartCorrectsALostTaskThatSucceeded(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	dir, work, logf := e2eDirs(t)
	ctx := context.Background()
	g := startGateway(t, bin, dir, logf)
	c, err := api.DialRemote(gateway.SocketPath(dir))
	require.NoError(t, err)
	task, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "e2e", Label: "held", Spec: sdk.TaskSpec{Cwd: work, Shell: heldShell}})
	require.NoError(t, err)
	polltest.Until(t, "", func() (bool, string) {
		now, err := c.ResolveTask(ctx, task.ID)
		require.NoError(t, err)
		return now.Status == sdk.TaskRunning && now.PID != 0, "task " + task.ID + " did not start"
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
	c.Close()
	g.kill(t)

	// The lost mark a previous run made: the runner's own write, through
	// the engine, on the home's store while no gateway holds it. (On one
	// gateway, nothing marks lost a task whose shim lives; a gateway of
	// an etcd installation does, see
	// TestResumedGatewayCorrectsTasksTakenForLost.)
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{})
	require.NoError(t, err)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskLost, Attempt: 1, Reason: "lost",
		Error: "attempt 1: lost: the gateway that ran it was gone; the command may or may not have finished"})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	require.NoError(t, os.WriteFile(filepath.Join(work, "release"), nil, 0o600))
	attempt := runner.LogDir(dir, task.ID, 1)
	polltest.Until(t, "", func() (bool, string) {
		rec, err := shim.ReadRecord(attempt)
		return err == nil && rec.Status != nil, fmt.Sprintf("the shim of %s recorded no end: %v", task.ID, err)
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))

	g = startGateway(t, bin, dir, logf)
	defer g.kill(t)
	c, err = api.DialRemote(gateway.SocketPath(dir))
	require.NoError(t, err)
	defer c.Close()
	polltest.Until(t, "", func() (bool, string) {
		now, err := c.ResolveTask(ctx, task.ID)
		require.NoError(t, err)
		return now.Status == sdk.TaskSucceeded, fmt.Sprintf("task %s is %s: %q", task.ID, now.Status, now.Errors)
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
	checkCorrected(t, c, task.ID, "")
}

// checkCorrected asserts that task id was corrected from lost to
// succeeded, exit 0 and its output kept, with its one-task flow, and
// that the correction is in the flow's history naming the shim record
// (and by, when not empty, the gateway that read it).
func checkCorrected(t *testing.T, c api.Client, id, by string) {
	t.Helper()
	ctx := context.Background()
	task, err := c.ResolveTask(ctx, id)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskSucceeded, task.Status)
	require.NotNil(t, task.ExitCode)
	require.Equal(t, 0, *task.ExitCode)
	require.NotNil(t, task.Result)
	require.Equal(t, "done\n", task.Result.Stdout, "task %s", id)
	v, err := c.ViewFlow(ctx, task.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowSucceeded, v.Status, "the mirrored flow of %s", id)
	page, err := c.History(ctx, task.FlowID, 0, 0)
	require.NoError(t, err)
	var summaries []string
	for _, e := range page.Entries {
		if e.Kind == apitype.HistoryTaskCorrected {
			summaries = append(summaries, e.Summary)
		}
	}
	require.Len(t, summaries, 1, "task %s: one correction in its flow's history", id)
	require.Contains(t, summaries[0], "corrected: lost → succeeded from the shim record of its attempt in")
	if by != "" {
		require.True(t, strings.HasSuffix(summaries[0], "read by gateway "+by), "%s", summaries[0])
	}
}

// TestResumedGatewayCorrectsTasksTakenForLost: on an etcd installation,
// gateway a is paused (SIGSTOP) while its tasks run; its lease ends and
// gateway b marks them lost, as it must not know better. Their shims go
// on and the commands succeed; when a resumes, it reads their records and
// corrects each task to succeeded. Then a gateway on a's home is killed
// while more tasks run, b marks them lost, they succeed, and a gateway
// started again on that home corrects them. Before, the lost marks
// stood.
func TestResumedGatewayCorrectsTasksTakenForLost(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an embedded etcd")
	}
	f := newFleet(t, clusterLeaseTTL)
	a, b := f.join("a"), f.join("b")

	paused := heldTasks(t, f, a, "paused")
	a.signal(t, syscall.SIGSTOP)
	release(t, f, a.home, paused)
	a.signal(t, syscall.SIGCONT)
	for _, id := range paused {
		waitSucceeded(t, f, id)
		checkCorrected(t, b.api, id, a.id)
	}

	// A gateway whose lease ended starts nothing more: a new one on a's
	// home runs the next tasks.
	a.kill(t)
	a = f.rejoin(a)
	killed := heldTasks(t, f, a, "killed")
	a.kill(t)
	release(t, f, a.home, killed)
	f.rejoin(a)
	for _, id := range killed {
		waitSucceeded(t, f, id)
		checkCorrected(t, b.api, id, "")
	}
}

// heldTasks runs three tasks of heldShell on gateway m, each in a work
// directory of its own named after what, and waits, bounded, until each
// runs its command there; it returns their ids.
func heldTasks(t *testing.T, f *fleet, m *fleetMember, what string) []string {
	t.Helper()
	var ids []string
	for i := range 3 {
		cwd := filepath.Join(f.work, fmt.Sprintf("%s-%d", what, i))
		require.NoError(t, os.MkdirAll(cwd, 0o700))
		task, _, err := m.api.RunTask(context.Background(), apitype.CreateTaskInput{OwnerKey: what, Label: fmt.Sprintf("%s-%d", what, i),
			Spec: sdk.TaskSpec{Cwd: cwd, Shell: heldShell, On: m.name}})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	for _, id := range ids {
		polltest.Until(t, "", func() (bool, string) {
			now, err := f.eng.GetTask(id)
			require.NoError(t, err)
			return now.Status == sdk.TaskRunning && now.PID != 0, fmt.Sprintf("task %s is %s on %q", id, now.Status, now.Gateway)
		}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
	}
	return ids
}

// release waits, bounded, until the gateways still members mark the
// tasks lost, then lets their commands end, and waits until each shim,
// under dir, recorded that end.
func release(t *testing.T, f *fleet, dir string, ids []string) {
	t.Helper()
	for _, id := range ids {
		polltest.Until(t, "", func() (bool, string) {
			now, err := f.eng.GetTask(id)
			require.NoError(t, err)
			return now.Status == sdk.TaskLost, fmt.Sprintf("task %s is %s, not yet taken over", id, now.Status)
		}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	}
	for _, id := range ids {
		task, err := f.eng.GetTask(id)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(task.Spec.Cwd, "release"), nil, 0o600))
		polltest.Until(t, "", func() (bool, string) {
			rec, err := shim.ReadRecord(runner.LogDir(dir, id, 1))
			return err == nil && rec.Status != nil, fmt.Sprintf("the shim of %s recorded no end: %v", id, err)
		}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
	}
}

// waitSucceeded waits, bounded, until task id succeeded.
func waitSucceeded(t *testing.T, f *fleet, id string) {
	t.Helper()
	polltest.Until(t, "", func() (bool, string) {
		now, err := f.eng.GetTask(id)
		require.NoError(t, err)
		return now.Status == sdk.TaskSucceeded, fmt.Sprintf("task %s is %s: %q", id, now.Status, now.Errors)
	}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
}
