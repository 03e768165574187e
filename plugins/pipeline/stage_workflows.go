package pipeline

import (
	"context"
	"strconv"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// workflowsRunCommand is Lobster's workflows.run (flows.ParseWorkflowRun):
// it reads a pull request through gh, run as a task like an exec stage,
// compares it with the state kept under the recipe's key where state.set
// and diff.last keep values, stores it, and emits the recipe's item. As
// diff.last does, it records its output in the flow's state before it
// stores the new value, so a resumed run reports the same comparison.
func (p *pipe) workflowsRunCommand() *flows.Command {
	return &flows.Command{
		Name:        "workflows.run",
		Description: "Run a named Lobster workflow: workflows.run --name github.pr.monitor|github.pr.monitor.notify --args-json '{\"repo\":\"o/r\",\"pr\":N}' (reads the PR through gh, reports what changed since the last run)",
		SideEffects: []string{"local_exec", "writes_state"},
		Run:         p.runWorkflow,
	}
}

func (p *pipe) runWorkflow(ctx context.Context, call *flows.Call) (flows.StageOutput, error) {
	if out, ok := p.recorded(call); ok {
		return out, nil
	}
	w, err := flows.ParseWorkflowRun(call.Args)
	if err != nil {
		return flows.StageOutput{}, err
	}
	slot, err := p.keySlot("workflows.run", w.Key)
	if err != nil {
		return flows.StageOutput{}, err
	}
	spec := sdk.TaskSpec{Argv: append([]string{"/bin/sh", "-c", ghScript, "gh"}, w.GhArgs...)}
	t, err := p.stageTask(ctx, call, spec, nil)
	if err != nil {
		return flows.StageOutput{}, err
	}
	stdout, err := p.ghOutput(t)
	if err != nil {
		return flows.StageOutput{}, err
	}
	current, err := flows.ParseGhOutput(stdout)
	if err != nil {
		return flows.StageOutput{}, err
	}
	before, err := p.readState(ctx, slot)
	if err != nil {
		return flows.StageOutput{}, err
	}
	item, err := w.Output(before, current, flows.StateChanged(before, current))
	if err != nil {
		return flows.StageOutput{}, err
	}
	return p.store(ctx, call, slot, current, []any{item})
}

// ghScript runs gh with the task's arguments. A task's record keeps its
// stdout, not its stderr, so when gh fails the script prints gh's stderr
// (its stdout when the stderr is empty) as the stage's account of the
// failure, as Lobster words it; the stderr also stays in the task's log.
// No gh on PATH is exit 127, the shell's own code for a missing command.
const ghScript = `command -v gh >/dev/null 2>&1 || exit 127
err=$(mktemp) || exit 1
out=$(gh "$@" 2>"$err"); code=$?
cat "$err" >&2
if [ "$code" -ne 0 ] && [ -s "$err" ]; then cat "$err"; else printf '%s\n' "$out"; fi
rm -f "$err"
exit "$code"`

// ghOutput is what gh printed, or Lobster's error for a gh that is
// missing or failed.
func (p *pipe) ghOutput(t *sdk.Task) (string, error) {
	var res sdk.Result
	if t.Result != nil {
		res = *t.Result
	}
	switch {
	case t.Status == sdk.TaskSucceeded:
		r, err := shellResult(p.name, res)
		if err != nil {
			return "", err
		}
		return *r.Stdout, nil
	case t.Status != sdk.TaskFailed:
		_, err := taskResult(p.name, p.timeoutMs, t)
		return "", err
	case t.ExitCode == nil:
		return "", flows.GhFailed("null", firstNonEmpty(res.Stdout, lastError(t)))
	case *t.ExitCode == 127:
		return "", flows.ErrGhNotFound
	}
	return "", flows.GhFailed(strconv.Itoa(*t.ExitCode), res.Stdout)
}
