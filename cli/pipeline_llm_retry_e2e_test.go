package cli_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLLMStageRetriedByStepRetry runs a workflow whose model step has a
// retry: policy against a loopback endpoint that answers 503 until the
// stage's own calls are spent: the task fails as a transient failure, the
// step's retry runs it again with the key from the gateway's environment,
// the answer comes back, and the key is nowhere in the home or the
// gateway's log; with no gateway, a gateway process, and the pipeline
// controller isolated in a plugin process.
func TestLLMStageRetriedByStepRetry(t *testing.T) {
	t.Setenv("FLOWGATE_TEST_LLM_KEY", llmKey)
	for _, c := range []struct {
		name, extra string
		gateway     bool
	}{{"no gateway", "", false}, {"gateway running", "", true}, {"isolated", "plugins: [{name: pipeline, isolate: true}]\n", true}} {
		t.Run(c.name, func(t *testing.T) { testLLMStageRetried(t, c.extra, c.gateway) })
	}
}

// testLLMStageRetried is TestLLMStageRetriedByStepRetry with extra in
// gateway.yaml, and a gateway running if asked.
func testLLMStageRetried(t *testing.T, extra string, gateway bool) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+llmKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if calls.Add(1) <= 4 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"message":"overloaded"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"{\"summary\":\"late\"}"}}]}`))
	}))
	t.Cleanup(srv.Close)
	home := shortHome(t)
	cfg := "pipeline:\n  secret_env: [FLOWGATE_TEST_LLM_KEY]\n  llm: {base_url: " + srv.URL + "/v1, model: m}\n" + extra
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte(cfg), 0o600))
	logs := t.TempDir()
	if gateway {
		gatewayProcess(t, home, logs)
	}
	file := filepath.Join(t.TempDir(), "ask.lobster")
	wf := "steps:\n  - id: ask\n    pipeline: llm.invoke --secret-env FLOWGATE_TEST_LLM_KEY --prompt hi | pick output\n    retry: {max: 3, delay_ms: 1}\n"
	require.NoError(t, os.WriteFile(file, []byte(wf), 0o600))

	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", file)
	require.Equal(t, 0, code, stdout+errOut)
	var env struct {
		FlowID string `json:"flowId"`
		Output []any  `json:"output"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.JSONEq(t, `[{"output":{"format":"json","text":"{\"summary\":\"late\"}","data":{"summary":"late"}}}]`, mustJSON(t, env.Output))
	require.Equal(t, int64(5), calls.Load(), "four 503s spend the first attempt's calls; the step's second attempt gets the answer")

	code, stdout, errOut = run(t, home, "tasks", "flow", "show", env.FlowID, "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `"attempts": 2`)
	require.Contains(t, stdout, `answered 503 Service Unavailable: overloaded (transient failure; retrying in`, "the spent calls are a transient failure")
	require.NotContains(t, stdout, llmKey)
	for _, dir := range []string{home, logs} {
		requireNoKeyUnder(t, dir)
	}
}

// requireNoKeyUnder fails when a file under dir holds llmKey.
func requireNoKeyUnder(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil {
			require.NotContains(t, string(b), llmKey, path)
		}
		return nil
	}))
}
