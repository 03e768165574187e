package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGatewayKilledAfterAcceptingAContinuation runs a real gateway process
// whose pipeline plugin cannot start, so a continuation it accepts (over
// its socket) stays accepted and unstarted; the gateway is SIGKILLed, and
// the next gateway starts the continuation exactly once.
func TestGatewayKilledAfterAcceptingAContinuation(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "five.lobster")
	require.NoError(t, os.WriteFile(file, []byte(fiveSteps), 0o600))
	ledger, flag := filepath.Join(dir, "ledger"), filepath.Join(dir, "flag")
	code, stdout, errOut := run(t, home, "pipeline", "run", file, "--args-json", `{"ledger":"`+ledger+`","flag":"`+flag+`"}`, "--mode", "tool")
	require.Equal(t, 1, code, stdout+errOut)
	var env struct{ FlowID string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	code, stdout, _ = run(t, home, "tasks", "flow", "show", env.FlowID, "--json")
	require.Equal(t, 0, code)
	var src struct{ Revision int64 }
	require.NoError(t, json.Unmarshal([]byte(stdout), &src))

	config := filepath.Join(dir, "gateway.yaml")
	require.NoError(t, os.WriteFile(config, []byte("plugins:\n  - name: pipeline\n    path: /bin/false\n"), 0o600))
	gw := exec.Command(os.Args[0], "gateway", "--home", home, "--config", config)
	logs, err := os.Create(filepath.Join(dir, "gateway.log"))
	require.NoError(t, err)
	defer logs.Close()
	gw.Stdout, gw.Stderr = logs, logs
	require.NoError(t, gw.Start())
	exited := make(chan struct{})
	go func() {
		gw.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		gw.Process.Kill()
		<-exited
	})
	require.Eventually(t, func() bool {
		code, stdout, _ := run(t, home, "gateway", "status", "--json")
		return code == 0 && strings.Contains(stdout, `"running": true`)
	}, 20*time.Second, 50*time.Millisecond, "the gateway process did not come up")

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	code, stdout, errOut = run(t, home, "tasks", "flow", "continue", env.FlowID, "--expected-revision", strconv.FormatInt(src.Revision, 10), "--reason", "flag added", "--json")
	require.Equal(t, 0, code, errOut)
	var accepted struct{ Flow struct{ ID, Status string } }
	require.NoError(t, json.Unmarshal([]byte(stdout), &accepted))
	require.Equal(t, "queued", accepted.Flow.Status)

	require.NoError(t, gw.Process.Signal(syscall.SIGKILL))
	<-exited
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two", "three"}, strings.Fields(string(b)), "the killed gateway never started the continuation")

	code, stdout, errOut = run(t, home, "pipeline", "continue", "--id", env.FlowID, "--reason", "flag added")
	require.Equal(t, 0, code, stdout+errOut)
	require.Contains(t, errOut, "already accepted (identical request): flow "+accepted.Flow.ID)
	b, err = os.ReadFile(ledger)
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two", "three", "three", "four", "five"}, strings.Fields(string(b)), "the next gateway started it exactly once")
}
