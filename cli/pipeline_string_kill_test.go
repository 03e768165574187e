package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPipelineApproveSurvivesGatewayKill parks a pipeline string at an
// approve stage under a real gateway process, SIGKILLs the gateway, and
// resumes the gate afterwards: the stages after the gate get the same
// items, and the exec stage before it does not run again.
func TestPipelineApproveSurvivesGatewayKill(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	kill := gatewayProcess(t, home, dir)

	text := `exec --json --shell "echo run >> ` + ledger + `; echo '[{\"id\":1},{\"id\":2},{\"id\":3}]'" | where id!=2 | approve --prompt 'Ship?' | map --unwrap id`
	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", text)
	require.Equal(t, 0, code, errOut)
	var env struct {
		Status           string
		RequiresApproval struct {
			Prompt, ApprovalID string
			Items              []any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, "needs_approval", env.Status)
	require.Equal(t, "Ship?", env.RequiresApproval.Prompt)
	require.Equal(t, []any{map[string]any{"id": 1.0}, map[string]any{"id": 3.0}}, env.RequiresApproval.Items)

	kill()

	code, stdout, _ = run(t, home, "approvals")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, env.RequiresApproval.ApprovalID)

	code, stdout, errOut = run(t, home, "pipeline", "resume", "--id", env.RequiresApproval.ApprovalID, "--approve", "yes", "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	var done struct {
		Status string
		Output []any
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &done), stdout)
	require.Equal(t, "ok", done.Status, stdout)
	require.Equal(t, []any{1.0, 3.0}, done.Output)
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	require.Equal(t, "run\n", string(b), "the exec stage ran once")
}

// TestDiffLastBeforeAGateSurvivesGatewayKill: diff.last before an approve
// stage, under a real gateway SIGKILLed while the flow is parked: the
// resumed run goes on with the comparison that was approved, and the
// value is stored once.
func TestDiffLastBeforeAGateSurvivesGatewayKill(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	kill := gatewayProcess(t, home, t.TempDir())
	text := `exec --json --shell "echo '{\"v\":1}'" | diff.last --key snap | approve | map --unwrap changed`
	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", text)
	require.Equal(t, 0, code, errOut)
	var env struct {
		RequiresApproval struct {
			ApprovalID string
			Items      []map[string]any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Len(t, env.RequiresApproval.Items, 1, stdout)
	require.Equal(t, true, env.RequiresApproval.Items[0]["changed"])
	kill()

	code, stdout, errOut = run(t, home, "pipeline", "resume", "--id", env.RequiresApproval.ApprovalID, "--approve", "yes", "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `"output": [
    true
  ]`)
	b, err := os.ReadFile(filepath.Join(home, "pipeline-state", "pipelines", "snap.json"))
	require.NoError(t, err)
	require.JSONEq(t, `{"v":1}`, string(b))
}
