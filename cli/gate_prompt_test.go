package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
)

// promptWorkflow has an arg, an approval whose prompt and preview name
// it, and an input gate whose prompt names it and an earlier step's
// output.
const promptWorkflow = `name: trip
args:
  city: {default: Paris}
steps:
  - id: pick
    run: echo '{"hotel":"Ritz"}'
  - id: book
    approval:
      prompt: Book a room in ${city}?
      preview: hotel $pick.json.hotel in ${city}
  - id: note
    input:
      prompt: Anything to tell ${city} about $pick.json.hotel?
      responseSchema: {type: string}
`

// Gate prompts are filled in as a command is (${arg}, then step refs):
// the envelope, flowgate approvals and the flow's wait show the values,
// never the template. An input gate has a short id, as an approval has,
// that answers it.
func TestGatePromptsAreFilledInAndInputsHaveShortIDs(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	wf := filepath.Join(t.TempDir(), "trip.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(promptWorkflow), 0o600))

	code, stdout, errOut := run(t, home, "pipeline", "run", wf, "--args-json", `{"city":"Lyon"}`, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	var env struct {
		RequiresApproval struct{ Prompt, Preview, ApprovalID string }
		RequiresInput    struct{ Prompt, ApprovalID string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, "Book a room in Lyon?", env.RequiresApproval.Prompt)
	require.Equal(t, "hotel Ritz in Lyon", env.RequiresApproval.Preview)
	code, stdout, errOut = run(t, home, "approvals")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "Book a room in Lyon?")
	require.NotContains(t, stdout, "${city}")

	code, stdout, errOut = run(t, home, "pipeline", "resume", "--id", env.RequiresApproval.ApprovalID, "--approve", "yes", "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, "Anything to tell Lyon about Ritz?", env.RequiresInput.Prompt)
	require.Regexp(t, `^[0-9a-f]{8}$`, env.RequiresInput.ApprovalID, "an input gate has a short id")

	code, stdout, errOut = run(t, home, "approvals", "--json")
	require.Equal(t, 0, code, errOut)
	var open struct{ Approvals []engine.OpenGate }
	require.NoError(t, json.Unmarshal([]byte(stdout), &open), stdout)
	require.Len(t, open.Approvals, 1)
	g := open.Approvals[0].Wait()
	require.Equal(t, env.RequiresInput.ApprovalID, g.ApprovalID)
	require.Equal(t, "Anything to tell Lyon about Ritz?", g.Prompt)
	code, stdout, errOut = run(t, home, "approvals")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, env.RequiresInput.ApprovalID+"  input", "approvals lists the input gate by its short id")

	code, _, errOut = run(t, home, "tasks", "flow", "input", env.RequiresInput.ApprovalID, "--response-json", `"quiet room"`)
	require.Equal(t, 0, code, errOut)
	code, stdout, errOut = run(t, home, "approvals")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "Open gates: 0")
}
