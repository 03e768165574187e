package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/gateway"
)

// newLLMInvokeCmd is the internal command an llm.invoke or llm_task.invoke
// stage's task runs: it runs as a task so that the call has its own
// process, logs, retries and usage reports like any other stage, and so
// the key reaches only that process (held in the gateway's memory, never
// stored). Its stdin is the stage's input items as a JSON array.
func newLLMInvokeCmd() *cobra.Command {
	var f gateway.LLMInvocation
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
			item, err := gateway.InvokeLLM(cmd.Context(), f, in)
			if err != nil {
				// The stage reads its failure from the task's stdout,
				// which the task record keeps.
				fmt.Fprintln(cmd.OutOrStdout(), err)
				if gateway.TransientLLMError(err) {
					return exitStatus{code: exitTransient, msg: err.Error()}
				}
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), flows.Stringify(item))
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Kind, "kind", "llm.invoke", "the stage's name, the output item's kind")
	fl.StringVar(&f.BaseURL, "base-url", "", "the endpoint's base URL (…/v1)")
	fl.StringVar(&f.Model, "model", "", "the model to ask")
	fl.StringVar(&f.Prompt, "prompt", "", "the prompt; the input items follow it as JSON")
	fl.StringVar(&f.KeyEnv, "key-env", "", "the environment variable holding the API key")
	fl.StringVar(&f.Schema, "output-schema", "", "JSON schema the output must satisfy (JSON text)")
	fl.StringVar(&f.SchemaVersion, "schema-version", "v1", "the logical schema version the output item names")
	fl.IntVar(&f.ValidationRetries, "max-validation-retries", 1, "calls made again when the output fails the schema")
	fl.IntVar(&f.MaxOutputTokens, "max-output-tokens", 0, "the reply's token limit (0: the server's)")
	fl.Float64Var(&f.Temperature, "temperature", -1, "sampling temperature (-1: the server's)")
	return cmd
}

// exitTransient is sysexits' EX_TEMPFAIL, which the runner classifies
// as a transient failure: a model that stayed busy (429) or broken (5xx)
// through the stage's own calls is retried by the step's retry: policy,
// not diagnosed.
const exitTransient = 75
