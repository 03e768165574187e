package llmcall

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk/progress"
)

// Invocation is what an llm.invoke or llm_task.invoke stage resolved, as
// the hidden llm-invoke command's flags carry it into the stage's task.
type Invocation struct {
	// Kind is the stage's name, the output item's kind.
	Kind string
	// BaseURL is the endpoint's base URL (…/v1); Model the model asked.
	BaseURL, Model string
	// Prompt is the prompt; the input items follow it as JSON.
	Prompt string
	// KeyEnv names the environment variable holding the API key; empty
	// sends none.
	KeyEnv string
	// Schema is the JSON schema the output must satisfy (JSON text);
	// empty takes any reply. SchemaVersion is the logical schema version
	// the output item names.
	Schema, SchemaVersion string
	// ValidationRetries counts the calls made again when the output
	// fails the schema.
	ValidationRetries int
	// MaxOutputTokens is the reply's token limit; zero is the server's.
	MaxOutputTokens int
	// Temperature is the sampling temperature; negative is the server's.
	Temperature float64
}

// Invoke makes the call f describes over the items in stdin (the
// stage's input items as a JSON array) and returns the stage's output item, shaped as Lobster's. Every call's usage
// is reported on the task's progress channel, so it is counted on the
// chain even when the output then fails its schema. As in Lobster, a
// schema miss asks again (--max-validation-retries, default 1), telling
// the model what was wrong.
func Invoke(ctx context.Context, f Invocation, stdin []byte) (*flows.Object, error) {
	var schema map[string]any
	if f.Schema != "" {
		if err := json.Unmarshal([]byte(f.Schema), &schema); err != nil {
			return nil, fmt.Errorf("%s --output-schema is not a JSON object: %v", f.Kind, err)
		}
	}
	if strings.TrimSpace(f.Prompt) == "" {
		return nil, fmt.Errorf("%s requires --prompt or positional text", f.Kind)
	}
	artifacts, err := llmArtifacts(stdin)
	if err != nil {
		return nil, fmt.Errorf("%s: its input items are not JSON: %v", f.Kind, err)
	}
	req := Request{BaseURL: f.BaseURL, Model: f.Model, Prompt: llmPrompt(f.Prompt, artifacts), MaxOutputTokens: f.MaxOutputTokens}
	if f.KeyEnv != "" {
		if req.Key = os.Getenv(f.KeyEnv); req.Key == "" {
			return nil, fmt.Errorf("%s: the key variable %s is empty in the task's environment; set it in the gateway's environment and list it under pipeline.secret_env in the gateway config", f.Kind, f.KeyEnv)
		}
	}
	if f.Temperature >= 0 {
		req.Temperature = &f.Temperature
	}
	// A call that hangs is a transient failure, retried like a 5xx; the
	// step's timeout, if any, bounds the whole stage.
	client := &http.Client{Timeout: callTimeout}
	attempts := 0
	var total Usage
	base := req.Prompt
	for try := 0; ; try++ {
		reply, err := Call(ctx, client, req)
		attempts += reply.Attempts
		if err != nil {
			return nil, fmt.Errorf("%s request failed: %w", f.Kind, err)
		}
		reportLLMUsage(reply.Usage, &total)
		data, format, verr := llmOutput(f.Kind, schema, reply.Text)
		if verr != nil && try < f.ValidationRetries {
			req.Prompt = base + "\n\nYour previous reply failed the output schema (" + verr.Error() + "). Reply with JSON that satisfies it, and nothing else."
			continue
		}
		if verr != nil {
			return nil, verr
		}
		return llmItem(f, base, reply.ID, format, reply.Text, data, total, attempts), nil
	}
}

// callTimeout bounds one HTTP call to the endpoint.
const callTimeout = 5 * time.Minute

// llmItem is the stage's output item, with Lobster's fields; what Lobster
// takes from its cache and run state is always fresh here.
func llmItem(f Invocation, prompt, runID, format, text string, data any, u Usage, attempts int) *flows.Object {
	out := flows.NewObject(3)
	out.Set("format", format)
	out.Set("text", text)
	out.Set("data", data)
	usage := flows.NewObject(4)
	usage.Set("inputTokens", float64(u.PromptTokens))
	usage.Set("outputTokens", float64(u.CompletionTokens))
	usage.Set("totalTokens", float64(u.TotalTokens))
	if u.Cost != nil {
		usage.Set("cost", *u.Cost)
	}
	item := flows.NewObject(12)
	item.Set("kind", f.Kind)
	item.Set("runId", nilIfEmpty(runID))
	item.Set("prompt", prompt)
	item.Set("model", f.Model)
	item.Set("schemaVersion", f.SchemaVersion)
	item.Set("status", "completed")
	item.Set("output", out)
	item.Set("usage", usage)
	item.Set("createdAt", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	item.Set("source", "http")
	item.Set("cached", false)
	item.Set("attemptCount", float64(attempts))
	return item
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// llmArtifacts are the stage's input items as Lobster's artifacts: an
// object as itself, a string, number or boolean as {kind: text, text},
// anything else as {kind: json, data}.
func llmArtifacts(stdin []byte) ([]any, error) {
	if len(strings.TrimSpace(string(stdin))) == 0 {
		return nil, nil
	}
	v, err := flows.DecodeJSON(stdin)
	if err != nil {
		return nil, err
	}
	items, _ := v.([]any)
	out := make([]any, len(items))
	for i, it := range items {
		a := flows.NewObject(2)
		switch t := it.(type) {
		case *flows.Object:
			out[i] = t
			continue
		case string:
			a.Set("kind", "text")
			a.Set("text", t)
		case float64, bool:
			a.Set("kind", "text")
			a.Set("text", flows.Stringify(t))
		default:
			a.Set("kind", "json")
			a.Set("data", t)
		}
		out[i] = a
	}
	return out, nil
}

// llmPrompt is the prompt followed by the artifacts as JSON, when there
// are any: an OpenAI-compatible endpoint has no artifact field of its own.
func llmPrompt(prompt string, artifacts []any) string {
	if len(artifacts) == 0 {
		return prompt
	}
	return prompt + "\n\nInput:\n" + flows.Stringify(artifacts)
}

// llmOutput is the reply as the output's data: with a schema, the JSON the
// reply holds, checked against it (Lobster's message: "<kind> output
// failed schema validation: <path> <message>"); without, the JSON the
// reply is, or the text with no data.
func llmOutput(kind string, schema map[string]any, text string) (any, string, error) {
	if schema == nil {
		if v, ok := flows.ParseJSON(text); ok {
			return v, "json", nil
		}
		return nil, "text", nil
	}
	v, err := flows.DecodeJSON([]byte(strings.TrimSpace(text)))
	if err != nil {
		return nil, "", fmt.Errorf("%s output failed schema validation: / is not JSON (%v)", kind, err)
	}
	if path, msg := flows.SchemaViolation(schema, v); msg != "" {
		return nil, "", fmt.Errorf("%s output failed schema validation: %s %s", kind, path, msg)
	}
	return v, "json", nil
}

// reportLLMUsage sends one call's usage on the task's progress channel
// and adds it to total.
func reportLLMUsage(u *Usage, total *Usage) {
	if u == nil {
		return
	}
	total.PromptTokens += u.PromptTokens
	total.CompletionTokens += u.CompletionTokens
	total.TotalTokens += u.TotalTokens
	if u.Cost != nil {
		c := *u.Cost
		if total.Cost != nil {
			c += *total.Cost
		}
		total.Cost = &c
	}
	line := progress.Usage{InputTokens: &u.PromptTokens, OutputTokens: &u.CompletionTokens, Cost: u.Cost}
	if err := progress.FromEnv().Send(progress.Line{Usage: &line}); err != nil {
		fmt.Fprintln(os.Stderr, "flowgate: could not report usage:", err)
	}
}
