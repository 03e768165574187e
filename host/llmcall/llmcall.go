// Package llmcall calls an OpenAI-compatible chat endpoint
// (POST <base>/chat/completions) for the pipeline's model stages
// (llm.invoke, llm_task.invoke). It runs inside the stage's task, so the
// key it sends only ever lives in that process's environment, and it
// classifies failures the way a retrying caller must: 429 and 5xx are
// transient and retried with backoff (honouring Retry-After), any other
// 4xx is fatal at once with the server's own message, since asking again
// cannot fix a bad model name, prompt or key. Invoke is a whole stage's
// call: the prompt with the stage's input items, the schema check and its
// retries, the usage reports, and the output item.
package llmcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Request is one chat call.
type Request struct {
	// BaseURL is the endpoint's base, e.g. https://api.openai.com/v1;
	// "/chat/completions" is appended.
	BaseURL string
	Model   string
	// Key is sent as a bearer token when not empty.
	Key    string
	Prompt string
	// Temperature and MaxOutputTokens are sent when set.
	Temperature     *float64
	MaxOutputTokens int
	// Attempts bounds the calls made for transient failures; 0 means 4.
	Attempts int
}

// Usage is what the endpoint reported a call used. Cost is nil when the
// server does not report one (OpenAI does not; some gateways do).
type Usage struct {
	PromptTokens, CompletionTokens, TotalTokens int64
	Cost                                        *float64
}

// Reply is the model's answer to one successful call.
type Reply struct {
	// ID is the completion's id, when the server gives one.
	ID   string
	Text string
	// Usage is nil when the server reported none.
	Usage *Usage
	// Attempts is how many HTTP calls it took.
	Attempts int
}

// maxBackoff caps the wait between attempts, whatever Retry-After asks.
const maxBackoff = 30 * time.Second

// Call sends req with client, retrying transient failures. A fatal
// failure's error holds the status and the server's message.
func Call(ctx context.Context, client *http.Client, req Request) (Reply, error) {
	attempts := req.Attempts
	if attempts <= 0 {
		attempts = 4
	}
	body, err := requestBody(req)
	if err != nil {
		return Reply{}, err
	}
	url := strings.TrimRight(req.BaseURL, "/") + "/chat/completions"
	var last error
	for n := 1; n <= attempts; n++ {
		reply, wait, err := once(ctx, client, url, req.Key, body)
		if err == nil {
			reply.Attempts = n
			return reply, nil
		}
		last = err
		var fatal *fatalError
		if errors.As(err, &fatal) || n == attempts {
			break
		}
		if wait < 0 {
			wait = time.Duration(500<<(n-1)) * time.Millisecond
		}
		t := time.NewTimer(min(wait, maxBackoff))
		select {
		case <-ctx.Done():
			t.Stop()
			return Reply{}, ctx.Err()
		case <-t.C:
		}
	}
	return Reply{}, last
}

// fatalError is a failure another attempt cannot fix.
type fatalError struct{ msg string }

// Transient reports whether err, from Call, is a failure a later call may
// not meet: a 429, a 5xx, a dropped or timed-out connection. A refusal
// (any other 4xx), a reply that is no chat completion and a cancelled
// call are not: a retry would meet them again, or was not wanted.
func Transient(err error) bool {
	var fatal *fatalError
	return err != nil && !errors.As(err, &fatal) && !errors.Is(err, context.Canceled)
}

func (e *fatalError) Error() string { return e.msg }

func requestBody(req Request) ([]byte, error) {
	if req.BaseURL == "" {
		return nil, &fatalError{"no model endpoint: pass --base-url URL or set pipeline.llm.base_url in the gateway config"}
	}
	if req.Model == "" {
		return nil, &fatalError{"no model: pass --model NAME or set pipeline.llm.model in the gateway config"}
	}
	m := map[string]any{
		"model":    req.Model,
		"messages": []map[string]string{{"role": "user", "content": req.Prompt}},
	}
	if req.Temperature != nil {
		m["temperature"] = *req.Temperature
	}
	if req.MaxOutputTokens > 0 {
		m["max_tokens"] = req.MaxOutputTokens
	}
	return json.Marshal(m)
}

// once makes one call: the reply, or the error and how long the server
// asked to wait before the next attempt (-1 when it did not say).
func once(ctx context.Context, client *http.Client, url, key string, body []byte) (Reply, time.Duration, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Reply{}, 0, &fatalError{fmt.Sprintf("bad endpoint URL %q: %v", url, err)}
	}
	hr.Header.Set("Content-Type", "application/json")
	if key != "" {
		hr.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(hr)
	if err != nil {
		return Reply{}, -1, fmt.Errorf("calling %s: %w", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return Reply{}, -1, fmt.Errorf("reading the reply of %s: %w", url, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return Reply{}, retryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("%s answered %s: %s", url, resp.Status, serverMessage(raw))
	case resp.StatusCode >= 400:
		return Reply{}, 0, &fatalError{fmt.Sprintf("%s refused the call with %s: %s", url, resp.Status, serverMessage(raw))}
	case resp.StatusCode != http.StatusOK:
		return Reply{}, 0, &fatalError{fmt.Sprintf("%s answered %s, not 200", url, resp.Status)}
	}
	return parseReply(url, raw)
}

func parseReply(url string, raw []byte) (Reply, time.Duration, error) {
	var r struct {
		ID      string `json:"id"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int64    `json:"prompt_tokens"`
			CompletionTokens int64    `json:"completion_tokens"`
			TotalTokens      int64    `json:"total_tokens"`
			Cost             *float64 `json:"cost"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Choices) == 0 {
		return Reply{}, 0, &fatalError{fmt.Sprintf("%s answered 200 without a chat completion (choices[0].message.content): %.200s", url, raw)}
	}
	reply := Reply{ID: r.ID, Text: r.Choices[0].Message.Content}
	if u := r.Usage; u != nil {
		total := u.TotalTokens
		if total == 0 {
			total = u.PromptTokens + u.CompletionTokens
		}
		reply.Usage = &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: total, Cost: u.Cost}
	}
	return reply, 0, nil
}

// serverMessage is the error message of an OpenAI-style error body
// ({"error": {"message": …}}), else the body itself, cut short.
func serverMessage(raw []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

// retryAfter reads a Retry-After header in seconds or as an HTTP date;
// -1 when absent or unreadable.
func retryAfter(h string) time.Duration {
	if h == "" {
		return -1
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}
