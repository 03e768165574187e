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

// An answer to an input gate that fails the gate's schema exits 2 with
// the schema's error; the gate stays open at the same step, the flow's
// history records the refused answer and why, and a good answer then
// goes through.
func TestInputAnswerThatFailsTheSchemaIsRefused(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	wf := filepath.Join(t.TempDir(), "ask.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: ask
steps:
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
`), 0o600))
	code, stdout, errOut := run(t, home, "pipeline", "run", wf, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	var env struct {
		FlowID        string `json:"flowId"`
		RequiresInput struct{ ResumeToken string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	code, stdout, errOut = run(t, home, "approvals", "--json")
	require.Equal(t, 0, code, errOut)
	var open struct{ Approvals []engine.OpenGate }
	require.NoError(t, json.Unmarshal([]byte(stdout), &open), stdout)
	require.Len(t, open.Approvals, 1)
	id := open.Approvals[0].FlowID

	code, _, errOut = run(t, home, "tasks", "flow", "input", id, "--response-json", `{"title":7}`, "--by", "ana")
	require.Equal(t, 2, code, "a response the schema rejects is invalid input: %s", errOut)
	require.Contains(t, errOut, "Workflow input step review response failed schema validation at /title: must be string")

	code, stdout, errOut = run(t, home, "tasks", "flow", "show", id, "--json")
	require.Equal(t, 0, code, errOut)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(stdout), &f), stdout)
	require.Equal(t, sdk.FlowWaiting, f.Status, "the gate stays open")
	g, ok := sdk.ParseGate(f.Wait)
	require.True(t, ok)
	require.Equal(t, "review", g.Step)

	code, stdout, errOut = run(t, home, "tasks", "flow", "history", id, "--json")
	require.Equal(t, 0, code, errOut)
	var page engine.HistoryPage
	require.NoError(t, json.Unmarshal([]byte(stdout), &page), stdout)
	var refused []engine.HistoryEntry
	for _, e := range page.Entries {
		require.NotEqual(t, engine.HistoryGateAnswered, e.Kind, "a refused answer is no answer")
		if e.Kind == engine.HistoryGateRefused {
			refused = append(refused, e)
		}
	}
	require.Len(t, refused, 1, "the history keeps the refused answer")
	require.Equal(t, "ana", refused[0].By)
	require.Contains(t, refused[0].Summary, "at /title: must be string")

	code, stdout, errOut = run(t, home, "pipeline", "resume", "--token", env.RequiresInput.ResumeToken, "--response-json", `{"title":"Final"}`, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `"status": "ok"`)
}
