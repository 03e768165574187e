package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGatewayKilledAfterAcceptingAContinuation runs a real gateway process
// whose pipeline plugin cannot start, so a continuation it accepts (over
// its socket) stays accepted and unstarted; the gateway is SIGKILLed, and
// the next gateway starts the continuation exactly once.
func TestGatewayKilledAfterAcceptingAContinuation(t *testing.T) {
	t.Parallel()
	r := runFiveSteps(t, false, 1)
	home, dir, ledger, flag := r.home, r.dir, r.ledger, r.flag
	srcRev := r.revision(t)

	config := filepath.Join(dir, "gateway.yaml")
	require.NoError(t, os.WriteFile(config, []byte("plugins:\n  - name: pipeline\n    path: /bin/false\n"), 0o600))
	kill := gatewayProcess(t, home, dir, "--config", config)

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	code, stdout, errOut := run(t, home, "tasks", "flow", "continue", r.flowID, "--expected-revision", strconv.FormatInt(srcRev, 10), "--reason", "flag added", "--json")
	require.Equal(t, 0, code, errOut)
	var accepted struct{ Flow struct{ ID, Status string } }
	require.NoError(t, json.Unmarshal([]byte(stdout), &accepted))
	require.Equal(t, "queued", accepted.Flow.Status)

	kill()
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two", "three"}, strings.Fields(string(b)), "the killed gateway never started the continuation")

	code, stdout, errOut = run(t, home, "pipeline", "continue", "--id", r.flowID, "--reason", "flag added")
	require.Equal(t, 0, code, stdout+errOut)
	require.Contains(t, errOut, "already accepted (identical request): flow "+accepted.Flow.ID)
	b, err = os.ReadFile(ledger)
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two", "three", "three", "four", "five"}, strings.Fields(string(b)), "the next gateway started it exactly once")
}
