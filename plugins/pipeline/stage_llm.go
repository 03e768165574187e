package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// llmCommands are Lobster's model stages, llm.invoke and llm_task.invoke.
// Each runs as a task executing this binary's hidden llm-invoke command,
// so the call is a process with its own logs and its usage reports land
// on the chain as any task's do; the key reaches that process alone.
func (p *pipe) llmCommands() []*flows.Command {
	desc := "Ask an OpenAI-compatible chat endpoint: --prompt TEXT (the items follow as JSON), --model, --base-url, --secret-env NAME (the key), --output-schema JSON|FILE; outputs {kind, status, prompt, model, output:{format,text,data}, usage, attemptCount}"
	cmds := make([]*flows.Command, 0, 2)
	for _, kind := range []string{"llm.invoke", "llm_task.invoke"} {
		cmds = append(cmds, &flows.Command{
			Name: kind, Description: desc, SideEffects: []string{"calls_model"},
			Run: func(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
				return p.runLLM(ctx, kind, call)
			},
		})
	}
	return cmds
}

// llmFlags are the stage flags passed on to llm-invoke as they are,
// once checkLLMFlag accepts them.
var llmFlags = []string{"max-validation-retries", "temperature", "max-output-tokens", "schema-version"}

// checkLLMFlag refuses a value of flag k llm-invoke could not parse, so
// the stage says what is wrong before a task exists.
func checkLLMFlag(k, v string) error {
	switch k {
	case "max-validation-retries", "max-output-tokens":
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return fmt.Errorf("must be a whole number, 0 or more (got %q)", v)
		}
	case "temperature":
		if x, err := strconv.ParseFloat(v, 64); err != nil || x < 0 {
			return fmt.Errorf("must be a number, 0 or more (got %q)", v)
		}
	}
	return nil
}

func (p *pipe) runLLM(ctx context.Context, kind string, call *flows.Call) (flows.StageOutput, error) {
	spec, err := p.llmSpec(kind, call)
	if err != nil {
		return flows.StageOutput{}, err
	}
	t, err := p.stageTask(ctx, call, spec, nil)
	if err != nil {
		return flows.StageOutput{}, err
	}
	var res sdk.Result
	if t.Result != nil {
		res = *t.Result
	}
	out := strings.TrimSpace(res.Stdout)
	if t.Status != sdk.TaskSucceeded {
		if t.Status != sdk.TaskFailed || out == "" {
			_, err := taskResult(p.name, p.timeoutMs, t)
			return flows.StageOutput{}, err
		}
		return flows.StageOutput{}, errors.New(out)
	}
	item, err := flows.DecodeJSON([]byte(out))
	if err != nil {
		return flows.StageOutput{}, fmt.Errorf("%s: its task printed no output item: %v", kind, err)
	}
	return flows.StageOutput{Items: []any{item}}, nil
}

// llmSpec is the task of a model stage: this binary's llm-invoke with the
// stage's flags, the config's defaults, and the items as JSON on stdin.
// A --secret-env name the config does not list is refused here, before
// any task exists.
func (p *pipe) llmSpec(kind string, call *flows.Call) (sdk.TaskSpec, error) {
	var spec sdk.TaskSpec
	o := p.r.opts
	exe, err := os.Executable()
	if err != nil {
		return spec, fmt.Errorf("%s: cannot find the flowgate binary to run the call: %v", kind, err)
	}
	prompt, ok := call.Args.String("prompt")
	if !ok {
		prompt = strings.Join(call.Args.Positional, " ")
	}
	if strings.TrimSpace(prompt) == "" {
		return spec, fmt.Errorf("%s requires --prompt or positional text", kind)
	}
	argv := []string{exe, "llm-invoke", "--kind", kind, "--prompt=" + prompt}
	for _, kv := range [][2]string{{"base-url", o.LLMBaseURL}, {"model", o.LLMModel}} {
		k, def := kv[0], kv[1]
		if v, ok := call.Args.String(k); ok {
			def = v
		}
		if def == "" {
			return spec, fmt.Errorf("%s needs --%s, or pipeline.llm.%s in the gateway config", kind, k, strings.ReplaceAll(k, "-", "_"))
		}
		argv = append(argv, "--"+k+"="+def)
	}
	for _, k := range llmFlags {
		v, ok := call.Args.Named[k]
		if !ok {
			continue
		}
		text := fmt.Sprint(v)
		if err := checkLLMFlag(k, text); err != nil {
			return spec, fmt.Errorf("%s --%s %w", kind, k, err)
		}
		argv = append(argv, "--"+k+"="+text)
	}
	schema, err := p.llmSchema(kind, call.Args)
	if err != nil {
		return spec, err
	}
	if schema != "" {
		argv = append(argv, "--output-schema="+schema)
	}
	if name, ok := call.Args.String("secret-env"); ok {
		if err := CheckStageSecret(o.SecretEnv, flows.Stage{Name: kind, Args: call.Args}); err != nil {
			return spec, err
		}
		spec.SecretEnv = []string{name}
		argv = append(argv, "--key-env="+name)
	}
	spec.Argv = argv
	items := call.Items
	if items == nil {
		items = []any{}
	}
	spec.Input = flows.Stringify(items)
	return spec, nil
}

// llmSchema is the stage's --output-schema (or --schema) as compact JSON:
// the text itself when it is a JSON object, else the file it names,
// relative to the step's directory. The schema is checked here, so a bad
// one fails the stage before any call is paid for.
func (p *pipe) llmSchema(kind string, args flows.StageArgs) (string, error) {
	text, ok := args.String("output-schema")
	if !ok {
		text, ok = args.String("schema")
	}
	if !ok {
		return "", nil
	}
	raw := []byte(text)
	if !strings.HasPrefix(strings.TrimSpace(text), "{") {
		path := text
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.cwd, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("%s --output-schema: %v; give a JSON object or a schema file", kind, err)
		}
		raw = b
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return "", fmt.Errorf("%s --output-schema is not a JSON object: %v", kind, err)
	}
	if err := flows.CheckSchema(schema); err != nil {
		return "", fmt.Errorf("%s --output-schema: %v", kind, err)
	}
	b, _ := json.Marshal(schema)
	return string(b), nil
}

// IsModelStage reports whether name is one of the model stages, whose
// --secret-env CheckStageSecret checks.
func IsModelStage(name string) bool { return name == "llm.invoke" || name == "llm_task.invoke" }

// CheckStageSecret refuses a model stage whose --secret-env names a
// variable allowed (the config's pipeline.secret_env) does not list, so a
// workflow file cannot have the gateway hand it any variable it likes.
// pipeline validate and run --dry-run check it before a run; the stage
// checks it again when it runs.
func CheckStageSecret(allowed []string, st flows.Stage) error {
	if !IsModelStage(st.Name) {
		return nil
	}
	v, ok := st.Args.Named["secret-env"]
	if !ok {
		return nil
	}
	name, _ := v.(string)
	if slices.Contains(allowed, name) {
		return nil
	}
	listed := "none"
	if len(allowed) > 0 {
		listed = strings.Join(allowed, ", ")
	}
	return fmt.Errorf("%s --secret-env %s: the gateway config does not list %q under pipeline.secret_env (listed: %s); add it there to let model stages use it", st.Name, name, name, listed)
}
