package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/llmcall"
	"github.com/flowgate/flowgate/sdk/progress"
)

// llmInvokeFlags are the hidden llm-invoke command's flags: what the
// pipeline's llm.invoke and llm_task.invoke stages resolved.
type llmInvokeFlags struct {
	kind, baseURL, model, prompt, keyEnv, schema, schemaVersion string
	validationRetries, maxOutputTokens                          int
	temperature                                                 float64
}

// newLLMInvokeCmd is the internal command an llm.invoke or llm_task.invoke
// stage's task runs: it runs as a task so that the call has its own
// process, logs, retries and usage reports like any other stage, and so
// the key reaches only that process (held in the gateway's memory, never
// stored). Its stdin is the stage's input items as a JSON array.
func newLLMInvokeCmd() *cobra.Command {
	var f llmInvokeFlags
	cmd := &cobra.Command{
		Use:    "llm-invoke",
		Short:  "Call an OpenAI-compatible chat endpoint for a model stage (internal: run by the pipeline's llm.invoke task)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := io.ReadAll(cmd.InOrStdin())
			if err != nil {
				return err
			}
			item, err := llmInvoke(cmd.Context(), f, in)
			if err != nil {
				// The stage reads its failure from the task's stdout,
				// which the task record keeps.
				fmt.Fprintln(cmd.OutOrStdout(), err)
				if llmcall.Transient(err) {
					return exitStatus{code: exitTransient, msg: err.Error()}
				}
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), flows.Stringify(item))
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.kind, "kind", "llm.invoke", "the stage's name, the output item's kind")
	fl.StringVar(&f.baseURL, "base-url", "", "the endpoint's base URL (…/v1)")
	fl.StringVar(&f.model, "model", "", "the model to ask")
	fl.StringVar(&f.prompt, "prompt", "", "the prompt; the input items follow it as JSON")
	fl.StringVar(&f.keyEnv, "key-env", "", "the environment variable holding the API key")
	fl.StringVar(&f.schema, "output-schema", "", "JSON schema the output must satisfy (JSON text)")
	fl.StringVar(&f.schemaVersion, "schema-version", "v1", "the logical schema version the output item names")
	fl.IntVar(&f.validationRetries, "max-validation-retries", 1, "calls made again when the output fails the schema")
	fl.IntVar(&f.maxOutputTokens, "max-output-tokens", 0, "the reply's token limit (0: the server's)")
	fl.Float64Var(&f.temperature, "temperature", -1, "sampling temperature (-1: the server's)")
	return cmd
}

// llmInvoke makes the call f describes over the items in stdin and
// returns the stage's output item, shaped as Lobster's. Every call's usage
// is reported on the task's progress channel, so it is counted on the
// chain even when the output then fails its schema. As in Lobster, a
// schema miss asks again (--max-validation-retries, default 1), telling
// the model what was wrong.
func llmInvoke(ctx context.Context, f llmInvokeFlags, stdin []byte) (*flows.Object, error) {
	var schema map[string]any
	if f.schema != "" {
		if err := json.Unmarshal([]byte(f.schema), &schema); err != nil {
			return nil, fmt.Errorf("%s --output-schema is not a JSON object: %v", f.kind, err)
		}
	}
	if strings.TrimSpace(f.prompt) == "" {
		return nil, fmt.Errorf("%s requires --prompt or positional text", f.kind)
	}
	artifacts, err := llmArtifacts(stdin)
	if err != nil {
		return nil, fmt.Errorf("%s: its input items are not JSON: %v", f.kind, err)
	}
	req := llmcall.Request{BaseURL: f.baseURL, Model: f.model, Prompt: llmPrompt(f.prompt, artifacts), MaxOutputTokens: f.maxOutputTokens}
	if f.keyEnv != "" {
		if req.Key = os.Getenv(f.keyEnv); req.Key == "" {
			return nil, fmt.Errorf("%s: the key variable %s is empty in the task's environment; set it in the gateway's environment and list it under pipeline.secret_env in the gateway config", f.kind, f.keyEnv)
		}
	}
	if f.temperature >= 0 {
		req.Temperature = &f.temperature
	}
	// A call that hangs is a transient failure, retried like a 5xx; the
	// step's timeout, if any, bounds the whole stage.
	client := &http.Client{Timeout: llmCallTimeout}
	attempts := 0
	var total llmcall.Usage
	base := req.Prompt
	for try := 0; ; try++ {
		reply, err := llmcall.Call(ctx, client, req)
		attempts += reply.Attempts
		if err != nil {
			return nil, fmt.Errorf("%s request failed: %w", f.kind, err)
		}
		reportLLMUsage(reply.Usage, &total)
		data, format, verr := llmOutput(f.kind, schema, reply.Text)
		if verr != nil && try < f.validationRetries {
			req.Prompt = base + "\n\nYour previous reply failed the output schema (" + verr.Error() + "). Reply with JSON that satisfies it, and nothing else."
			continue
		}
		if verr != nil {
			return nil, verr
		}
		return llmItem(f, base, reply.ID, format, reply.Text, data, total, attempts), nil
	}
}

// exitTransient is sysexits' EX_TEMPFAIL, which the runner classifies
// as a transient failure: a model that stayed busy (429) or broken (5xx)
// through the stage's own calls is retried by the step's retry: policy,
// not diagnosed.
const exitTransient = 75

// llmCallTimeout bounds one HTTP call to the endpoint.
const llmCallTimeout = 5 * time.Minute

// llmItem is the stage's output item, with Lobster's fields; what Lobster
// takes from its cache and run state is always fresh here.
func llmItem(f llmInvokeFlags, prompt, runID, format, text string, data any, u llmcall.Usage, attempts int) *flows.Object {
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
	item.Set("kind", f.kind)
	item.Set("runId", nilIfEmpty(runID))
	item.Set("prompt", prompt)
	item.Set("model", f.model)
	item.Set("schemaVersion", f.schemaVersion)
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
func reportLLMUsage(u *llmcall.Usage, total *llmcall.Usage) {
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
