package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/llmcall"
	"github.com/flowgate/flowgate/sdk/progress"
)

// llmInvokeFlags are the hidden llm-invoke command's flags: what the
// pipeline's llm.invoke and llm_task.invoke stages resolved.
type llmInvokeFlags struct {
	kind, baseURL, model, prompt, keyEnv, schema string
	validationRetries, maxOutputTokens           int
	temperature                                  float64
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
	fl.IntVar(&f.validationRetries, "max-validation-retries", 1, "calls made again when the output fails the schema")
	fl.IntVar(&f.maxOutputTokens, "max-output-tokens", 0, "the reply's token limit (0: the server's)")
	fl.Float64Var(&f.temperature, "temperature", -1, "sampling temperature (-1: the server's)")
	return cmd
}

// llmInvoke makes the call f describes over the items in stdin and
// returns the stage's output item. Every call's usage is reported on the
// task's progress channel, so it is counted on the chain even when the
// output then fails its schema.
func llmInvoke(ctx context.Context, f llmInvokeFlags, stdin []byte) (*flows.Object, error) {
	var schema map[string]any
	if f.schema != "" {
		if err := json.Unmarshal([]byte(f.schema), &schema); err != nil {
			return nil, fmt.Errorf("%s --output-schema is not a JSON object: %v", f.kind, err)
		}
	}
	req := llmcall.Request{BaseURL: f.baseURL, Model: f.model, Prompt: llmPrompt(f.prompt, stdin), MaxOutputTokens: f.maxOutputTokens}
	if f.keyEnv != "" {
		if req.Key = os.Getenv(f.keyEnv); req.Key == "" {
			return nil, fmt.Errorf("%s: the key variable %s is empty in the task's environment; set it in the gateway's environment and list it under pipeline.secret_env in the gateway config", f.kind, f.keyEnv)
		}
	}
	if f.temperature >= 0 {
		req.Temperature = &f.temperature
	}
	client := &http.Client{}
	attempts := 0
	var total llmcall.Usage
	for try := 0; ; try++ {
		reply, err := llmcall.Call(ctx, client, req)
		attempts += reply.Attempts
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.kind, err)
		}
		reportLLMUsage(reply.Usage, &total)
		data, format, verr := llmOutput(f.kind, schema, reply.Text)
		if verr != nil && try < f.validationRetries {
			continue
		}
		if verr != nil {
			return nil, verr
		}
		out := flows.NewObject(3)
		out.Set("format", format)
		out.Set("text", reply.Text)
		out.Set("data", data)
		item := flows.NewObject(8)
		item.Set("kind", f.kind)
		item.Set("status", "completed")
		item.Set("prompt", req.Prompt)
		item.Set("model", f.model)
		item.Set("output", out)
		item.Set("usage", usageObject(total))
		item.Set("attemptCount", float64(attempts))
		return item, nil
	}
}

// llmPrompt is the prompt text followed by the stage's input items as
// JSON, when there are any.
func llmPrompt(prompt string, stdin []byte) string {
	items := strings.TrimSpace(string(stdin))
	if items == "" || items == "[]" || items == "null" {
		return prompt
	}
	if prompt == "" {
		return items
	}
	return prompt + "\n\nInput:\n" + items
}

// llmOutput is the reply as the output's data: with a schema, the JSON the
// reply holds, checked against it; without, the text itself.
func llmOutput(kind string, schema map[string]any, text string) (any, string, error) {
	if schema == nil {
		if v, ok := flows.ParseJSON(text); ok {
			return v, "json", nil
		}
		return text, "text", nil
	}
	v, err := flows.DecodeJSON([]byte(strings.TrimSpace(text)))
	if err != nil {
		return nil, "", fmt.Errorf("%s output is not JSON, so it cannot meet --output-schema: %v", kind, err)
	}
	if path, msg := flows.SchemaViolation(schema, v); msg != "" {
		return nil, "", fmt.Errorf("%s output failed schema validation at %s: %s", kind, path, msg)
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

func usageObject(u llmcall.Usage) *flows.Object {
	o := flows.NewObject(4)
	o.Set("promptTokens", float64(u.PromptTokens))
	o.Set("completionTokens", float64(u.CompletionTokens))
	o.Set("totalTokens", float64(u.TotalTokens))
	if u.Cost != nil {
		o.Set("cost", *u.Cost)
	}
	return o
}
