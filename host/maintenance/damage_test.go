package maintenance_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store/storetest"
	"github.com/flowgate/flowgate/sdk"
)

// A flow with status "done", an undecodable flow and a task with an
// unknown status never stop a pass (e.run requires no errors):
// the preview counts them and writes nothing; applying moves them to the
// quarantine (not into the indexes), after which the index check is
// clean and the rest of the records were still maintained.
func TestMaintenanceQuarantinesDamagedRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	done, err := e.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	storetest.EditRecord(t, e.st, "flow/"+done.ID, map[string]any{"status": "done"})
	storetest.PutRaw(t, e.st, "flow/zz-garbled", []byte("{not json"))
	healthy := e.task(sdk.TaskSucceeded)
	storetest.EditRecord(t, e.st, "task/"+healthy.ID, map[string]any{"cleanup_after": nil})
	lost := e.task(sdk.TaskSucceeded) // its mirrored flow is read by the flow rules
	storetest.EditRecord(t, e.st, "task/"+lost.ID, map[string]any{"status": "vanished"})

	preview := e.run(false)
	require.Equal(t, 3, preview.Quarantined)
	require.Equal(t, 1, preview.Tasks.CleanupStamped, "the healthy records are still maintained")
	list, err := e.eng.ListQuarantine()
	require.NoError(t, err)
	require.Empty(t, list, "a preview writes nothing")

	applied := e.run(true)
	require.Equal(t, 3, applied.Quarantined)
	require.Equal(t, 1, applied.Tasks.CleanupStamped)
	list, err = e.eng.ListQuarantine()
	require.NoError(t, err)
	require.Len(t, list, 3)
	problems, err := e.eng.CheckIndexes()
	require.NoError(t, err)
	require.Empty(t, problems, "nothing damaged is left, and nothing of it is indexed")
	page, err := e.eng.ListFlows(engine.FlowFilter{})
	require.NoError(t, err)
	require.Empty(t, page.Damaged)

	again := e.run(true)
	require.Zero(t, again.Quarantined+again.Indexes, "a second pass finds nothing")
}
