package flowrule_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

var now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func move(f *sdk.Flow, to sdk.FlowStatus) error { return flowrule.Move(f, to, now) }

func running() *sdk.Flow {
	return &sdk.Flow{ID: "f", Status: sdk.FlowRunning, CurrentStep: "fetch", State: json.RawMessage(`{"n":1}`)}
}

func TestParkWaitsOrBlocks(t *testing.T) {
	t.Parallel()
	f := running()
	require.NoError(t, flowrule.Park(f, sdk.WaitRequest{CurrentStep: " review ", Wait: json.RawMessage(`{"kind":"approval"}`)}, move))
	require.Equal(t, sdk.FlowWaiting, f.Status)
	require.Equal(t, "review", f.CurrentStep)
	require.JSONEq(t, `{"n":1}`, string(f.State), "a state not given is kept")
	require.JSONEq(t, `{"kind":"approval"}`, string(f.Wait))

	f = running()
	require.NoError(t, flowrule.Park(f, sdk.WaitRequest{BlockedSummary: " needs a key "}, move))
	require.Equal(t, sdk.FlowBlocked, f.Status)
	require.Equal(t, "needs a key", f.BlockedSummary)
	require.Equal(t, "fetch", f.CurrentStep, "a step not given is kept")

	require.Equal(t, sdk.FlowWaiting, flowrule.ParkStatus(sdk.WaitRequest{BlockedTaskID: "  "}), "spaces block nothing")
}

func TestResumeTellsOnlyAParkedFlow(t *testing.T) {
	t.Parallel()
	f := running()
	require.NoError(t, flowrule.Park(f, sdk.WaitRequest{Wait: json.RawMessage(`{"kind":"input"}`)}, move))
	data, err := flowrule.Resume(f, sdk.ResumeRequest{Status: sdk.FlowRunning, State: json.RawMessage(`null`)}, move)
	require.NoError(t, err)
	require.JSONEq(t, `{"status":"running"}`, string(data))
	require.Equal(t, sdk.FlowRunning, f.Status)
	require.JSONEq(t, `null`, string(f.Wait), "resuming clears the wait")
	require.JSONEq(t, `null`, string(f.State), "JSON null is recorded as null")

	queued := &sdk.Flow{ID: "q", Status: sdk.FlowQueued}
	data, err = flowrule.Resume(queued, sdk.ResumeRequest{}, move)
	require.NoError(t, err)
	require.Nil(t, data, "starting a queued flow tells nobody")
	require.Equal(t, sdk.FlowQueued, queued.Status, "the default status is queued")

	_, err = flowrule.Resume(running(), sdk.ResumeRequest{Status: sdk.FlowSucceeded}, move)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, `a flow resumes as queued or running, not "succeeded"`)
}

func TestEndKeepsWhatAFailureFailedOn(t *testing.T) {
	t.Parallel()
	f := running()
	require.NoError(t, flowrule.End(f, sdk.FlowFailed, sdk.EndRequest{BlockedTaskID: " t-1 ", BlockedSummary: "exit 2"}, move))
	require.Equal(t, sdk.FlowFailed, f.Status)
	require.Equal(t, "t-1", f.BlockedTaskID)
	require.Equal(t, now, f.EndedAt)

	f = running()
	require.NoError(t, flowrule.End(f, sdk.FlowSucceeded, sdk.EndRequest{BlockedSummary: "ignored", CurrentStep: "done"}, move))
	require.Empty(t, f.BlockedSummary, "a success keeps no blocked fields")
	require.Equal(t, "done", f.CurrentStep)

	require.ErrorIs(t, flowrule.End(running(), sdk.FlowCancelled, sdk.EndRequest{}, move), sdk.ErrInvalid)
	require.ErrorIs(t, flowrule.End(f, sdk.FlowFailed, sdk.EndRequest{}, move), sdk.ErrTerminal)
}

func TestARefusedMoveIsReturned(t *testing.T) {
	t.Parallel()
	refused := errors.New("the host refused")
	f := running()
	err := flowrule.Park(f, sdk.WaitRequest{CurrentStep: "x"}, func(*sdk.Flow, sdk.FlowStatus) error { return refused })
	require.ErrorIs(t, err, refused)
	require.Equal(t, "fetch", f.CurrentStep, "nothing is recorded after a refused move")
}

func TestUpdateLeavesWhatItIsNotGiven(t *testing.T) {
	t.Parallel()
	f := running()
	empty, step := "", " parse "
	flowrule.Update(f, sdk.FlowUpdate{CurrentStep: &step, BlockedSummary: &empty, Wait: json.RawMessage(`null`)})
	require.Equal(t, "parse", f.CurrentStep)
	require.JSONEq(t, `{"n":1}`, string(f.State), "a state not given is kept")
	require.JSONEq(t, `null`, string(f.Wait))
	require.Equal(t, sdk.FlowRunning, f.Status, "Update never moves a flow")
}

func TestMoveKeepsTheFieldsOfEachStatus(t *testing.T) {
	t.Parallel()
	blocked := &sdk.Flow{ID: "f", Status: sdk.FlowBlocked, BlockedTaskID: "t", BlockedSummary: "needs a key", Wait: json.RawMessage(`{"kind":"x"}`)}

	failed := *blocked
	require.NoError(t, flowrule.Move(&failed, sdk.FlowFailed, now))
	require.Equal(t, now, failed.EndedAt, "a terminal status stamps its end")
	require.JSONEq(t, `null`, string(failed.Wait), "an ended flow waits for nothing")
	require.Equal(t, "needs a key", failed.BlockedSummary, "failed keeps why it was blocked")

	running := *blocked
	require.NoError(t, flowrule.Move(&running, sdk.FlowRunning, now))
	require.Zero(t, running.EndedAt)
	require.Empty(t, running.BlockedTaskID+running.BlockedSummary, "running clears the blocked fields")

	done := failed
	err := flowrule.Move(&done, sdk.FlowRunning, now.Add(time.Hour))
	require.ErrorIs(t, err, sdk.ErrTerminal)
	require.Equal(t, failed, done, "a refused move changes nothing")
}
