package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	gw := exec.Command(os.Args[0], "gateway", "--home", home)
	logs, err := os.Create(filepath.Join(dir, "gateway.log"))
	require.NoError(t, err)
	defer logs.Close()
	gw.Stdout, gw.Stderr = logs, logs
	require.NoError(t, gw.Start())
	exited := make(chan struct{})
	go func() {
		_ = gw.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = gw.Process.Kill()
		<-exited
	})
	require.Eventually(t, func() bool {
		code, stdout, _ := run(t, home, "gateway", "status", "--json")
		return code == 0 && strings.Contains(stdout, `"running": true`)
	}, 20*time.Second, 50*time.Millisecond, "the gateway process did not come up")

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

	require.NoError(t, gw.Process.Kill())
	<-exited

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
