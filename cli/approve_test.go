package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// parkAtGate seeds a flow waiting at a gate of kind, of a controller no
// gateway runs: answering it records the decision and leaves the flow
// running until that controller's gateway starts.
func parkAtGate(t *testing.T, home, kind string) *sdk.Flow {
	t.Helper()
	var f *sdk.Flow
	seed(t, home, func(eng *engine.Engine) {
		var err error
		f, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "review-bot", Goal: "brief", State: json.RawMessage(`{"file":"/w.lobster","results":{}}`)})
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
	require.True(t, *got.Decisions["review"].Approved)
	require.Equal(t, "ana", got.Decisions["review"].By)
	require.NotContains(t, string(got.State), "decisions", "the gateway leaves the controller's state alone")

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

// gateFile writes a workflow that stops at an approval gate and then
// touches a file, and returns the workflow's path and the file's.
func gateFile(t *testing.T) (file, out string) {
	t.Helper()
	dir := t.TempDir()
	out = filepath.Join(dir, "shipped")
	file = filepath.Join(dir, "ship.lobster")
	require.NoError(t, os.WriteFile(file, []byte("name: ship\nsteps:\n  - id: gate\n    approval: Ship it?\n  - id: after\n    run: touch "+out+"\n"), 0o600))
	return file, out
}

// parkPipeline runs file with no gateway to its gate and returns the
// gate's short approval id and flow id.
func parkPipeline(t *testing.T, home, file string) (approvalID, flowID string) {
	t.Helper()
	code, stdout, errOut := run(t, home, "pipeline", "run", file, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	var env struct {
		FlowID           string
		RequiresApproval struct{ ApprovalID string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.NotEmpty(t, env.RequiresApproval.ApprovalID)
	return env.RequiresApproval.ApprovalID, env.FlowID
}

// TestApproveWithNoGatewayRunsTheFlowOn answers a pipeline gate by its
// short approval id with no gateway running: the command hosts one until
// the flow ends, so the step after the gate runs before it returns.
func TestApproveWithNoGatewayRunsTheFlowOn(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	file, out := gateFile(t)
	id, flowID := parkPipeline(t, home, file)

	code, stdout, errOut := run(t, home, "approvals")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "flowgate tasks flow approve|deny <id>", "the hint names a command that takes the id shown")

	code, stdout, errOut = run(t, home, "tasks", "flow", "show", id)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, flowID, "show takes the short approval id")

	code, stdout, errOut = run(t, home, "tasks", "flow", "approve", id, "--by", "ana")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "Approved the gate at step gate of flow "+flowID+" (by ana); the flow is succeeded.")
	_, err := os.Stat(out)
	require.NoError(t, err, "the step after the gate ran before the command returned")
}

// TestDenyTellsTheFlowIsCancelled denies a pipeline gate: the answer says
// so, and the flow is really cancelled, its later step never run.
func TestDenyTellsTheFlowIsCancelled(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	file, out := gateFile(t)
	id, flowID := parkPipeline(t, home, file)

	code, stdout, errOut := run(t, home, "tasks", "flow", "deny", id, "--by", "bo")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "Denied the gate at step gate of flow "+flowID+" (by bo); the flow is cancelled.")
	require.NotContains(t, stdout, "resumes")
	code, stdout, _ = run(t, home, "tasks", "flow", "show", flowID, "--json")
	require.Equal(t, 0, code)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(stdout), &f))
	require.Equal(t, sdk.FlowCancelled, f.Status)
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "a denied flow runs nothing after its gate")
}

// TestResumeToolModeRefusalPrintsTheEnvelope answers a gate twice in tool
// mode: the second answer is refused with Lobster's error envelope on
// stdout and the usage exit code.
func TestResumeToolModeRefusalPrintsTheEnvelope(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	file, _ := gateFile(t)
	id, _ := parkPipeline(t, home, file)
	code, _, errOut := run(t, home, "pipeline", "resume", "--id", id, "--approve", "no", "--mode", "tool")
	require.Equal(t, 0, code, errOut)

	code, stdout, errOut := run(t, home, "pipeline", "resume", "--id", id, "--approve", "yes", "--mode", "tool")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no open gate")
	var env struct {
		ProtocolVersion int
		OK              *bool
		Error           struct{ Type, Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), "stdout: %q", stdout)
	require.Equal(t, 1, env.ProtocolVersion)
	require.False(t, *env.OK)
	require.Equal(t, "parse_error", env.Error.Type)
	require.Contains(t, env.Error.Message, "no open gate")

	code, stdout, _ = run(t, home, "pipeline", "resume", "--id", id, "--mode", "tool")
	require.Equal(t, 2, code, "a missing answer is a usage error")
	require.Contains(t, stdout, `"type": "parse_error"`)
}
