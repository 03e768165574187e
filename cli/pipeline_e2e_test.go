package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPipelineRunsToAGateAndOnAfterApproval runs the market-brief example
// through a gateway hosted by the command and the real pipeline plugin
// process: it stops at the approval gate, and resuming it runs the rest.
func TestPipelineRunsToAGateAndOnAfterApproval(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	out := filepath.Join(t.TempDir(), "brief.txt")
	args := `{"market":"coffee","out":"` + out + `"}`

	code, stdout, errOut := run(t, home, "pipeline", "run", "../examples/pipelines/market-brief.lobster", "--args-json", args, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	var env struct {
		ProtocolVersion  int
		OK               bool
		Status           string
		RequiresApproval struct {
			Prompt, Preview, ResumeToken, ApprovalID string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, 1, env.ProtocolVersion)
	require.True(t, env.OK)
	require.Equal(t, "needs_approval", env.Status)
	require.Equal(t, "Publish this brief?", env.RequiresApproval.Prompt)
	require.Contains(t, env.RequiresApproval.Preview, `"average": 101.17`)
	require.NotEmpty(t, env.RequiresApproval.ApprovalID)
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "nothing is delivered before the approval")

	code, stdout, _ = run(t, home, "approvals")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, env.RequiresApproval.ApprovalID)

	code, stdout, errOut = run(t, home, "pipeline", "resume", "--id", env.RequiresApproval.ApprovalID, "--approve", "yes", "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `"status": "ok"`)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.JSONEq(t, `{"average": 101.17, "samples": 3}`, string(b))

	code, _, errOut = run(t, home, "pipeline", "resume", "--token", env.RequiresApproval.ResumeToken, "--approve", "yes")
	require.Equal(t, 2, code, "a token resumes at most once")
	require.Contains(t, errOut, "no open gate")
}

func TestPipelineEnvelopeForInputDenyAndFailure(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	input := write("input.lobster", `name: ask
steps:
  - id: draft
    run: echo '{"title":"draft"}'
  - id: review
    input:
      prompt: Pick a title
      responseSchema:
        type: object
        required: [title]
        properties:
          title: {type: string}
  - id: use
    stdin: $review.response
    run: cat
`)
	code, stdout, errOut := run(t, home, "pipeline", "run", input, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	var env struct {
		Status        string
		RequiresInput struct {
			Prompt      string
			ResumeToken string
		}
		Output json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, "needs_input", env.Status)
	require.Equal(t, "Pick a title", env.RequiresInput.Prompt)

	code, stdout, errOut = run(t, home, "pipeline", "resume", "--token", env.RequiresInput.ResumeToken, "--response-json", `{"title":"Final"}`, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, "ok", env.Status)
	require.JSONEq(t, `[{"title":"Final"}]`, string(env.Output))

	gate := write("gate.lobster", "name: gate\nsteps:\n  - id: ok\n    approval: Proceed?\n  - id: after\n    run: echo never\n")
	code, stdout, _ = run(t, home, "pipeline", "run", gate, "--mode", "tool")
	require.Equal(t, 0, code)
	var paused struct{ RequiresApproval struct{ ApprovalID string } }
	require.NoError(t, json.Unmarshal([]byte(stdout), &paused))
	code, stdout, _ = run(t, home, "pipeline", "resume", "--id", paused.RequiresApproval.ApprovalID, "--approve", "no", "--mode", "tool")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, `"status": "cancelled"`)

	fail := write("fail.lobster", "name: fail\nsteps:\n  - id: boom\n    run: echo broken >&2; exit 4\n")
	code, stdout, _ = run(t, home, "pipeline", "run", fail, "--mode", "tool")
	require.Equal(t, 1, code)
	require.Contains(t, stdout, `"ok": false`)
	require.Contains(t, stdout, `"type": "runtime_error"`)
	require.Contains(t, stdout, "boom")
	code, _, errOut = run(t, home, "pipeline", "run", fail)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "boom")
}

// TestPipelineParallelAnyCancelsTheLoser runs the parallel example through
// the real gateway and plugin: the race's loser is cancelled.
func TestPipelineParallelAnyCancelsTheLoser(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "pipeline", "run", "../examples/pipelines/parallel.lobster")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "first to answer quick")
	// The run ends with the winner; the loser's cancel may still be on its
	// way to its shim, and the commands that follow (no gateway runs)
	// settle it.
	statuses := map[string]string{}
	require.Eventually(t, func() bool {
		code, stdout, _ := run(t, home, "tasks", "list", "--json")
		var l struct {
			Tasks []struct {
				Label, Status string
			}
		}
		if code != 0 || json.Unmarshal([]byte(stdout), &l) != nil {
			return false
		}
		for _, task := range l.Tasks {
			statuses[task.Label] = task.Status
		}
		return statuses["first/slower"] != "running"
	}, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, "succeeded", statuses["first/quick"])
	require.Equal(t, "cancelled", statuses["first/slower"], "the loser was stopped")
}
