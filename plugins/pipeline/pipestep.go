package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// errStageWaits ends a pass inside a pipeline step: an exec stage's task
// was just created or is still running.
var errStageWaits = errors.New("the pipeline waits for an exec stage's task")

// pipelineStep runs pipeline: step s of frame fr (lobster-format §7.2):
// its text templated and parsed, its stdin as the first items. Pure
// stages run here, in the controller; each exec stage is a task (key
// "<flow id>:<step id>/stage<N>:0", N from 0), a real process with its own
// logs, whose output is the next stage's items. Nothing between stages is
// stored: every pass runs the stages again from the first, pure ones
// being deterministic and exec ones answered by their finished tasks, so a
// pass after a restart reaches the same items. The step waits (res nil)
// while a stage's task runs.
func (r *run) pipelineStep(ctx context.Context, fr *frame, s *flows.Step) (res *flows.StepResult, failTask string, failErr, err error) {
	stages, perr := flows.ParsePipeline(flows.ResolveTemplate(s.Pipeline, fr.args, fr.results))
	if perr != nil {
		//lint:ignore ST1005 the reference's message
		return nil, "", fmt.Errorf("Workflow step %s pipeline parse failed: %v", s.ID, perr), nil
	}
	v, ok, serr := flows.ResolveStdin(s.Stdin, fr.args, fr.results)
	if serr != nil {
		return nil, "", serr, nil
	}
	ex := &execStage{r: r, fr: fr, s: s}
	var rendered strings.Builder
	pr, rerr := flows.RunPipeline(ctx, stages, 0, pipelineInput(v, ok), flows.Builtins().With(ex.command(), ex.approveCommand(), ex.askCommand()), &rendered)
	switch {
	case errors.Is(rerr, errStageWaits):
		return nil, "", nil, ex.hostErr
	case rerr != nil:
		return nil, ex.failTask, rerr, nil
	case pr.Halted >= 0:
		//lint:ignore ST1005 the reference's message
		return nil, "", fmt.Errorf("Workflow step %s halted before completion at pipeline stage %s", s.ID, stages[pr.Halted].Name), nil
	}
	out := pipelineResult(s.ID, pr.Items, rendered.String(), pr.Rendered)
	return &out, "", nil, nil
}

// pipelineInput is a step's resolved stdin as a pipeline's first items:
// none without stdin, an array's elements, else the one value.
func pipelineInput(v any, ok bool) []any {
	switch t := v.(type) {
	case nil:
		if !ok {
			return nil
		}
	case []any:
		return t
	}
	return []any{v}
}

// pipelineResult is a pipeline step's result (lobster-format §5.4):
// stdout is what a renderer printed, else the items as text (strings
// joined by newlines, one item as itself or its JSON, else the JSON
// array); json is the one item, the array of several, or for none what
// the rendered text parses to.
func pipelineResult(id string, items []any, rendered string, didRender bool) flows.StepResult {
	res := flows.StepResult{ID: id}
	text := rendered
	if !didRender {
		text = itemsText(items)
	}
	res.Stdout = &text
	switch len(items) {
	case 0:
		res.JSON, res.HasJSON = flows.ParseJSON(rendered)
	case 1:
		res.JSON, res.HasJSON = items[0], true
	default:
		res.JSON, res.HasJSON = items, true
	}
	return res
}

// itemsText serialises items as a pipeline step's stdout.
func itemsText(items []any) string {
	lines := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			if len(items) == 1 {
				return jsonText(it)
			}
			b, _ := json.Marshal(items)
			return string(b)
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

// execStage is the exec command of one pass over a pipeline step.
type execStage struct {
	r        *run
	fr       *frame
	s        *flows.Step
	hostErr  error  // a host call failed while the stage waited
	failTask string // the task of a failed exec stage
}

func (e *execStage) command() *flows.Command {
	return &flows.Command{
		Name:        "exec",
		Description: "Run a program as a task: exec CMD ARGS… or exec --shell 'LINE'; --json parses stdout as JSON, --stdin raw|json|jsonl feeds the items",
		SideEffects: []string{"local_exec"},
		Run:         e.run,
	}
}

// run creates the stage's task, or turns its finished task into items.
func (e *execStage) run(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
	spec, err := execSpec(call)
	if err != nil {
		return flows.StageOutput{}, err
	}
	r, fr, s := e.r, e.fr, e.s
	id := fr.prefix + s.ID
	key := taskKey(r.flow.ID, fmt.Sprintf("%s/stage%d", id, call.Stage), 0)
	t, ok := r.tasks[key]
	if !ok {
		spec.Env = r.taskEnv(fr, s, fr.results)
		spec.Cwd = r.cwd(fr, s.Cwd)
		spec.Retry = retryPolicy(s.Retry)
		if s.TimeoutMs > 0 {
			spec.Timeout = sdk.Duration(millis(float64(s.TimeoutMs)))
		}
		label := fmt.Sprintf("%s/stage%d", id, call.Stage)
		e.hostErr = r.create(ctx, id, sdk.TaskRequest{FlowID: r.flow.ID, IdempotencyKey: key, Label: label, Spec: spec})
		return flows.StageOutput{}, errStageWaits
	}
	if !t.Status.Terminal() {
		e.hostErr = r.save(ctx, id)
		return flows.StageOutput{}, errStageWaits
	}
	e.failTask = t.ID
	stdout, err := execOutput(s, t, spec)
	if err != nil {
		return flows.StageOutput{}, err
	}
	items, err := execItems(stdout, call.Args.Has("json"))
	return flows.StageOutput{Items: items}, err
}

// HasCommand reports whether a pipeline stage may name the command:
// flows.Builtins, exec, approve and ask.
func HasCommand(name string) bool {
	_, ok := flows.Builtins()[name]
	return ok || name == "exec" || name == "approve" || name == "ask"
}
