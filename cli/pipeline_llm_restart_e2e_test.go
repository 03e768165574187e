package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// TestLLMStageAfterAGatewayRestart: a model stage whose task is created
// by a gateway started after the one that ran the flow's first stage was
// killed still gets its key, from the new gateway's environment; the key
// is in none of the gateway's logs.
func TestLLMStageAfterAGatewayRestart(t *testing.T) {
	url, calls := fakeLLM(t)
	t.Setenv("FLOWGATE_TEST_LLM_KEY", llmKey)
	home, dir := shortHome(t), t.TempDir()
	cfg := "pipeline:\n  secret_env: [FLOWGATE_TEST_LLM_KEY]\n  llm: {base_url: " + url + ", model: m}\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte(cfg), 0o600))
	started, goOn := filepath.Join(dir, "started"), filepath.Join(dir, "go")
	file := filepath.Join(dir, "brief.lobster")
	require.NoError(t, os.WriteFile(file, []byte(`steps:
  - id: sum
    pipeline: exec --shell "touch `+started+`; while [ ! -f `+goOn+` ]; do sleep 0.05; done; echo item" | llm.invoke --secret-env FLOWGATE_TEST_LLM_KEY --prompt hi
`), 0o600))

	first := t.TempDir()
	kill := gatewayProcess(t, home, first)
	code, stdout, errOut := run(t, home, "pipeline", "run", "--detach", file)
	require.Equal(t, 0, code, errOut)
	fields := strings.Fields(stdout)
	require.NotEmpty(t, fields, stdout)
	id := fields[len(fields)-1]
	require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, 20*time.Second, 20*time.Millisecond, "the first stage did not start")
	kill()

	require.NoError(t, os.WriteFile(goOn, nil, 0o600))
	second := t.TempDir()
	gatewayProcess(t, home, second)
	f := waitFlowEnd(t, home, id)
	require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
	require.EqualValues(t, 1, calls.Load(), "the stage called the endpoint once, with the key")
	for _, d := range []string{first, second} {
		b, err := os.ReadFile(filepath.Join(d, "gateway.log"))
		require.NoError(t, err)
		require.NotContains(t, string(b), llmKey)
	}
}
