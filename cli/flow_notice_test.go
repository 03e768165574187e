package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
	"github.com/flowgate/flowgate/sdk"
)

// TestFlowFinishNotifications: pipeline run and tasks flow create take
// --on-finish; the flow's notice comes once when it ends, as aborted for
// a cancel, with the flow's final record on stdin.
func TestFlowFinishNotifications(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	serveGateway(t, gateway.Config{Home: home, Owner: "cli test gateway", Builtins: plugins.Names()})
	notices := filepath.Join(dir, "notices")
	hook := `{ echo "$FLOWGATE_NOTICE_KEY $FLOWGATE_FLOW_STATUS"; cat; echo; } >> ` + notices
	lines := func() []string { return fileLines(notices) }
	wf := filepath.Join(dir, "hi.lobster")
	require.NoError(t, os.WriteFile(wf, []byte("name: hi\nsteps:\n  - id: a\n    run: echo hi\n"), 0o600))

	code, stdout, errOut := run(t, home, "pipeline", "run", wf, "--mode", "tool", "--on-finish", hook)
	require.Equal(t, 0, code, stdout+errOut)
	var env struct{ FlowID string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Eventually(t, func() bool { return len(lines()) >= 2 }, 20*time.Second, 20*time.Millisecond, "the pipeline's notice was not delivered")
	require.Equal(t, env.FlowID+"/succeeded succeeded", lines()[0])
	var msg struct {
		Event  string
		FlowID string `json:"flow_id"`
		Flow   sdk.Flow
	}
	require.NoError(t, json.Unmarshal([]byte(lines()[1]), &msg), lines()[1])
	require.Equal(t, "flow.finished", msg.Event)
	require.Equal(t, env.FlowID, msg.FlowID)
	require.Equal(t, sdk.FlowSucceeded, msg.Flow.Status, "the final record")

	code, stdout, errOut = run(t, home, "tasks", "flow", "create", "--controller", "nobody", "--allow-unknown-controller", "--goal", "g", "--owner", "o", "--json",
		"--on-finish", hook)
	require.Equal(t, 0, code, errOut)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(stdout), &f), stdout)
	require.Equal(t, &sdk.FinishNotify{Command: hook}, f.OnFinish)
	code, _, errOut = run(t, home, "tasks", "flow", "cancel", f.ID)
	require.Equal(t, 0, code, errOut)
	require.Eventually(t, func() bool { return len(lines()) >= 4 }, 20*time.Second, 20*time.Millisecond, "the cancelled flow's notice was not delivered")
	require.Equal(t, f.ID+"/aborted aborted", lines()[2])

	code, _, errOut = run(t, home, "tasks", "flow", "create", "--controller", "c", "--allow-unknown-controller", "--goal", "g", "--owner", "o", "--on-finish-webhook", "ftp://x")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "on_finish webhook")
}
