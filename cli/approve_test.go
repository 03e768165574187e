package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// parkAtGate seeds a pipeline-like flow waiting at a gate of kind.
func parkAtGate(t *testing.T, home, kind string) *sdk.Flow {
	t.Helper()
	var f *sdk.Flow
	seed(t, home, func(eng *engine.Engine) {
		var err error
		f, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "pipeline", Goal: "brief", State: json.RawMessage(`{"file":"/w.lobster","results":{}}`)})
		require.NoError(t, err)
		wait := `{"kind":"` + kind + `","step":"review","prompt":"Publish?","resume_token":"t","approval_id":"abcd1234"}`
		f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(wait)})
		require.NoError(t, err)
	})
	return f
}

func TestApproveRecordsTheDecisionOnceAndResumes(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	f := parkAtGate(t, home, "approval")

	code, out, _ := run(t, home, "approvals", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"approval_id": "abcd1234"`)

	code, _, errOut := run(t, home, "tasks", "flow", "approve", f.ID, "--by", "ana", "--expected-revision", "0")
	require.Equal(t, 3, code, "a stale revision decides nothing")
	require.Contains(t, errOut, "current revision is 2")

	code, _, errOut = run(t, home, "tasks", "flow", "input", f.ID, "--response-json", `{"x":1}`)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "waits at an approval gate")

	code, _, errOut = run(t, home, "tasks", "flow", "approve", f.ID, "--by", "ana")
	require.Equal(t, 0, code, errOut)
	code, out, _ = run(t, home, "tasks", "flow", "show", f.ID, "--json")
	require.Equal(t, 0, code)
	var got sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, sdk.FlowRunning, got.Status)
	var state struct {
		Decisions map[string]struct {
			Approved *bool
			By       string
		}
	}
	require.NoError(t, json.Unmarshal(got.State, &state))
	require.True(t, *state.Decisions["review"].Approved)
	require.Equal(t, "ana", state.Decisions["review"].By)

	code, _, errOut = run(t, home, "tasks", "flow", "deny", f.ID)
	require.Equal(t, 2, code, "a gate is decided once")
	require.Contains(t, errOut, "waits at no gate")
}

func TestInputGateTakesJSON(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	f := parkAtGate(t, home, "input")
	code, _, errOut := run(t, home, "tasks", "flow", "input", f.ID, "--response-json", `{bad`)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--response-json")
	code, _, errOut = run(t, home, "tasks", "flow", "input", f.ID, "--response-json", `{"topic":"markets"}`)
	require.Equal(t, 0, code, errOut)
	code, out, _ := run(t, home, "approvals")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Open gates: 0")
}
