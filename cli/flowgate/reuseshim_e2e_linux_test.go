package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// pooledShims returns the identities of the live shims of the pool of
// bin's gateway ("flowgate-shim --warm"), idle or busy.
func pooledShims(bin string) []shim.ProcInfo {
	return processesRunning(filepath.Join(filepath.Dir(bin), "flowgate-shim") + "\x00" + shim.WarmArg + "\x00")
}

// processesRunning returns the identities of the live processes whose
// command line, NUL-separated, is cmdline.
func processesRunning(cmdline string) []shim.ProcInfo {
	want := []byte(cmdline)
	var out []shim.ProcInfo
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, path := range cmdlines {
		if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, want) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			start, err := shim.StartTime(pid)
			if p := (shim.ProcInfo{PID: pid, StartTime: start}); err == nil && shim.Alive(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// shimOfTask returns the identity of the shim that ran the first
// attempt of task id of home, waiting boundedly for it to claim it.
func shimOfTask(t *testing.T, home, id string) shim.ProcInfo {
	t.Helper()
	var s shim.ProcInfo
	polltest.Until(t, "", func() (bool, string) {
		rec, err := shim.ReadRecord(runner.LogDir(home, id, 1))
		if err != nil || rec.Child == nil {
			return false, fmt.Sprintf("task %s's child has not started: %v", id, err)
		}
		s = shim.ProcInfo{PID: rec.Shim.PID, StartTime: rec.Shim.StartTime}
		return true, ""
	}, polltest.Within(20*time.Second), polltest.Every(10*time.Millisecond))
	return s
}

// Tasks run one after another reuse the shims of the pool, and a
// SIGKILL of the gateway loses nothing of them: the idle shims exit with
// their gateway, the busy reused one keeps its task running, the next
// gateway reattaches to it and records the task's end once, and the shim
// then exits, its pipe gone with the gateway that handed it the task.
func TestReusedShimsSurviveGatewaySIGKILL(t *testing.T) {
	t.Parallel()
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	g := startGateway(t, bin, home, logf)
	ctx := context.Background()
	runs := filepath.Join(work, "runs.log")
	record := `echo "$FLOWGATE_TASK_ID" >>` + runs

	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	runTask := func(shell string) string {
		task, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "e2e", Spec: sdk.TaskSpec{Shell: shell, Cwd: work}})
		require.NoError(t, err)
		return task.ID
	}
	ended := func(cl api.Client, id string) *stored.Task {
		var task *stored.Task
		polltest.Until(t, "", func() (bool, string) {
			task, err = cl.ResolveTask(ctx, id)
			require.NoError(t, err)
			return task.Status.Terminal(), "task " + id + " is " + string(task.Status)
		}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
		return task
	}

	// From the third task on, each finds the shim the one before ran on.
	seen := map[shim.ProcInfo]bool{}
	var ids []string
	for range 4 {
		id := runTask(record)
		require.Equal(t, sdk.TaskSucceeded, ended(c, id).Status)
		s := shimOfTask(t, home, id)
		seen[s] = true
		ids = append(ids, id)
	}
	require.Less(t, len(seen), len(ids), "4 tasks one after another ran under %d shims", len(seen))

	blocker := runTask(record + "; while [ ! -e go ]; do sleep 0.05; done")
	ids = append(ids, blocker)
	busy := shimOfTask(t, home, blocker)
	require.True(t, seen[busy], "the blocking task runs on a shim that ran an earlier task")
	var idle []shim.ProcInfo
	polltest.Until(t, "", func() (bool, string) {
		idle = idle[:0]
		for _, p := range pooledShims(bin) {
			if p != busy {
				idle = append(idle, p)
			}
		}
		return len(idle) > 0, "no idle shim waits beside the busy one"
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
	c.Close()

	g.kill(t)
	for _, p := range idle {
		polltest.Until(t, fmt.Sprintf("the idle shim %d to exit with its SIGKILLed gateway", p.PID), func() bool { return !shim.Alive(p) }, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))
	}
	require.True(t, shim.Alive(busy), "the busy shim %d runs its task on", busy.PID)

	g = startGateway(t, bin, home, logf)
	defer g.stop(t)
	c, err = api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	task, err := c.ResolveTask(ctx, blocker)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, task.Status, "the next gateway follows the task on the busy shim")
	require.NoError(t, os.WriteFile(filepath.Join(work, "go"), nil, 0o600))
	task = ended(c, blocker)
	require.Equal(t, sdk.TaskSucceeded, task.Status, "errors: %q", task.Errors)
	require.Equal(t, 1, task.Attempts)
	polltest.Until(t, fmt.Sprintf("the busy shim %d to exit once its task's end is recorded", busy.PID), func() bool { return !shim.Alive(busy) }, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))

	page, err := c.ListTasks(ctx, apitype.TaskFilter{OwnerKey: "e2e"})
	require.NoError(t, err)
	require.Len(t, page.Tasks, len(ids))
	for _, task := range page.Tasks {
		require.Equal(t, sdk.TaskSucceeded, task.Status, "task %s: %q", task.ID, task.Errors)
	}
	b, err := os.ReadFile(runs)
	require.NoError(t, err)
	require.Equal(t, len(ids), bytes.Count(b, []byte("\n")), "every task ran once: %s", b)
}
