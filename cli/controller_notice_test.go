package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// TestControllerFinishNotifications: a controller whose entry in
// gateway.yaml names on_finish gets a notice for every flow it drives
// when the flow ends, from the real pipeline plugin under a real gateway
// process. The first notice's receiver is down; the gateway is SIGKILLed
// with the notice queued; the next gateway delivers it, once. A cancelled
// flow is reported aborted; a flow of another controller is not
// reported.
func TestControllerFinishNotifications(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	notices, up, log := filepath.Join(dir, "notices"), filepath.Join(dir, "up"), filepath.Join(dir, "gateway.log")
	hook := filepath.Join(dir, "hook.sh")
	require.NoError(t, os.WriteFile(hook, []byte(`test -f `+up+` || exit 1
{ echo "$FLOWGATE_NOTICE_KEY $FLOWGATE_FLOW_STATUS $FLOWGATE_CONTROLLER"; cat; echo; } >> `+notices+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte("plugins:\n  - name: pipeline\n    on_finish: sh "+hook+"\n"), 0o600))
	lines := func() []string { return fileLines(notices) }
	gw := startDaemon(t, home, log)

	wf := filepath.Join(dir, "hi.lobster")
	require.NoError(t, os.WriteFile(wf, []byte("name: hi\nsteps:\n  - id: a\n    run: echo hi\n"), 0o600))
	code, stdout, errOut := run(t, home, "pipeline", "run", wf, "--mode", "tool")
	require.Equal(t, 0, code, stdout+errOut)
	var env struct{ FlowID string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "finish notice not delivered")
	}, 20*time.Second, 20*time.Millisecond, "the notice was never tried")
	gw.kill()

	require.NoError(t, os.WriteFile(up, nil, 0o600))
	startDaemon(t, home, log)
	require.Eventually(t, func() bool { return len(lines()) >= 2 }, 30*time.Second, 20*time.Millisecond, "the queued notice was not delivered after the restart")
	require.Equal(t, env.FlowID+"/succeeded/controller succeeded pipeline", lines()[0])
	var msg struct {
		Event      string
		Controller string
		Flow       sdk.Flow
	}
	require.NoError(t, json.Unmarshal([]byte(lines()[1]), &msg), lines()[1])
	require.Equal(t, "flow.finished", msg.Event)
	require.Equal(t, "pipeline", msg.Controller)
	require.Equal(t, sdk.FlowSucceeded, msg.Flow.Status, "the final record")
	require.Equal(t, env.FlowID, msg.Flow.ID)

	code, stdout, errOut = run(t, home, "tasks", "flow", "create", "--controller", "nobody", "--allow-unknown-controller", "--goal", "g", "--owner", "o", "--json")
	require.Equal(t, 0, code, errOut)
	var other sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(stdout), &other), stdout)
	code, _, errOut = run(t, home, "tasks", "flow", "cancel", other.ID)
	require.Equal(t, 0, code, errOut)

	gated := filepath.Join(dir, "gate.lobster")
	require.NoError(t, os.WriteFile(gated, []byte("name: gate\nsteps:\n  - id: ship\n    approval: Ship it?\n"), 0o600))
	_, stdout, errOut = run(t, home, "pipeline", "run", gated, "--mode", "tool")
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout+errOut)
	code, _, errOut = run(t, home, "tasks", "flow", "cancel", env.FlowID)
	require.Equal(t, 0, code, errOut)
	require.Eventually(t, func() bool { return len(lines()) >= 4 }, 20*time.Second, 20*time.Millisecond, "the cancelled flow's notice was not delivered")
	require.Equal(t, env.FlowID+"/aborted/controller aborted pipeline", lines()[2], "aborted, and nothing for the other controller's flow")
	require.Len(t, lines(), 4, "each notice once")
}

// fileLines returns the lines of the file at path; none when it cannot
// be read yet.
func fileLines(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
