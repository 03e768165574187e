package cli_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway/gatewaytest"
)

func viewsFlow(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/flows/")
}

func readsRuns(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/runs")
}

// A foreground pipeline run whose gateway dies while it follows the flow
// follows it on through the next gateway (here one it hosts) and exits
// with the flow's outcome. It used to exit 1 with "no gateway is running"
// while the flow went on.
func TestPipelineRunFollowsThroughTheNextGateway(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	ledger := filepath.Join(t.TempDir(), "ledger")
	dyingGateway(t, home, viewsFlow)
	code, out, errOut := run(t, home, "pipeline", "run", "--mode", "tool", `exec --shell "echo ran >> `+ledger+`; exit 3"`)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, out, `"runtime_error"`, "the flow's own failure, not a lost gateway")
	require.NotContains(t, errOut, "no gateway", errOut)
	require.Equal(t, 1, runs(t, ledger))
}

// cron run --wait whose gateway dies while it follows the run follows it
// on through the next gateway and exits with the run's outcome.
func TestCronRunWaitFollowsThroughTheNextGateway(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	ledger := filepath.Join(t.TempDir(), "ledger")
	code, _, errOut := run(t, home, "cron", "add", "--name", "j", "--every", "1h", "--command", "echo ran >> "+ledger)
	require.Equal(t, 0, code, errOut)
	dyingGateway(t, home, readsRuns)
	code, out, errOut := run(t, home, "cron", "run", "j", "--wait")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ended ok")
	require.Equal(t, 1, runs(t, ledger))
}

// backup, check and gateway status wait for a gateway that holds the
// store but does not listen yet, and talk to it once it answers. They used
// to say no gateway runs (status, exit 1) or fail on the held store.
func TestReadersWaitForAStartingGateway(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"gateway", "status", "--json"},
		{"check", "--json"},
		{"backup", filepath.Join(t.TempDir(), "b.db"), "--json"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			home := shortHome(t)
			s := gatewaytest.Hold(t, home)
			type result struct {
				code        int
				out, errOut string
			}
			done := make(chan result, 1)
			go func() {
				code, out, errOut := run(t, home, args...)
				done <- result{code, out, errOut}
			}()
			s.AwaitProbe()
			s.Listen()
			r := <-done
			require.Equal(t, 0, r.code, r.errOut)
		})
	}
}
