package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// crashAfterClaim leaves the state a crash between the claim and the
// creation of the work leaves: a "starting" run, active, with no work id.
func crashAfterClaim(t *testing.T, eng *engine.Engine, jobID string, at time.Time) {
	t.Helper()
	require.NoError(t, eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		if err := putJSON(tx, runKey(jobID, at), Run{JobID: jobID, Scheduled: at, Status: RunStarting}); err != nil {
			return err
		}
		return putSched(tx, jobID, schedRecord{LastScheduled: at, Active: []time.Time{at}})
	}))
}

func TestRecoverStartingRun(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{Owner: t.Name()})
	require.NoError(t, err)
	defer st.Close()
	now := time.Date(2026, 3, 2, 10, 1, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	eng, err := engine.New(st, engine.Config{Now: clock})
	require.NoError(t, err)
	s := New(eng, Config{Now: clock})
	file := filepath.Join(t.TempDir(), "p.lobster")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	cmd, err := s.Jobs().Add(JobInput{Name: "cmd", Schedule: schedule.Flags{Cron: "0 * * * *"}, Command: "true"})
	require.NoError(t, err)
	pipe, err := s.Jobs().Add(JobInput{Name: "pipe", Schedule: schedule.Flags{Cron: "0 * * * *"}, Pipeline: file})
	require.NoError(t, err)

	// The command job crashed after the engine created its task.
	crashAfterClaim(t, eng, cmd.ID, now)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{Runtime: cronRuntime, OwnerKey: ownerKey(cmd.ID), Spec: taskSpec("true"), IdempotencyKey: RunID(cmd.ID, now)})
	require.NoError(t, err)
	// The pipeline job crashed after the engine created its flow.
	crashAfterClaim(t, eng, pipe.ID, now)
	flow, err := s.pipelineFlow(pipe, RunID(pipe.ID, now), nil, false)
	require.NoError(t, err)

	require.NoError(t, s.TickOnce(context.Background()))
	rs, err := s.Runs(cmd.ID, 0)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, RunRunning, rs[0].Status)
	require.Equal(t, task.ID, rs[0].TaskID)
	rs, err = s.Runs(pipe.ID, 0)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, flow.ID, rs[0].FlowID)
	page, err := eng.ListFlows(engine.FlowFilter{OwnerKey: ownerKey(pipe.ID)})
	require.NoError(t, err)
	require.Len(t, page.Flows, 1)
}

func taskSpec(shell string) sdk.TaskSpec { return sdk.TaskSpec{Shell: shell} }
