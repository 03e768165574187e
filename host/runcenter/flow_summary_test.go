package runcenter_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// A flow's page labels its summary by what happened: a failed flow's
// says why it failed, a partial one's why it partly failed, and only a
// blocked flow's reads "Blocked".
func TestFlowPageLabelsTheSummaryByHowTheFlowStands(t *testing.T) {
	t.Parallel()
	ids := map[sdk.FlowStatus]string{}
	s := startSeeded(t, func(eng *engine.Engine) {
		for _, status := range []sdk.FlowStatus{sdk.FlowFailed, sdk.FlowPartial, sdk.FlowBlocked} {
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: string(status), AllowUnknownController: true})
			require.NoError(t, err)
			summary := "step build " + string(status)
			switch status {
			case sdk.FlowBlocked:
				f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowBlocked, BlockedSummary: &summary})
			default:
				f, err = eng.Fail(f.ID, f.Revision, engine.EndInput{Partial: status == sdk.FlowPartial, BlockedSummary: summary})
			}
			require.NoError(t, err)
			require.Equal(t, status, f.Status)
			ids[status] = f.ID
		}
	})
	for status, want := range map[sdk.FlowStatus]string{
		sdk.FlowFailed:  `<dt id="flow-summary-label">Failed because</dt><dd>step build failed</dd>`,
		sdk.FlowPartial: `<dt id="flow-summary-label">Partly failed because</dt><dd>step build partial</dd>`,
		sdk.FlowBlocked: `<dt id="flow-summary-label">Blocked</dt><dd>step build blocked</dd>`,
	} {
		page := s.get("/flows/"+ids[status], "")
		require.Contains(t, page, want, "the %s flow's page", status)
		if status != sdk.FlowBlocked {
			require.NotContains(t, page, ">Blocked</dt>", "a %s flow is not blocked", status)
		}
	}
}
