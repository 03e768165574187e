package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store/storetest"
)

// The reads that decode only the head of a flow's record (FlowHalted, a
// task's write its managed flow is not told of) refuse a damaged flow as
// a whole read does.
func TestFlowHeadReadsRefuseADamagedFlow(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f := createFlow(t, eng)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Runtime: "cli"})
	require.NoError(t, err)
	why, err := eng.FlowHalted(f.ID)
	require.NoError(t, err)
	require.Empty(t, why)

	storetest.EditRecord(t, st, "flow/"+f.ID, map[string]any{"status": "done"})
	_, err = eng.FlowHalted(f.ID)
	requireDamaged(t, err, "flow/"+f.ID, `status "done" is not a flow status`)
	_, err = eng.StartTask(task.ID, engine.StartInput{})
	requireDamaged(t, err, "flow/"+f.ID, `status "done" is not a flow status`)

	storetest.EditRecord(t, st, "flow/"+f.ID, map[string]any{"status": "running", "controller_id": ""})
	_, err = eng.StartTask(task.ID, engine.StartInput{})
	requireDamaged(t, err, "flow/"+f.ID, "a managed flow without a controller id")

	storetest.EditRecord(t, st, "flow/"+f.ID, map[string]any{"controller_id": "ctl"})
	started, err := eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err, "the repaired flow's task starts")
	require.Equal(t, 1, started.Attempts)
}
