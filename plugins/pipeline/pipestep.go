package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// errStageWaits ends a pipeline's run within a pass: an exec stage's task
// was just asked for or is still running, or a gate parked the flow.
var errStageWaits = errors.New("the pipeline waits for an exec stage's task")

// pipe is one typed pipeline run within a pass: a pipeline: step's, a
// parallel branch's or a for_each sub-step's (lobster-format §7.2). Pure
// stages run here, in the controller; each exec stage is a task, keyed
// "<flow id>:<id>/stage<N>:<iteration>" (N from 0), a real process with
// its own logs, whose output is the next stage's items. Nothing between
// stages is stored: every pass runs the stages again from the first, pure
// ones being deterministic and exec ones answered by their finished tasks,
// so a pass after a restart reaches the same items.
type pipe struct {
	r  *run
	fr *frame
	// s is the workflow step the pipeline belongs to (a gate's step).
	s *flows.Step
	// id names the pipeline's tasks and gates: the step's prefixed id,
	// with "/<branch id>" or "/<sub-step id>" in a parallel or for_each.
	id string
	// name is the id its result and its errors carry.
	name string
	// iteration is the for_each item index, else 0.
	iteration int
	// results are what its text, stdin and env are templated against.
	results   map[string]flows.StepResult
	env       map[string]string
	cwd       string
	timeoutMs int
	retry     flows.Retry
	// gates says approve and ask may park the flow: only a top-level
	// pipeline: step's may, as in Lobster (§7.2, §7.4, §7.5).
	gates bool
	// pauseMs is a for_each batch pause, slept before the pipeline's
	// first task.
	pauseMs float64

	// What the run found.
	req       *sdk.TaskRequest // an exec stage's task to create
	running   *sdk.Task        // an exec stage's task still active
	ran       bool             // an exec stage of it has a task
	ended     time.Time        // when its last finished exec task ended
	gate      *parkedGate      // the gate it stopped at, to park the flow at
	cancelled bool             // a gate was denied: the run ends
	hostErr   error            // a state stage could not write the flow's state
	failTask  string           // the task of a failed exec stage
	// written are the stages as the text wrote them, stages the same
	// with their refs resolved, and counts how many items each stage
	// that ran produced (see stageCounts).
	written []flows.Stage
	stages  []flows.Stage
	counts  []int
}

// newPipe is the pipeline of step s of frame fr, run as id with results
// and the step's own env, directory, timeout and retry policy.
func (r *run) newPipe(fr *frame, s *flows.Step, id string, results map[string]flows.StepResult) *pipe {
	return &pipe{
		r: r, fr: fr, s: s, id: id, name: s.ID, results: results,
		env: r.taskEnv(fr, s, results), cwd: r.cwd(fr, s.Cwd),
		timeoutMs: s.TimeoutMs, retry: s.Retry,
	}
}

// exec runs the pipeline text over stdin resolved as its first items.
// The text is parsed as written, then its refs are resolved in the
// parsed words (flows.ResolveStages), so no value can add a stage; its
// exec stages get the step variables the text names (flows.RefsEnv), as
// a run: does. It returns the result when every stage ran, or the
// pipeline's failure; with both nil it waits: for p.req to be created,
// for p.running to end, or at p.gate (or p.cancelled, a gate denied);
// or the pass ends on p.hostErr, a write of the flow that failed.
func (p *pipe) exec(ctx context.Context, text string, stdin any) (*flows.StepResult, error) {
	written, err := flows.ParsePipeline(text)
	var stages []flows.Stage
	if err == nil {
		stages, err = flows.ResolveStages(written, p.fr.args, p.results)
	}
	if err != nil {
		//lint:ignore ST1005 the reference's message
		return nil, fmt.Errorf("Workflow step %s pipeline parse failed: %v", p.name, err)
	}
	p.written, p.stages = written, stages
	env := flows.RefsEnv(text, p.results)
	maps.Copy(env, p.env)
	p.env = env
	if err := p.r.loadPluginStages(ctx, stages); err != nil {
		p.hostErr = err
		return nil, nil
	}
	v, ok, err := flows.ResolveStdin(stdin, p.fr.args, p.results)
	if err != nil {
		return nil, err
	}
	var rendered strings.Builder
	pr, err := flows.RunPipeline(ctx, stages, 0, pipelineInput(v, ok), p.commands(), &rendered)
	p.counts = pr.Counts
	p.r.countStages(p, err)
	var unknown *flows.UnknownCommandError
	switch {
	case errors.As(err, &unknown):
		return nil, fmt.Errorf("%w (%s)", err, MissingStageHint(unknown.Name))
	case errors.Is(err, errStageWaits):
		return nil, nil
	case err != nil:
		return nil, err
	case pr.Halted >= 0:
		//lint:ignore ST1005 the reference's message
		return nil, fmt.Errorf("Workflow step %s halted before completion at pipeline stage %s", p.name, stages[pr.Halted].Name)
	}
	out := pipelineResult(p.name, pr.Items, rendered.String(), pr.Rendered)
	return &out, nil
}

// commands is the command set a pipeline runs with: flows.Builtins, exec,
// the gates, the state stages, the model stages, workflows.run, the stages other plugins provide and the
// stages of the configured stage path.
func (p *pipe) commands() flows.Commands {
	// A plugin's stage replaces an executable of its name; neither ever
	// replaces a built-in command.
	cmds := flows.Commands{}.With(p.externalCommands()...).With(p.pluginCommands()...)
	maps.Copy(cmds, flows.Builtins())
	return cmds.With(p.execCommand(), p.approveCommand(), p.askCommand()).With(p.stateCommands()...).With(p.llmCommands()...).With(p.workflowsRunCommand())
}

// pipelineStep runs pipeline: step s of frame fr: its stdin is the first
// items. The step waits (res nil) while a stage's task runs or at a gate.
func (r *run) pipelineStep(ctx context.Context, fr *frame, s *flows.Step) (res *flows.StepResult, failTask string, failErr, err error) {
	id := fr.prefix + s.ID
	p := r.newPipe(fr, s, id, fr.results)
	p.gates = true
	res, failErr = p.exec(ctx, s.Pipeline, s.Stdin)
	switch {
	case p.hostErr != nil:
		return nil, "", nil, p.hostErr
	case failErr != nil:
		return nil, p.failTask, failErr, nil
	case res != nil:
		return res, "", nil, nil
	case p.req != nil:
		return nil, "", nil, r.create(ctx, id, *p.req)
	case p.running != nil:
		return nil, "", nil, r.save(ctx, id)
	case p.gate != nil:
		return nil, "", nil, r.wait(ctx, *p.gate)
	case p.cancelled:
		return nil, "", nil, r.cancel(ctx, id)
	}
	return nil, "", nil, errors.New("a pipeline stopped without a task, a gate or a failure; this is a bug in the pipeline controller")
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
		res.Rendered = didRender
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
			return jsonText(items)
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

func (p *pipe) execCommand() *flows.Command {
	return &flows.Command{
		Name:        "exec",
		Description: "Run a program as a task: exec CMD ARGS… or exec --shell 'LINE'; --json parses stdout as JSON, --stdin raw|json|jsonl feeds the items",
		SideEffects: []string{"local_exec"},
		Run:         p.runExec,
	}
}

// stageID is the id of stage n of the pipeline: "<id>/stage<n>".
func (p *pipe) stageID(n int) string { return fmt.Sprintf("%s/stage%d", p.id, n) }

// runExec runs an exec stage: its task's stdout as items.
func (p *pipe) runExec(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
	spec, err := execSpec(call, p.written[call.Stage].Args)
	if err != nil {
		return flows.StageOutput{}, err
	}
	out, err := p.task(ctx, call, spec, nil)
	if err != nil {
		return flows.StageOutput{}, err
	}
	items, err := execItems(*out, call.Args.Has("json"))
	return flows.StageOutput{Items: items}, err
}

// taskKey is the idempotency key of the task call's stage runs.
func (p *pipe) taskKey(call *flows.Call) string {
	return taskKey(p.r.flow.ID, p.stageID(call.Stage), p.iteration)
}

// task asks for the task of the stage call runs, with spec and the
// pipeline's environment plus extra, or returns the stdout of its
// finished task. It returns errStageWaits while the task is asked for or
// runs, and the stage's failure when the task failed.
func (p *pipe) task(ctx context.Context, call *flows.Call, spec sdk.TaskSpec, extra map[string]string) (*string, error) {
	t, err := p.stageTask(ctx, call, spec, extra)
	if err != nil {
		return nil, err
	}
	stdout, err := execOutput(p.name, p.timeoutMs, t, spec)
	if err != nil {
		return nil, err
	}
	return &stdout, nil
}

// stageTask is task's finished task, for a stage that words its output or
// failure itself.
func (p *pipe) stageTask(_ context.Context, call *flows.Call, spec sdk.TaskSpec, extra map[string]string) (*sdk.Task, error) {
	r := p.r
	key := p.taskKey(call)
	t, ok := r.tasks[key]
	if !ok {
		spec.Env = maps.Clone(p.env)
		if spec.Env == nil {
			spec.Env = map[string]string{}
		}
		maps.Copy(spec.Env, extra)
		spec.Cwd, spec.Retry = p.cwd, retryPolicy(p.retry)
		if p.timeoutMs > 0 {
			spec.Timeout = sdk.Duration(millis(float64(p.timeoutMs)))
		}
		if p.pauseMs > 0 && !p.ran {
			pauseFirst(&spec, p.pauseMs)
		}
		label := p.stageID(call.Stage)
		if p.s.ForEach != nil {
			label = fmt.Sprintf("%s[%d]", label, p.iteration)
		}
		p.req = &sdk.TaskRequest{FlowID: r.flow.ID, IdempotencyKey: key, Label: label, Spec: spec}
		return nil, errStageWaits
	}
	p.ran = true
	if !t.Status.Terminal() {
		p.running = t
		return nil, errStageWaits
	}
	p.failTask = t.ID
	if t.EndedAt.After(p.ended) {
		p.ended = t.EndedAt
	}
	return t, nil
}
