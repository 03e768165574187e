package main_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// TestAWrongApproverIsRefusedAtOnce runs a workflow whose gate only alice
// may approve on a real gateway with the pipeline controller. Bob's
// approval, through tasks flow approve and through Lobster's pipeline
// resume, is refused at once, saying who may approve (exit 2, as Lobster
// exits; a parse_error envelope in tool mode), and the flow still waits
// at the gate, unchanged. Alice's approval resumes it, and the flow's
// own fields hold her decision and the workflow's output, which flow
// show prints.
func TestAWrongApproverIsRefusedAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	wf := filepath.Join(work, "release.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: release
steps:
  - id: gate
    stdin: release 1.2
    approval:
      prompt: Release?
      initiated_by: bob
      required_approver: alice
  - id: ship
    run: echo shipped
`), 0o600))
	g := startGateway(t, bin, home, logf)
	defer g.kill(t)
	flowID := runDetached(t, bin, home, wf)
	polltest.Until(t, "the flow to park at its gate", func() bool {
		return viewFlow(t, home, flowID).Status == sdk.FlowWaiting
	}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	parked := viewFlow(t, home, flowID)
	gate, ok := sdk.ParseGate(parked.Wait)
	require.True(t, ok)
	require.Equal(t, "alice", gate.RequiredApprover, "the wait carries the approver rules")

	refused := func(args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--home", home}, args...)...)
		var out, errOut []byte
		out, err := cmd.Output()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v refused: %v; stdout: %s", args, err, out)
		errOut = exit.Stderr
		require.Equal(t, 2, exit.ExitCode(), "a refused answer is invalid input; stderr: %s", errOut)
		require.Contains(t, string(errOut), "Workflow step gate approval requires approver 'alice', got 'bob'")
		now := viewFlow(t, home, flowID)
		require.Equal(t, sdk.FlowWaiting, now.Status, "the flow still waits at the gate")
		require.Equal(t, parked.Revision, now.Revision, "the refusal changed nothing")
		require.Empty(t, now.Decisions)
		return string(out), string(errOut)
	}
	refused("tasks", "flow", "approve", flowID, "--by", "bob")
	out, _ := refused("pipeline", "resume", "--id", gate.ApprovalID, "--approve", "yes", "--by", "bob", "--mode", "tool")
	var env struct {
		OK    bool `json:"ok"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &env), "%s", out)
	require.False(t, env.OK)
	require.Equal(t, "parse_error", env.Error.Type, "as Lobster refuses it")

	flowgate(t, bin, "--home", home, "tasks", "flow", "approve", flowID, "--by", "alice")
	polltest.Until(t, "the flow to end", func() bool {
		return viewFlow(t, home, flowID).Status.Terminal()
	}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	done := viewFlow(t, home, flowID)
	require.Equal(t, sdk.FlowSucceeded, done.Status, done.BlockedSummary)
	require.Equal(t, "alice", done.Decisions["gate"].By)
	require.NotNil(t, done.Output)
	require.JSONEq(t, `["shipped\n"]`, string(done.Output.Value))

	shown := flowgate(t, bin, "--home", home, "tasks", "flow", "show", flowID)
	require.Contains(t, shown, "Gate decisions:\n- gate approved by alice at ")
	require.Contains(t, shown, "Output:\n  [\n    \"shipped\\n\"\n  ]")
}
