package llmcall_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/llmcall"
)

// scripted is a loopback endpoint answering each call with the next of
// steps (status, Retry-After, body), then 200 with an answer and usage.
func scripted(t *testing.T, steps ...[3]string) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := int(n.Add(1)) - 1
		if i < len(steps) {
			if steps[i][1] != "" {
				w.Header().Set("Retry-After", steps[i][1])
			}
			var code int
			switch steps[i][0] {
			case "429":
				code = http.StatusTooManyRequests
			case "503":
				code = http.StatusServiceUnavailable
			case "404":
				code = http.StatusNotFound
			}
			w.WriteHeader(code)
			_, _ = w.Write([]byte(steps[i][2]))
			return
		}
		_, _ = w.Write([]byte(`{"id":"c1","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

func req(url string) llmcall.Request {
	return llmcall.Request{BaseURL: url, Model: "m", Prompt: "p", Attempts: 3}
}

// TestTransientFailuresAreRetried: 429 and 5xx are retried, honouring
// Retry-After, and the reply says how many calls it took; usage without a
// total gets the sum.
func TestTransientFailuresAreRetried(t *testing.T) {
	t.Parallel()
	url, n := scripted(t, [3]string{"429", "0", ""}, [3]string{"503", "0", "down"})
	r, err := llmcall.Call(t.Context(), http.DefaultClient, req(url))
	require.NoError(t, err)
	require.Equal(t, llmcall.Reply{ID: "c1", Text: "hi", Usage: &llmcall.Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}, Attempts: 3}, r)
	require.EqualValues(t, 3, n.Load())
}

// TestTransientFailuresRunOut: the last transient failure is the error
// once the attempts are spent, and Transient says so.
func TestTransientFailuresRunOut(t *testing.T) {
	t.Parallel()
	url, n := scripted(t, [3]string{"503", "0", ""}, [3]string{"503", "0", ""}, [3]string{"503", "0", `{"error":{"message":"overloaded"}}`})
	_, err := llmcall.Call(t.Context(), http.DefaultClient, req(url))
	require.ErrorContains(t, err, "503 Service Unavailable: overloaded")
	require.True(t, llmcall.Transient(err), "a caller may retry it later")
	require.EqualValues(t, 3, n.Load())
}

// TestClientErrorsAreFatal: another 4xx fails at once with the server's
// message; a reply with no completion is fatal too.
func TestClientErrorsAreFatal(t *testing.T) {
	t.Parallel()
	url, n := scripted(t, [3]string{"404", "", `{"error":{"message":"no such model"}}`})
	_, err := llmcall.Call(t.Context(), http.DefaultClient, req(url))
	require.ErrorContains(t, err, "refused the call with 404 Not Found: no such model")
	require.False(t, llmcall.Transient(err))
	require.EqualValues(t, 1, n.Load())

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	t.Cleanup(srv.Close)
	_, err = llmcall.Call(t.Context(), http.DefaultClient, req(srv.URL))
	require.ErrorContains(t, err, "without a chat completion")
	require.False(t, llmcall.Transient(err))
}

// TestMissingEndpointOrModel: a call without a base URL or a model is
// refused before any request, saying where to set it.
func TestMissingEndpointOrModel(t *testing.T) {
	t.Parallel()
	_, err := llmcall.Call(t.Context(), http.DefaultClient, llmcall.Request{Model: "m", Prompt: "p"})
	require.ErrorContains(t, err, "pass --base-url URL or set pipeline.llm.base_url")
	_, err = llmcall.Call(t.Context(), http.DefaultClient, llmcall.Request{BaseURL: "http://127.0.0.1:1", Prompt: "p"})
	require.ErrorContains(t, err, "pass --model NAME or set pipeline.llm.model")
	require.False(t, llmcall.Transient(err), "no retry can supply a missing model")
}
