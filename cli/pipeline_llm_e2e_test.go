package cli_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// llmKey is the key the fake endpoint demands; the tests check it never
// lands in the store, the logs or any output.
const llmKey = "sk-flowgate-test-7f3a9c"

// fakeLLM is an OpenAI-compatible endpoint on loopback that answers by
// the prompt: "busy" gets one 429 before its answer, "bad" a 400 with a
// message, "shape" an answer that misses its schema; every answer
// reports usage with a cost.
func fakeLLM(t *testing.T) (url string, calls *atomic.Int64) {
	t.Helper()
	calls = &atomic.Int64{}
	var busy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+llmKey {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"bad key or path"}}`))
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		prompt := req.Messages[0].Content
		answer := `{"summary":"ok from ` + req.Model + `"}`
		switch {
		case strings.Contains(prompt, "busy") && !busy.Swap(true):
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		case strings.Contains(prompt, "bad"):
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"the model does not exist"}}`))
			return
		case strings.Contains(prompt, "shape"):
			answer = `{"summary":3}`
		}
		b, _ := json.Marshal(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer}}},
			"usage":   map[string]any{"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12, "cost": 0.25},
		})
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", calls
}

// TestLLMInvokeStageThroughTheGateway runs llm.invoke and llm_task.invoke
// as pipeline strings against a loopback endpoint: the answer comes back
// as the output item, a 429 is retried, a 400 fails at once with the
// server's message, a schema miss fails naming the path, a --secret-env
// the config does not list is refused, usage reaches the flow, and the
// key is nowhere in the home; with the pipeline controller in the
// gateway's process and as a plugin process.
func TestLLMInvokeStageThroughTheGateway(t *testing.T) {
	t.Setenv("FLOWGATE_TEST_LLM_KEY", llmKey)
	for name, extra := range map[string]string{"in-process": "", "isolated": "plugins: [{name: pipeline, isolate: true}]\n"} {
		t.Run(name, func(t *testing.T) { testLLMInvokeStage(t, extra) })
	}
}

// testLLMInvokeStage is TestLLMInvokeStageThroughTheGateway with extra
// in gateway.yaml.
func testLLMInvokeStage(t *testing.T, extra string) {
	url, calls := fakeLLM(t)
	home := shortHome(t)
	cfg := "pipeline:\n  secret_env: [FLOWGATE_TEST_LLM_KEY]\n  llm: {base_url: " + url + "}\n" + extra
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte(cfg), 0o600))

	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", `llm.invoke --model m --secret-env FLOWGATE_TEST_LLM_KEY --prompt "say hi" --output-schema '{"type":"object","required":["summary"],"properties":{"summary":{"type":"string"}}}' | pick output,usage,kind`)
	require.Equal(t, 0, code, errOut)
	var env struct {
		FlowID string `json:"flowId"`
		Output []any  `json:"output"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.JSONEq(t, `[{"output":{"format":"json","text":"{\"summary\":\"ok from m\"}","data":{"summary":"ok from m"}},"usage":{"inputTokens":7,"outputTokens":5,"totalTokens":12,"cost":0.25},"kind":"llm.invoke"}]`, mustJSON(t, env.Output))

	code, stdout, errOut = run(t, home, "tasks", "flow", "show", env.FlowID, "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, `"input_tokens": 7`)
	require.Contains(t, stdout, `"cost": 0.25`)
	require.NotContains(t, stdout, llmKey)
	code, stdout, errOut = run(t, home, "tasks", "flow", "show", env.FlowID)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, stdout+errOut, llmKey)

	code, stdout, errOut = run(t, home, "pipeline", "run", `exec --json --shell "echo '[{\"id\":1},\"two\"]'" | llm.invoke --model m --secret-env FLOWGATE_TEST_LLM_KEY --prompt "rank these" | pick prompt`)
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `[{"prompt":"rank these\n\nInput:\n[{\"id\":1},{\"kind\":\"text\",\"text\":\"two\"}]"}]`, stdout, "the items follow the prompt as Lobster's artifacts")

	before := calls.Load()
	code, stdout, errOut = run(t, home, "pipeline", "run", `llm_task.invoke --model m --secret-env FLOWGATE_TEST_LLM_KEY busy please | pick kind,prompt,attemptCount`)
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `[{"kind":"llm_task.invoke","prompt":"busy please","attemptCount":2}]`, stdout)
	require.Equal(t, before+2, calls.Load(), "one 429, then the answer")

	before = calls.Load()
	code, _, errOut = run(t, home, "pipeline", "run", `llm.invoke --model m --secret-env FLOWGATE_TEST_LLM_KEY --prompt bad`)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "400 Bad Request: the model does not exist")
	require.Equal(t, before+1, calls.Load(), "a 400 is not retried")

	code, _, errOut = run(t, home, "pipeline", "run", `llm.invoke --model m --secret-env FLOWGATE_TEST_LLM_KEY --prompt shape --max-validation-retries 0 --schema '{"type":"object","properties":{"summary":{"type":"string"}}}'`)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "llm.invoke output failed schema validation: /summary must be string")

	code, _, errOut = run(t, home, "pipeline", "run", `llm.invoke --model m --temperature warm hi`)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, `llm.invoke --temperature must be a number, 0 or more (got "warm")`)

	before = calls.Load()
	code, _, errOut = run(t, home, "pipeline", "run", `llm.invoke --model m --secret-env HOME --prompt hi`)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, `does not list "HOME" under pipeline.secret_env`)
	require.Equal(t, before, calls.Load(), "a refused stage calls nothing")

	require.NoError(t, filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
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

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestLLMStageSecretRefusedBeforeARun: validate and run --dry-run refuse
// (exit 2) a model stage whose --secret-env the gateway config does not
// list, naming it and where to list it; commands.list shows both stages.
func TestLLMStageSecretRefusedBeforeARun(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte("pipeline: {secret_env: [OPENAI_API_KEY]}\n"), 0o600))
	file := filepath.Join(t.TempDir(), "brief.lobster")
	require.NoError(t, os.WriteFile(file, []byte("steps:\n  - id: sum\n    pipeline: llm.invoke --secret-env HOME --prompt hi\n"), 0o600))
	code, _, errOut := run(t, home, "pipeline", "validate", file)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `Workflow step sum: llm.invoke --secret-env HOME: the gateway config does not list "HOME" under pipeline.secret_env (listed: OPENAI_API_KEY)`)

	code, _, errOut = run(t, home, "pipeline", "run", "--dry-run", "llm_task.invoke --secret-env PATH hi")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `llm_task.invoke --secret-env PATH: the gateway config does not list "PATH"`)

	code, stdout, errOut := run(t, home, "pipeline", "run", "commands.list | where sideEffects.0==calls_model | pick name")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `[{"name":"llm.invoke"},{"name":"llm_task.invoke"}]`, stdout)
}
