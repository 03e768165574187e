package main_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// takeoverTTL is the lease of the gateways of the takeover bound's run:
// the bound is that and takeoverGrace, as issue 27 promises.
const (
	takeoverTTL   = 10 * time.Second
	takeoverGrace = 5 * time.Second
)

// TestDeadGatewaysTasksAreTakenOverWithinTheBound: three gateways share
// 60 short and long tasks, a third of them safe to repeat. One is
// SIGKILLed while it starts and runs tasks, and two of its tasks that are
// safe to repeat are asked to stop. Within its lease TTL plus 5 s every
// task whose record names it as running it is settled or queued again by
// the others: none is left running on the dead gateway. Before, a task
// safe to repeat with a cancel request was refused its requeue at every
// sweep, and stayed running for ever. The bound is the promise, not a
// speed: the wait ends at it.
func TestDeadGatewaysTasksAreTakenOverWithinTheBound(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an embedded etcd")
	}
	f := newFleet(t, takeoverTTL)
	live := []*fleetMember{f.join("a"), f.join("b"), f.join("c")}
	ctx := context.Background()
	for i := range 60 {
		in := apitype.CreateTaskInput{OwnerKey: "takeover", Label: fmt.Sprintf("task-%02d", i),
			Spec: sdk.TaskSpec{Cwd: f.work, Shell: fmt.Sprintf("sleep %.1f", 0.2+float64(i%10)*0.6)}}
		if i%3 == 0 {
			in.Spec.Retry = &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(100 * time.Millisecond), SafeToRepeat: true}
		}
		_, _, err := live[i%3].api.RunTask(ctx, in)
		require.NoError(t, err)
	}
	dead := live[0]
	polltest.Until(t, "", func() (bool, string) {
		ts := f.tasks()
		return len(runningOn(ts, dead.id)) >= 6 && countOf(ts, func(t *stored.Task) bool { return t.Status.Terminal() }) >= 3,
			fmt.Sprintf("waiting for gateway a to run tasks while others end: %v", tally(ts))
	}, polltest.Within(time.Minute), polltest.Every(20*time.Millisecond))
	dead.kill(t)
	killed := time.Now()
	// Someone asks to stop a task of the dead gateway that is safe to
	// repeat: it is not queued again, and must be settled all the same.
	var cancelled []string
	for _, task := range runningOn(f.tasks(), dead.id) {
		if safeToRepeat(task) && len(cancelled) < 2 {
			_, err := live[1].api.CancelTask(ctx, task.ID)
			require.NoError(t, err)
			cancelled = append(cancelled, task.ID)
		}
	}
	bound := takeoverTTL + takeoverGrace
	polltest.Until(t, "", func() (bool, string) {
		left := runningOn(f.tasks(), dead.id)
		var why []string
		for _, task := range left {
			why = append(why, fmt.Sprintf("%s (attempt %d, pid %d, updated %s before the kill)", task.ID, task.Attempts, task.PID,
				killed.Sub(task.UpdatedAt).Round(time.Millisecond)))
		}
		return len(left) == 0, fmt.Sprintf("%d tasks still running on gateway %s %s after it was killed: %v",
			len(left), dead.id, time.Since(killed).Round(time.Millisecond), why)
	}, polltest.Within(bound), polltest.Every(50*time.Millisecond))
	for _, id := range cancelled {
		task, err := f.eng.GetTask(id)
		require.NoError(t, err)
		require.Equal(t, sdk.TaskLost, task.Status, "task %s, asked to stop, is not queued again: %q", id, task.Errors)
		require.Contains(t, task.Errors[len(task.Errors)-1], "not re-run: a cancel was asked for")
	}
	t.Logf("gateway a's tasks were taken over %s after it was killed (lease %s)", time.Since(killed).Round(time.Millisecond), takeoverTTL)
}
